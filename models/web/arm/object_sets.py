"""ARM part 2 for a batch: from each question's ranked objects to the set of objects given as context.

    the `pool` most relevant objects ─► compatibility of every pair (structure.py) ─► drafts: the base set
    expanded 0, 1, 2... rounds, one MIP each (drafts.py, mip.py) ─► every draft of the batch verified (one LLM
    call, or the support signal; verification.py) ─► objects ranked by vote confidence, then the drafts' other
    objects, then the ranking ─► the first `top`

Relevance (the MIP's R_i) is part 1's score, lexical and cosine combined, which already holds the question-object
cosine the paper uses. Whatever fails or runs out of time falls back to part 1's ranking for that question: a
compatibility past the deadline is not computed, a MIP past its time limit returns the ranking, a verifier that
fails names nothing. The trace keeps, per question, the MIP's choice and solve time for every draft, each
draft's vote and the final confidences (object numbers are positions in the question's object list).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

import numpy as np

from models.deadline import Deadline
from models.types import Chunk
from models.web.arm.alignment import Alignment
from models.web.arm.drafts import Draft, make_drafts
from models.web.arm.structure import Compatibility
from models.web.arm.verification import Case, Vote, aggregate


@dataclass(frozen=True)
class Ranked:
    """One question's objects as part 1 left them."""

    question: str
    objects: Sequence[Chunk]
    titles: Sequence[str]  # page title of each object
    texts: Sequence[str]  # each object serialised (title + content)
    relevance: np.ndarray  # part 1's score of each object
    keywords: tuple[Alignment, ...] = ()
    question_vector: np.ndarray | None = None  # unit-norm; needed by the LLM verifier only


@dataclass
class SetChoice:
    """The chosen objects (indices into `Ranked.objects`, best first) and the trace of how."""

    chosen: list[int]
    trace: dict = field(default_factory=dict)


def _ranking(relevance: np.ndarray) -> list[int]:
    return np.argsort(-relevance, kind="stable").tolist()


class ObjectSetSelector:
    """Structure alignment, drafts, verification and voting (`web.arm.structure`).

    Args:
        config: `StructureConfig`.
        verifier: a `verification` verifier (`make_verifier`).
    """

    def __init__(self, config, verifier, clock=time.perf_counter):
        self.config, self.verifier, self.clock = config, verifier, clock

    def choose(self, items: Sequence[Ranked], embed: Callable[[list[str]], np.ndarray], top: int,
               deadline: Deadline | None = None) -> list[SetChoice]:
        """The `top` objects of each question (see the module docstring). `embed`: texts -> unit-norm rows."""
        deadline = deadline or Deadline(None)
        cfg = self.config
        plans: list[tuple[np.ndarray, list[Draft], list[Case], dict] | None] = []
        for item in items:
            if deadline.expired() or len(item.objects) == 0:
                plans.append(None)
                continue
            start = self.clock()
            pool = np.argsort(-item.relevance, kind="stable")[:cfg.pool]
            compatibility = Compatibility([item.objects[i] for i in pool], embed, cfg.semantic_weight,
                                          cfg.max_units, cfg.min_values)
            took = self.clock() - start
            relevance = item.relevance[pool].astype(np.float64)
            limit = max(0.01, min(cfg.time_limit_s, deadline.remaining()))
            drafts = make_drafts(relevance, compatibility, cfg.base_objects, cfg.expansion_steps, cfg.per_step,
                                 cfg.k, limit, cfg.compatibility_weight)
            titles = [item.titles[i] for i in pool]
            texts = [item.texts[i] for i in pool]
            cases = [Case(item.question, tuple(d.objects), texts, relevance, tuple(item.keywords),
                          d.serialise(compatibility, titles, item.question_vector, cfg.verify_rows)
                          if self.verifier.needs_rendering and item.question_vector is not None else "")
                     for d in drafts]
            plans.append((pool, drafts, cases, {"pool": len(pool), "compatibility_ms": round(1000 * took, 1)}))
        cases = [c for plan in plans if plan for c in plan[2]]
        votes = iter(self.verifier.verify(cases, deadline=deadline) if cases else [])
        return [self._choice(item, plan, [next(votes, Vote()) for _ in plan[2]], top) if plan
                else SetChoice(_ranking(item.relevance)[:top], {"status": "skipped: deadline or no objects"})
                for item, plan in zip(items, plans)]

    def _choice(self, item: Ranked, plan, votes: list[Vote], top: int) -> SetChoice:
        pool, drafts, _, trace = plan
        confidence = aggregate(votes, self.config.vote_weight)
        in_drafts = sorted({i for d in drafts for i in d.objects}, key=lambda i: (-item.relevance[pool[i]], i))
        order = [int(pool[i]) for i in dict.fromkeys([i for i, _ in confidence] + in_drafts)]
        chosen = list(dict.fromkeys(order + _ranking(item.relevance)))[:top]
        as_objects = lambda ids: [int(pool[i]) for i in ids]  # noqa: E731 - pool positions -> object numbers
        trace["drafts"] = [{**d.trace(), "chosen": as_objects(d.objects),
                            "links": [as_objects(link) for link in d.selection.links],
                            "vote": [[int(pool[i]), w] for i, w in v.trace()]} for d, v in zip(drafts, votes)]
        trace["confidence"] = [[int(pool[i]), round(c, 3)] for i, c in confidence]
        trace["chosen"] = chosen
        return SetChoice(chosen, trace)
