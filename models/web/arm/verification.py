"""Self-verification of each draft and aggregation by voting (ARM §3.3).

Each draft is shown to a verifier, which names the objects of the draft that answer the question; every naming is
a vote. An object's confidence is

    vote_weight * (mean weight of its votes) + (1 - vote_weight) * softmax(number of its votes)[object]

(the paper's weighted sum of the mean vote weight and the softmax-normalised count), and objects are ranked by it.

Two verifiers, chosen by `web.arm.structure.verifier`:

- `llm` (ARM's way): the draft serialised (drafts.py) goes to the LLM, which writes the ids of the minimal set of
  objects that answers the question, "2, 5", under a grammar whose only ids are the draft's. A vote weighs the
  model's own confidence in what it wrote, exp(mean token log-probability) of the completion (the paper's mean
  logit, as a probability), where the backend returns log-probabilities, else the named object's relevance.
  With `verify_samples` = n > 1 each draft gets n completions sampled at `verify_temperature` from one request
  (`GenerationRequest.n`, the mechanism every sampled stage uses), and every completion is a vote.
- `support` (the CPU profile: a 135M model does not follow the instruction): the verifier's own signal, the
  share of the question's keywords an object supports (any word of the keyword or of its aligned n-grams occurs
  in it, compared by their first `web.arm.stem_chars` letters). Objects supporting at least `min_support` are
  named, the best one always; a vote weighs its support.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from models.deadline import Deadline
from models.llm.constraints import ListLanguage
from models.llm.generator import GenerationRequest, completions_of
from models.llm.prompts import PromptLibrary
from models.web.arm.alignment import Alignment
from models.web.arm.ngrams import STOP_WORDS, stem, words

log = logging.getLogger(__name__)

SEPARATOR = ", "


class IdLanguage(ListLanguage):
    """Lists of 1..n of the ids 1..`n`, separated by `SEPARATOR` (what the LLM verifier may write)."""

    def __init__(self, n: int):
        if n < 1:
            raise ValueError(f"a draft needs at least one object, got {n}")
        super().__init__([str(i) for i in range(1, n + 1)], n, SEPARATOR, terminal="ID")

    def parse(self, text: str) -> list[int]:
        """The distinct valid ids written, in order, as 0-based positions."""
        named: list[int] = []
        for part in (text or "").split(","):
            part = part.strip()
            if part in self.members and int(part) - 1 not in named:
                named.append(int(part) - 1)
        return named


@dataclass(frozen=True)
class Case:
    """One draft to verify: its objects (indices into `texts`), the question and what the verifiers read."""

    question: str
    draft: tuple[int, ...]
    texts: Sequence[str]  # every object of the pool, serialised
    relevance: np.ndarray  # of every object of the pool
    keywords: tuple[Alignment, ...] = ()
    rendered: str = ""  # the draft serialised for the LLM (drafts.Draft.serialise)


@dataclass(frozen=True)
class Vote:
    """The objects one verifier named for one draft (pool indices) and each vote's weight."""

    named: tuple[int, ...] = ()
    weights: tuple[float, ...] = ()

    def trace(self) -> list[list]:
        return [[int(i), round(float(w), 3)] for i, w in zip(self.named, self.weights)]


def support(text: str, keywords: Sequence[Alignment], stem_chars: int = 5) -> float:
    """The share of keywords `text` supports: a word of the keyword or of its n-grams occurs in it, compared by
    their first `stem_chars` letters (as the n-gram index relates words)."""
    if not keywords:
        return 0.0
    present = {stem(w, stem_chars) for w in words(text)}
    hits = 0
    for alignment in keywords:
        terms = {stem(w, stem_chars) for phrase in (alignment.keyword, *alignment.ngrams) for w in words(phrase)
                 if w not in STOP_WORDS}
        hits += bool(terms & present)
    return hits / len(keywords)


