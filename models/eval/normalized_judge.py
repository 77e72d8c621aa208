"""The `normalized` judge: deterministic answer matching first, an optional LLM judge for what it leaves open.

Each item goes to `match_answer` (numbers, dates, yes/no, lists, names; see `models.eval.answer_match`).
A confident verdict is final and recorded as decided by `normalized`. The undecided items go, in one batch,
to the fallback judge (`LocalJudge` or `OpenAIJudge`) when one is configured; without one, or when the
fallback fails, they stay unjudged (scored as hallucinations, as a failed judge call is in the official
scorer, and counted apart). An exception while matching one item makes that item unjudged, never the batch.
"""
from __future__ import annotations

import logging
from typing import Sequence

from models.eval.answer_match import match_answer
from models.eval.judge import Judge, JudgeItem, Judgement

log = logging.getLogger(__name__)

NAME = "normalized"


class NormalizedJudge:
    """Rules of answer equivalence, with an optional LLM judge behind them."""

    def __init__(self, fallback: Judge | None = None, match=match_answer):
        self.fallback = fallback
        self.match = match  # (query, gold, prediction) -> Match; injectable for tests
        self.name = NAME + (f"+{fallback.name}" if fallback is not None else "")

    def judge(self, items: Sequence[JudgeItem]) -> list[Judgement]:
        judgements = [self._decide(item) for item in items]
        undecided = [i for i, judgement in enumerate(judgements) if judgement.score is None]
        if self.fallback is not None and undecided:
            for i, judgement in zip(undecided, self._ask_fallback([items[i] for i in undecided])):
                judgements[i] = judgement
        return judgements

    def _decide(self, item: JudgeItem) -> Judgement:
        try:
            verdict = self.match(item.query, item.ground_truth, item.prediction)
        except Exception as exc:  # one bad item is unjudged, the batch goes on
            log.exception("normalized judge failed on %r", item.prediction[:80])
            return Judgement(None, f"normalized judge error: {type(exc).__name__}: {exc}"[:300], NAME, unjudged=True)
        if verdict.score is None:
            return Judgement(None, f"undecided: {verdict.reason}", NAME, unjudged=True)
        return Judgement(verdict.score, verdict.reason, NAME)

    def _ask_fallback(self, items: list[JudgeItem]) -> list[Judgement]:
        try:
            judgements = list(self.fallback.judge(items))
            if len(judgements) != len(items):
                raise RuntimeError(f"{len(judgements)} verdicts for {len(items)} items")
            return judgements
        except Exception as exc:  # a broken fallback leaves its items unjudged
            log.exception("fallback judge %s failed on %d items", self.fallback.name, len(items))
            reason = f"fallback judge {self.fallback.name} failed: {type(exc).__name__}: {exc}"[:300]
            return [Judgement(None, reason, NAME, unjudged=True) for _ in items]
