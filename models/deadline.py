"""A monotonic-clock deadline shared by every stage of one batch, and the per-stage budgets cut from it.

The grader kills a `batch_generate_answer` call after batch_size x 30 s. Every stage asks the deadline
before starting work; work that cannot start in time is answered "i don't know" instead of overrunning.

A stage does not get the whole batch deadline: `deadline.share(fraction)` is a child deadline that ends
after that fraction of the time left (never after its parent), so a stage that runs long (KG generation
on a slow CPU) is cut while later stages (the web and the answer step) still have their time. Long loops
inside a stage (pages, embedding batches, API calls) check the child deadline they were given.
"""
from __future__ import annotations

import math
import time


def batch_deadline_s(batch_size: int, per_question_s: float, margin_s: float) -> float:
    """Seconds one `batch_generate_answer` call gives itself: the grader's limit (batch_size x per_question_s)
    less the margin kept for what follows the last stage; at least 1 s. The g4dn profile: 16 x 30 - 20 = 460 s
    of the grader's 480. `CragModel` runs every batch under it and `scripts/latency_model.py` measures its
    projected headroom against it, so the two cannot drift apart."""
    return max(1.0, max(int(batch_size), 1) * float(per_question_s) - float(margin_s))


class Deadline:
    """`Deadline(seconds)` expires `seconds` after construction; `Deadline(None)` never expires."""

    def __init__(self, seconds: float | None, clock=time.monotonic):
        self._clock = clock
        self._end = None if seconds is None else clock() + seconds

    def remaining(self) -> float:
        """Seconds left (may be negative); `inf` for an unbounded deadline."""
        return float("inf") if self._end is None else self._end - self._clock()

    def expired(self) -> bool:
        return self.remaining() <= 0

    def child(self, seconds: float | None) -> "Deadline":
        """A deadline `seconds` from now, capped by this one (None: this deadline's own end)."""
        child = Deadline(None, self._clock)
        remaining = self.remaining()
        if seconds is not None:
            remaining = min(remaining, max(0.0, seconds))
        child._end = None if math.isinf(remaining) else self._clock() + remaining
        return child

    def share(self, fraction: float | None) -> "Deadline":
        """A child deadline ending after `fraction` (0..1) of the time left; None or >= 1: this deadline's end.

        An unbounded deadline stays unbounded (a fraction of infinity is not a budget).
        """
        remaining = self.remaining()
        if fraction is None or fraction >= 1 or math.isinf(remaining):
            return self.child(None)
        return self.child(max(0.0, remaining) * max(0.0, fraction))

    def __repr__(self) -> str:
        return f"Deadline(remaining={self.remaining():.2f}s)"


# Stages of the pipeline that get a share of the batch time (the answer step gets whatever is left; the
# reasoning step too, less its backup summarizer's reserve). The last three are ElectricSheep's (off by default).
STAGES = ("route", "select sources", "public data", "sql", "kg", "web retrieval", "attributes", "knowledge",
          "calculator")


def check_stage_budgets(budgets: dict) -> None:
    """Raises ValueError for a stage name not in `STAGES` or a fraction outside (0, 1]."""
    for stage, fraction in budgets.items():
        if stage not in STAGES:
            raise ValueError(f"pipeline.stage_budgets: unknown stage {stage!r}; expected some of {list(STAGES)}")
        if not 0 < fraction <= 1:
            raise ValueError(f"pipeline.stage_budgets.{stage} must be a fraction in (0, 1], got {fraction}")


def stage_deadline(deadline: Deadline, budgets: dict, stage: str) -> Deadline:
    """The deadline of `stage`: its budget's share of the time left (a stage without a budget: all of it)."""
    return deadline.share(budgets.get(stage))
