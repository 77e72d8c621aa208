"""One batch's way through the pipeline: the per-query states and what the batch as a whole did.

`Pipeline.answer` makes one `BatchRun` per call and nothing about a batch is kept on the pipeline, so one
pipeline answers batch after batch without carrying anything from one into the next. Each query's data sits on
its own `QueryState` (its domain, the evidence each source returned, its answer, its trace), never in maps keyed
by `id()`. `BatchRun.stage` is the one place a stage is started: it asks the deadline, gives the stage its
budget's share of the time left, times it, and keeps a failing stage from losing the batch.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field
from typing import Callable, Mapping

from models.deadline import Deadline, stage_deadline
from models.evidence import NO_EVIDENCE, Evidence
from models.pathways import FALLBACK
from models.trace import new_trace
from models.types import IDK, Answer, Query

log = logging.getLogger(__name__)


@dataclass
class QueryState:
    """What the stages know about one query so far."""

    query: Query
    domain: str = "open"
    evidence: dict[str, Evidence] = field(default_factory=dict)  # source name -> what it returned
    engaged: tuple[str, ...] | None = None  # omni mode: the sources chosen for it (None: every source, db3)
    answer: Answer | None = None
    attribute: str | None = None  # "static" | "dynamic" when ElectricSheep's attribute predictor ran
    reason: str | None = None  # the verify step's reason for its latest decision (None: no answer was checked)
    stop: str | None = None  # ... and the check that made it, as its code (`models/verify/decision.py` Stop)
    query_logprobs: dict[str, float] = field(default_factory=dict)  # source -> mean token log-prob of its native query
    trace: dict = field(default_factory=new_trace)  # models/trace.py declares its keys

    def evidence_of(self, source: str) -> Evidence:
        return self.evidence.get(source, NO_EVIDENCE)


@dataclass
class BatchRun:
    """One `Pipeline.answer` call: the task, the states, and each stage's seconds or skip."""

    task: int
    states: list[QueryState]
    budgets: Mapping[str, float] = field(default_factory=dict)  # pipeline.stage_budgets
    stage_seconds: dict[str, float] = field(default_factory=dict)
    skipped_stages: list[str] = field(default_factory=list)

    @classmethod
    def start(cls, queries, task: int, budgets: Mapping[str, float]) -> "BatchRun":
        return cls(task, [QueryState(q) for q in queries], budgets)

    def open_states(self) -> list[QueryState]:
        return [s for s in self.states if s.answer is None]

    def stage(self, name: str, run: Callable[[list[QueryState], Deadline], None], deadline: Deadline) -> None:
        """`run(the unanswered states, this stage's deadline)`, unless none is open or the deadline has passed."""
        open_states = self.open_states()
        if not open_states:
            return
        if deadline.expired():
            log.warning("stage %s skipped: batch deadline reached", name)
            self.skipped_stages.append(name)
            return
        started = time.monotonic()
        try:
            run(open_states, stage_deadline(deadline, self.budgets, name))
        except Exception:  # a whole stage failing must not lose the batch; later stages still run
            log.exception("stage %s failed for %d queries", name, len(open_states))
        self.stage_seconds[name] = time.monotonic() - started
        log.debug("stage %s: %d queries in %.2fs", name, len(open_states), self.stage_seconds[name])

    def timed(self, name: str, started: float) -> float:
        """Records a sub-stage's seconds since `started` (web retrieval, reasoning) and returns them."""
        self.stage_seconds[name] = seconds = time.monotonic() - started
        return seconds

    def answers(self) -> list[Answer]:
        """Every query's answer, in order, each with its finished trace."""
        return [self._final(state) for state in self.states]

    def _final(self, state: QueryState) -> Answer:
        answer = state.answer or Answer(IDK, FALLBACK.name, state.domain)
        why = (state.reason if state.reason is not None else
               f"no pathway answered (stages run: {', '.join(self.stage_seconds) or 'none'}; skipped at the "
               f"deadline: {', '.join(self.skipped_stages) or 'none'})")
        state.trace.update(task=self.task, domain=state.domain, source=answer.source, why=why,
                           stages={k: round(v, 3) for k, v in self.stage_seconds.items()})
        if state.stop is not None:  # readers group by the code, never by the reason's words
            state.trace["stop"] = state.stop
        return Answer(answer.text, answer.source, answer.domain, answer.detail, state.trace)