class SupportVerifier:
    """Names the draft's objects that support at least `min_support` of the question's keywords (the best one
    when none does)."""

    needs_rendering = False

    def __init__(self, min_support: float = 0.5, stem_chars: int = 5):
        self.min_support, self.stem_chars = min_support, stem_chars

    def verify(self, cases: Sequence[Case], deadline: Deadline | None = None) -> list[Vote]:
        votes = []
        for case in cases:
            scores = [support(case.texts[i], case.keywords, self.stem_chars) for i in case.draft]
            named = [(i, s) for i, s in zip(case.draft, scores) if s >= self.min_support]
            if not named and case.draft:
                best = int(np.argmax(scores))
                named = [(case.draft[best], scores[best])]
            votes.append(Vote(tuple(i for i, _ in named), tuple(s for _, s in named)))
        return votes


class LlmVerifier:
    """Asks the LLM which objects of each draft answer the question (every draft of a batch in one call)."""

    needs_rendering = True

    def __init__(self, generator, prompts: PromptLibrary | None = None, prompt: str = "arm_verify",
                 max_new_tokens: int = 16, samples: int = 1, temperature: float = 0.7):
        if samples < 1:
            raise ValueError(f"web.arm.structure.verify_samples must be at least 1, got {samples}")
        self.generator, self.max_new_tokens = generator, max_new_tokens
        self.samples, self.temperature = samples, temperature
        self.template = (prompts or PromptLibrary()).get(prompt)  # fails at start-up

    def verify(self, cases: Sequence[Case], deadline: Deadline | None = None) -> list[Vote]:
        """One vote per case; a failed call names nothing (logged), and the drafts' ranking decides."""
        live = [c for c in cases if c.draft]
        languages = [IdLanguage(len(c.draft)) for c in live]
        requests = [GenerationRequest(self.template.render(question=c.question, draft=c.rendered), stop=("\n",),
                                      max_new_tokens=self.max_new_tokens, constraint=language.constraint(),
                                      n=self.samples, temperature=self.temperature if self.samples > 1 else None,
                                      logprobs=True)
                    for c, language in zip(live, languages)]
        try:
            outputs = self.generator.generate(requests, deadline=deadline) if requests else []
        except Exception:  # noqa: BLE001 - verification refines the drafts; without it they still rank
            log.warning("ARM verification failed for %d drafts", len(requests), exc_info=True)
            outputs = [""] * len(requests)
        votes = {}
        for k, (case, language) in enumerate(zip(live, languages)):
            named, weights = [], []
            for completion in completions_of(outputs, k):  # every sampled completion is a vote
                chosen = [case.draft[p] for p in language.parse(completion.text)]
                confidence = completion.probability
                named += chosen
                weights += [confidence if confidence is not None else float(case.relevance[i]) for i in chosen]
            votes[id(case)] = Vote(tuple(named), tuple(weights))
        return [votes.get(id(c), Vote()) for c in cases]


VERIFIERS = ("support", "llm")


def make_verifier(config, generator=None, prompts: PromptLibrary | None = None, stem_chars: int = 5):
    """The verifier `web.arm.structure.verifier` names (`stem_chars`: `web.arm.stem_chars`)."""
    if config.verifier == "support":
        return SupportVerifier(config.min_support, stem_chars)
    if config.verifier == "llm":
        if generator is None:
            raise ValueError("web.arm.structure.verifier llm needs the LLM")
        return LlmVerifier(generator, prompts, config.verify_prompt, config.verify_max_new_tokens,
                           config.verify_samples, config.verify_temperature)
    raise ValueError(f"unknown web.arm.structure.verifier {config.verifier!r}; expected {list(VERIFIERS)}")


def aggregate(votes: Sequence[Vote], vote_weight: float = 0.5) -> list[tuple[int, float]]:
    """(object, confidence) of every named object, most confident first (see the module docstring)."""
    weights: dict[int, list[float]] = {}
    for vote in votes:
        for i, w in zip(vote.named, vote.weights):
            weights.setdefault(i, []).append(w)
    if not weights:
        return []
    objects = list(weights)
    counts = np.array([len(weights[i]) for i in objects], dtype=np.float64)
    share = np.exp(counts - counts.max())
    share /= share.sum()
    confidence = [vote_weight * float(np.mean(weights[i])) + (1 - vote_weight) * float(s)
                  for i, s in zip(objects, share)]
    return sorted(zip(objects, confidence), key=lambda pair: (-pair[1], pair[0]))
