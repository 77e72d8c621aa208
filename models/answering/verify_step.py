"""The check every answer passes before it is kept: the verifier, then the attribute policy when it is on.

A verified answer that is not "i don't know" settles its query; on the last source (`final`) whatever the
verifier returns settles it. "invalid question" settles only there: db3 sent a KG "invalid" on to the web.
Each attempt goes into its query's trace with the chunks it was checked against and the decision.
"""
from __future__ import annotations

import logging
from typing import Sequence

from models.answering.attempt import Attempt
from models.llm.postprocess import is_idk
from models.pathways import Pathway
from models.types import IDK, INVALID, Answer, Chunk
from models.verify import Candidate, Stop, Verifier
from models.verify.decision import Decision, render

log = logging.getLogger(__name__)

_FACT_KINDS = ("public", "kg")  # chunks of verbalised structured facts (they come before web chunks)


class VerifyStep:
    """Args:
        verifier: the `Verifier` every answer passes.
        attribute_policy: ElectricSheep's static/dynamic policy (`AttributePolicy`), or None (off).
    """

    def __init__(self, verifier: Verifier, attribute_policy=None):
        self.verifier, self.attribute_policy = verifier, attribute_policy

    def settle(self, pathway: Pathway, attempts: Sequence[Attempt], deadline, final: bool, source: str = "") -> None:
        """Checks `attempts`, answers of `pathway` from the evidence of `source` (its registry name; "" = no one
        source's: OmniRetrieval's selected context), and settles the queries they answer."""
        attempts = list(attempts)
        candidates = [candidate(a, pathway, source) for a in attempts]
        failed = None  # the decision every answer gets when the verifier itself raised
        try:
            decisions = self.verifier.verify(candidates, deadline=deadline) if candidates else []
        except Exception as exc:  # noqa: BLE001 - a broken verifier costs its answers, not the batch
            log.exception("verifier failed for %d answers", len(candidates))
            failed = Decision(IDK, False, Stop.VERIFIER_FAILED, details={"error": f"{type(exc).__name__}: {exc}"})
            decisions = [failed] * len(candidates)
        if self.attribute_policy is not None:
            decisions = self.attribute_policy.apply([a.state for a in attempts], decisions)
        for attempt, decision in zip(attempts, decisions):
            state, raw = attempt.state, attempt.raw
            traced = {"pathway": pathway.name, "raw_output": raw or "", "candidate": attempt.answer,
                      "chunks": [chunk_trace(c) for c in attempt.chunks]}
            traced["verifier"] = decision.as_trace()
            answer_text, accepted = decision.answer, decision.accepted
            if decision is not failed and not (raw or "").strip():
                stop = Stop.NO_CONTEXT if raw is None else Stop.NO_OUTPUT  # why there is nothing, not "abstained"
                traced["verifier"].update(reason=render(stop, {"error": attempt.error}), stop=stop.value)
            state.trace["attempts"].append(traced)
            state.reason, state.stop = traced["verifier"]["reason"], traced["verifier"]["stop"]
            if (accepted and not is_idk(answer_text) and answer_text != INVALID) or final:
                state.answer = Answer(answer_text, pathway.name, state.domain, {"chunks": len(attempt.chunks)})


def candidate(attempt: Attempt, pathway: Pathway, source: str = "") -> Candidate:
    """What the verifier checks: the answer, the evidence it came from (structured facts first), and for a
    source's own value the program that produced it, as parsed (read from the source's evidence, never from the
    trace; a source without one, SQL, gives none)."""
    state = attempt.state
    calls = tuple(state.evidence_of(source).provenance.get("calls", ())) if pathway.own_value and source else ()
    return Candidate(state.query.text, attempt.answer, tuple(c.text for c in attempt.chunks), pathway,
                     facts=sum(c.kind in _FACT_KINDS for c in attempt.chunks), calls=calls,
                     signals=signals(attempt, source))


def signals(attempt: Attempt, source: str) -> dict:
    """What the pipeline knows about an answer beyond its evidence, for the calibrated gate (verify/gate.py): the
    answer step's log-probabilities and samples, the domain, static/dynamic when predicted, and for a KG answer
    its program's log-probability, outcome and whether a check repaired it."""
    state = attempt.state
    out = {**attempt.signals, "domain": state.domain}
    if state.attribute is not None:
        out["attribute"] = state.attribute
    if source in state.query_logprobs:
        out["query_logprob"] = state.query_logprobs[source]
    if source == "kg":
        provenance = state.evidence_of("kg").provenance
        out["kg_outcome"] = provenance.get("outcome", "")
        out["kg_repaired"] = bool(provenance.get("repaired"))
    return out


TRACED_CHARS = 2000  # a whole parent chunk (700 chars) or fact block: a run's context recall is read from traces


def chunk_trace(chunk: Chunk) -> dict:
    """A context chunk as the trace shows it: where it came from and its text (scripts/compare_modes.py reads
    answer-in-context recall from it)."""
    return {"source": chunk.source, "kind": chunk.kind, "score": round(float(chunk.score), 4),
            "text": chunk.text[:TRACED_CHARS]}
