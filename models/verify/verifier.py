"""The support check every answer passes before it is returned.

    candidate (query, short answer, the evidence it was generated from)
        -> lexical support   the answer's numbers, dates and words occur in the evidence (lexical.py)
        -> similarity        the best supporting sentence is about the question (shared embedder)
        -> answer reader     optional, a trained cross-encoder's P(right) for (question + answer, evidence passage)
        -> LLM yes/no        optional, db3's p_check style: "is the answer supported by the context?"
        -> Decision          the answer, or "i don't know", with the check that decided (a `Stop` code), the
                             reason rendered from it and every score (decision.py)

Scores are computed whatever the thresholds, and `decide` turns scores into a decision without touching
a model, so scripts/sweep_verifier.py can replay saved traces under other thresholds. A failure while
checking one candidate rejects that candidate only, with the error as its reason.
"""
from __future__ import annotations

import logging
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence

import numpy as np

from models.deadline import Deadline
from models.pathways import Pathway, named
from models.types import IDK, INVALID
from models.verify.config import VerifierConfig
from models.verify.decision import Decision, Stop
from models.verify.gate import BREAK_EVEN, GATES, CalibratedGate, candidate_answer, features
from models.verify.lexical import normalize, question_overlap, support
from models.verify.span import KIND, as_asked, extract, question_kind, stands_alone, value_fits

log = logging.getLogger(__name__)

# A premise is contradicted when an evidence sentence about the question's subject negates something.
_NEGATION = re.compile(r"\b(?:never|not|no|none|didn't|did not|hasn't|has not|haven't|have not|wasn't|isn't|"
                       r"doesn't|does not|no longer|neither|nor)\b", re.IGNORECASE)
