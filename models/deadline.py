"""A monotonic-clock deadline shared by every stage of one batch.

The grader kills a `batch_generate_answer` call after batch_size x 30 s. Every stage asks the deadline
before starting work; work that cannot start in time is answered "i don't know" instead of overrunning.
"""
from __future__ import annotations

import time


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

    def __repr__(self) -> str:
        return f"Deadline(remaining={self.remaining():.2f}s)"