_SCOPES = {"evidence": "lexical", "chunk": "chunk", "sentence": "sentence"}  # scope -> score name
_CHOICE = re.compile(r"\b(?:or|between)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Candidate:
    """An answer before it is returned, with the evidence it was generated from."""

    query: str
    answer: str
    evidence: tuple[str, ...]
    pathway: Pathway  # how it was made (models/pathways.py): a source's own value, or a model's answer
    facts: int = 0  # how many leading evidence texts are structured facts (public data, KG), not web text
    calls: tuple = ()  # a source's own value: the program that produced it, as parsed (`describe_calls`)
    # what else the pipeline knows about this answer, copied into the scores for the calibrated gate: the answer's
    # mean / min token log-probability, the sampled answers, the KG program's log-probability and outcome, the
    # domain, the static/dynamic prediction (`models/answering/verify_step.py` fills it)
    signals: Mapping[str, Any] = field(default_factory=dict)


class Verifier(Protocol):
    def verify(self, candidates: Sequence[Candidate], deadline: Deadline | None = None) -> list[Decision]:
        """One decision per candidate, in order; never raises for one bad candidate."""


class SupportVerifier:
    """Lexical support + embedding similarity (+ an optional LLM yes/no check), thresholds from config.

    Args:
        config: the profile's `verifier` section.
        embedder: anything with `encode(texts, is_query=...)` returning unit-norm rows; None = no similarity.
        generator, prompts: for the LLM check (only when `config.llm_check`).
    """

    def __init__(self, config: VerifierConfig, embedder=None, generator=None, prompts=None,
                 gate: CalibratedGate | None = None, reader=None):
        if config.support_scope not in _SCOPES:
            raise ValueError(f"verifier.support_scope must be one of {sorted(_SCOPES)}, got {config.support_scope!r}")
        if config.gate == "reader" and reader is None:
            raise ValueError("verifier.gate: reader needs the answer reader (verifier.reader: a folder `make verifier` "
                             "trained)")
        self.config = config
        self.gate = gate if gate is not None else load_gate(config)
        self.reader = reader  # an `AnswerReader` (verify/reader.py), or None: candidates are not read
        self.embedder = embedder
        self.generator = generator
        self.prompts = prompts
        if config.llm_check:
            if generator is None or prompts is None:
                raise ValueError("verifier.llm_check needs the generator and the prompt library")
            prompts.get(config.llm_check_prompt)  # fail at start-up on a missing template

    def verify(self, candidates: Sequence[Candidate], deadline: Deadline | None = None) -> list[Decision]:
        scored: list[dict | Exception] = []
        for candidate in candidates:
            try:
                scored.append(self.scores(candidate))
            except Exception as exc:  # noqa: BLE001 - one bad item costs that item, never the batch
                log.exception("verifier failed on %r", candidate.answer)
                scored.append(exc)
        if self.reader is not None:
            self._read(candidates, scored, deadline)
        decisions = []
        for candidate, scores in zip(candidates, scored):
            try:
                if isinstance(scores, Exception):
                    raise scores
                decisions.append(decide(scores, self.config, self.gate))
            except Exception as exc:  # noqa: BLE001
                if not isinstance(scores, Exception):
                    log.exception("verifier failed on %r", candidate.answer)
                decisions.append(Decision(IDK, False, Stop.VERIFIER_FAILED,
                                          details={"error": f"{type(exc).__name__}: {exc}"}))
        if self.config.llm_check:
            decisions = self._llm_check(candidates, decisions, deadline)
        return decisions

    def scores(self, candidate: Candidate) -> dict:
        """Every score `decide` needs, for one candidate (model calls: the embedder only), with the agreement of
        the sampled answers and how many evidence texts state the answer (for the calibrated gate)."""
        scores = self._scores(candidate)
        samples = candidate.signals.get("samples")
        if samples:
            scores["samples"] = len(samples)
        answer = candidate_answer(scores)
        if answer:
            needle = normalize(answer)
            scores["stated_by"] = sum(needle in normalize(text or "") for text in candidate.evidence) if needle else 0
            if samples:
                scores["agreement"] = round(sum(bool(needle) and needle in normalize(s or "") for s in samples)
                                            / len(samples), 4)
        return scores

    def _scores(self, candidate: Candidate) -> dict:
        answer = (candidate.answer or "").strip()
        scores: dict[str, Any] = {"candidate": answer, "source": candidate.pathway.name}
        scores.update((k, v) for k, v in candidate.signals.items() if k != "samples")  # (their count: `scores`)
        if answer == INVALID:
            scores["contradiction"] = contradicts_premise(candidate.query, candidate.evidence)
        kind = question_kind(candidate.query)
        computed = self._computed(candidate, kind, answer) if answer != INVALID else None
        if computed is not None:
            scores.update(kind=kind, model_answer=answer,
                          computed={"answer": computed.answer, "reason": computed.reason, **computed.trace})
            if computed.answer:
                scores["candidate"] = computed.answer
            return scores
        if not answer or answer in (IDK, INVALID):
            return scores
        if self.config.short_spans and candidate.pathway.own_value:
            # a program's or statement's value: exact, but it must be the kind of answer the question asks for
            answer = scores["candidate"] = as_asked(kind, answer)
            scores.update(kind=kind, refusal=value_fits(kind, answer, candidate.query, candidate.calls))
        elif self.config.short_spans:
            # check (and return) the span the question asks for, not the model's sentence around it
            span = extract(candidate.query, answer, candidate.evidence, candidate.facts)
            whole = support(answer, candidate.query, candidate.evidence)
            scores.update(kind=span.kind, span=span.text, refusal=span.refusal, full_chunk=round(whole.chunk_share, 4))
            if span.refusal or not span.text:
                return scores
            answer = scores["candidate"] = span.text
            scores["alone"] = stands_alone(span, candidate.evidence)
        found = support(answer, candidate.query, candidate.evidence)
        scores["overlap"] = question_overlap(candidate.query, found, candidate.evidence)
        scores.update(claims=len(found.claims), lexical=round(found.share, 4), novel=len(found.novel),
                      chunk=round(found.chunk_share, 4), sentence=round(found.sentence_share, 4),
                      missing=list(found.missing), choice=_is_choice(candidate.query, answer))
        scores["similarity"], scores["supporting"] = self._similarity(candidate.query, answer, found.sentences)
        return scores

    def _computed(self, candidate: Candidate, kind: str, answer: str):
        """The answer computed from the evidence in code for a choice, yes/no or count question
        (`verify/checkable.py`), or None for other questions. A source's own value (the KG's) is all structured
        evidence; for a count, an own value that lists things is counted."""
        if not (self.config.short_spans and self.config.computed_answers):
            return None
        compute = KIND[kind].compute
        if compute is None or candidate.pathway.computes:  # the source computed it: a count, sum or comparison
            return None
        direct = candidate.pathway.own_value
        facts = len(candidate.evidence) if direct else candidate.facts
        return compute(candidate.query, candidate.evidence, facts, answer if direct else "")

    def _read(self, candidates: Sequence[Candidate], scored: list, deadline: Deadline | None) -> None:
        """The answer reader's P(right) into the scores (`reader`) of every candidate of a pathway it reads that has
        an answer to keep, in one batch. With no time left, or when the reader fails, they are left unread (the
        reader gate then keeps the rules' decision, the calibrated gate sees `has_reader` 0)."""
        chosen = [i for i, s in enumerate(scored) if isinstance(s, dict) and candidate_answer(s) is not None
                  and s.get("source") in self.config.reader_pathways]
        if not chosen:
            return
        if deadline is not None and deadline.expired():
            log.warning("answer reader skipped for %d candidates: the deadline has passed", len(chosen))
            return
        try:
            found = self.reader.probabilities([(candidates[i].query, candidate_answer(scored[i]), candidates[i].evidence)
                                               for i in chosen])
        except Exception:  # noqa: BLE001 - a broken reader costs its feature, never the answers
            log.exception("answer reader failed for %d candidates", len(chosen))
            return
        for i, p in zip(chosen, found):
            scored[i]["reader"] = round(float(p), 4)

    def _similarity(self, query: str, answer: str, sentences: Sequence[str]) -> tuple[float | None, str]:
        if self.embedder is None or not sentences:
            return (None if self.embedder is None else 0.0), (sentences[0] if sentences else "")
        vectors = self.embedder.encode([f"{query} {answer}", *sentences])
        cosines = vectors[1:] @ vectors[0]
        best = int(np.argmax(cosines))
        return round(float(cosines[best]), 4), sentences[best]

    def _llm_check(self, candidates, decisions, deadline):
        from models.llm.generator import GenerationRequest

        template = self.prompts.get(self.config.llm_check_prompt)
        asks = [i for i, d in enumerate(decisions) if d.accepted and d.answer not in (IDK, INVALID)]
        requests = [GenerationRequest(template.render(context="\n".join(candidates[i].evidence)[:4000],
                                                      query=candidates[i].query, answer=decisions[i].answer),
                                      max_new_tokens=3) for i in asks]
        try:
            outputs = self.generator.generate(requests, deadline=deadline) if requests else []
        except Exception as exc:  # noqa: BLE001
            log.exception("LLM support check failed")
            outputs = [f"error {exc}"] * len(asks)
        decisions = list(decisions)
        for i, output in zip(asks, outputs):
            said_yes = (output or "").strip().lower().startswith("yes")
            d = decisions[i]
            scores = {**d.scores, "llm_check": (output or "").strip()[:20]}
            decisions[i] = replace(d, scores=scores) if said_yes else \
                Decision(IDK, False, Stop.LLM_CHECK, scores, d.supporting)
        return decisions


def load_gate(config: VerifierConfig) -> CalibratedGate | None:
    """The fitted gate `verifier.gate_path` names when `verifier.gate` is calibrated, else None."""
    if config.gate not in GATES:
        raise ValueError(f"verifier.gate must be one of {list(GATES)}, got {config.gate!r}")
    if config.gate in ("rules", "reader"):
        return None
    if not config.gate_path:
        raise ValueError("verifier.gate: calibrated needs verifier.gate_path (a gate fitted by scripts/fit_gate.py)")
    from models.paths import REPO_ROOT

    path = Path(config.gate_path)
    return CalibratedGate.load(path if path.is_absolute() else REPO_ROOT / path)


def decide(scores: Mapping[str, Any], config: VerifierConfig, gate: CalibratedGate | None = None) -> Decision:
    """The decision for saved scores: `config`'s thresholds, then, with a calibrated `gate`, P(correct) >= 0.5
    over the same scores decides between the candidate and "i don't know"; under `verifier.gate: reader` the
    answer reader's P(right) >= 0.5 decides where it read the candidate (pure: the sweep and the gate's fitting
    replay it)."""
    rules = decide_by_rules(scores, config)
    if not config.enabled:
        return rules
    answer = candidate_answer(scores)
    if answer is None:  # no answer of the asked kind to keep (or the model abstained): the rules' decision
        return rules
    if config.gate == "reader":
        return _decide_by_reader(scores, rules, answer)
    if gate is None:
        return rules
    values = features(scores, rules.accepted, rules.stop)
    p = gate.probability(values)
    why = ", ".join(f"{name} {weight:+.2f}" for name, weight in gate.contributions(values, 3))
    return _gated(answer, gate.answers(p), Stop.CALIBRATED, {**scores, "gate_p": round(p, 4)}, rules,
                  {"p": p, "why": why})


def _decide_by_reader(scores: Mapping[str, Any], rules: Decision, answer: str) -> Decision:
    """The reader gate: the candidate when the reader's P(right) >= 0.5, else "i don't know"; the rules' decision
    where the reader did not read it."""
    p = scores.get("reader")
    if p is None:
        return rules
    return _gated(answer, float(p) >= BREAK_EVEN, Stop.READER, scores, rules, {"p": float(p)})


def _gated(answer: str, keep: bool, stop: Stop, scores: Mapping[str, Any], rules: Decision,
           details: Mapping[str, Any]) -> Decision:
    """A gate's decision over the rules': the candidate or "i don't know", the rules' verdict kept in the scores and
    named in the reason."""
    gated = {**scores, "rules": {"accepted": rules.accepted, "reason": rules.reason, "stop": rules.stop.value}}
    details = {**details, "rules": rules.reason, "side": ">=" if keep else "<"}
    if keep:
        return Decision(answer, True, stop, gated, rules.supporting or scores.get("supporting", "") or "", details)
    return Decision(IDK, False, stop, gated, details=details)


def decide_by_rules(scores: Mapping[str, Any], config: VerifierConfig) -> Decision:
    """The decision for saved scores under `config`'s thresholds alone (the `rules` gate): the first check that
    stops the candidate, or the one that accepts it, with the values its reason shows."""
    answer = scores.get("candidate") or IDK
    supporting = scores.get("supporting", "") or ""
    pathway = _pathway(scores)
    computed = scores.get("computed")
    if computed is not None and config.enabled:  # a choice, yes/no or count question, answered in code
        why = {"reason": computed["reason"]}
        if computed.get("answer"):
            return Decision(computed["answer"], True, Stop.COMPUTED, scores, computed["reason"], why)
        return Decision(IDK, False, Stop.NOT_COMPUTED, scores, details=why)
    if answer == IDK:
        return Decision(IDK, True, Stop.ABSTAINED, scores)
    if not config.enabled:
        return Decision(answer, True, Stop.DISABLED, scores, supporting)
    if answer == INVALID:
        if config.invalid_needs_evidence and not scores.get("contradiction"):
            return Decision(IDK, False, Stop.PREMISE_UNCONTRADICTED, scores)
        return Decision(INVALID, True, Stop.PREMISE_CONTRADICTED, scores, scores.get("contradiction", ""))
    if scores.get("refusal"):
        return Decision(IDK, False, Stop.REFUSAL, scores, details={"refusal": scores["refusal"]})
    if "span" in scores and not scores["span"]:
        return Decision(IDK, False, Stop.NO_SPAN, scores, details={"kind": scores.get("kind")})
    if not scores.get("claims"):
        return Decision(IDK, False, Stop.UNCHECKABLE, scores)
    if not scores.get("novel"):
        if scores.get("choice") and (config.accept_choices or pathway.computes):
            pass  # (an SQL choice: the statement compared the options; its checks require each one in it)
        elif scores.get("choice"):
            return Decision(IDK, False, Stop.CHOICE, scores)
        elif config.reject_restatements:
            return Decision(IDK, False, Stop.RESTATEMENT, scores)
    lexical = float(scores.get(_SCOPES[config.support_scope]) or 0.0)
    if lexical < config.min_lexical_support:
        return Decision(IDK, False, Stop.LEXICAL, scores, details={
            "scope": config.support_scope, "lexical": lexical, "min": config.min_lexical_support,
            "missing": list(scores.get("missing") or [])})
    if scores.get("alone") is False:
        return Decision(IDK, False, Stop.ALONE, scores, details={"answer": answer})
    if pathway.own_value:
        # an executed program's or statement's own value: the thresholds below judge a model's reading of text
        return Decision(answer, True, Stop.EXACT_VALUE, scores, supporting, {"what": pathway.what, "lexical": lexical})
    whole = scores.get("full_chunk")
    if whole is not None and whole < config.min_sentence_support:
        return Decision(IDK, False, Stop.SENTENCE, scores, details={"whole": whole, "min": config.min_sentence_support})
    overlap = scores.get("overlap")
    if config.min_question_overlap > 0 and (overlap or 0.0) < config.min_question_overlap:
        return Decision(IDK, False, Stop.OVERLAP, scores, details={"overlap": overlap,
                                                                    "min": config.min_question_overlap})
    similarity = scores.get("similarity")
    if config.min_similarity > 0 and (similarity is None or similarity < config.min_similarity):
        return Decision(IDK, False, Stop.SIMILARITY, scores, supporting,
                        {"similarity": similarity, "min": config.min_similarity})
    return Decision(answer, True, Stop.SUPPORTED, scores, supporting, {"lexical": lexical, "similarity": similarity})


_UNNAMED = Pathway("")  # scores saved without a pathway: judged as a model's answer, as they always were


def _pathway(scores: Mapping[str, Any]) -> Pathway:
    """The declared pathway saved scores name (`named` refuses one nobody declared)."""
    return named(scores["source"]) if scores.get("source") else _UNNAMED


def contradicts_premise(query: str, evidence: Sequence[str]) -> str:
    """An evidence sentence that names two of the question's words and negates something, or ""."""
    words = {w for w in normalize(query).split() if len(w) > 3}
    for text in evidence:
        for sentence in re.split(r"(?<=[.!?])\s+", text or ""):
            if _NEGATION.search(sentence) and len(words & set(normalize(sentence).split())) >= 2:
                return sentence.strip()[:500]
    return ""


def _is_choice(query: str, answer: str) -> bool:
    """The question offers options ("A or B") and the answer is one of its own spans."""
    q = normalize(query)
    return bool(_CHOICE.search(query)) and bool(normalize(answer)) and normalize(answer) in q
