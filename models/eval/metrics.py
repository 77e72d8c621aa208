"""The CRAG V3 scoring rules, implemented as intended (FB's committed V3 evaluator does not run).

Per prediction:
1. Trim to the grader's 75 tokens, strip, lowercase (ground truths: strip, lowercase). Nothing else.
2. "i don't know" (ASCII apostrophe) anywhere in it: missing. "I don’t know" (curly) and "I do not know"
   are NOT missing under these rules; they go on to the ground truths like any other answer.
3. For each ground truth in `[answer] + alt_ans`: equal strings: correct; both contain "invalid": correct;
   exactly one contains "invalid": this ground truth fails; otherwise the judge decides (score 1: correct).
   A failed or unparseable judge call fails that ground truth.
4. No ground truth passed: hallucination.

Scores are computed over all predictions: accuracy = correct/n, missing = missing/n,
hallucination = (n - correct - missing)/n, score = accuracy - hallucination = (2c + m)/n - 1.

Two design decisions that do not change any score:
- Ground truths are tried rule-first: when any ground truth matches exactly or by the invalid rule the
  prediction is correct without a judge call (V3 stops at the first passing ground truth, so the outcome is
  the same; only `decided_by` can differ, and judge calls are saved).
- The judge is asked in rounds, one ground truth per unfinished prediction per round, so a batched judge
  (an LLM) sees many items at once instead of one call per item.

Every `Verdict` records who decided it and why: `exact`, `invalid-rule`, `idk-rule`, `judge:<name>`
(`judge:normalized` for the normalized judge's own verdicts), `judge-error:<name>` (failed call, a
hallucination) or `unjudged` (no judge could decide some ground truth and none passed: a hallucination, as
a failed call would be in the official scorer, counted separately by `count_unjudged`).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from models.eval.judge import Judge, JudgeItem, Judgement

IDK_MARKER = "i don't know"
INVALID_MARKER = "invalid"
CORRECT, MISSING, HALLUCINATION = "correct", "missing", "hallucination"
METRIC_KEYS = ("score", "accuracy", "hallucination", "missing", "n_miss", "n_correct", "n_correct_exact",
               "n_hallucination", "total")


@dataclass(frozen=True)
class ScoreItem:
    """One prediction to score with its question and gold answers."""

    query: str
    prediction: str
    answer: str
    alt_ans: tuple[str, ...] = ()


@dataclass(frozen=True)
class Verdict:
    """How one prediction scored, and why."""

    outcome: str  # correct | missing | hallucination
    decided_by: str  # exact | invalid-rule | idk-rule | judge:<name> | judge-error:<name> | unjudged | no-ground-truth
    explanation: str
    prediction: str  # after the 75-token trim and strip (what was scored)
    ground_truth: str = ""  # the ground truth that passed, if any
    exact: bool = False

    @property
    def unjudged(self) -> bool:
        return self.decided_by == "unjudged"


def ground_truths(answer: str, alt_ans: Sequence[str] = ()) -> list[str]:
    """`[answer] + alt_ans`, stripped, empty ones dropped, duplicates (ignoring case) dropped, in order."""
    seen, result = set(), []
    for text in (answer, *alt_ans):
        text = (text or "").strip()
        if text and text.lower() not in seen:
            seen.add(text.lower())
            result.append(text)
    return result


def score_predictions(items: Sequence[ScoreItem], judge: Judge, trim: Callable[[str], str]) -> list[Verdict]:
    """Scores every prediction by the V3 rules; see the module docstring.

    Args:
        items: predictions with their questions and gold answers.
        judge: decides non-exact pairs (batched); `RulesJudge` leaves them unjudged.
        trim: the grader's 75-token trim (`models.trim.load_grader_trim`).

    Returns:
        One Verdict per item, in order.
    """
    verdicts: list[Verdict | None] = [None] * len(items)
    pending: dict[int, list[str]] = {}  # item index -> ground truths the judge still has to see
    trimmed = [(trim(item.prediction or "") or "").strip() for item in items]
    for i, (item, prediction) in enumerate(zip(items, trimmed)):
        verdicts[i], to_judge = _apply_rules(item, prediction)
        if verdicts[i] is None:
            pending[i] = to_judge
    last: dict[int, Judgement] = {}
    undecided: dict[int, Judgement] = {}  # the first unjudged answer per item: then no "no" is final
    while pending:
        order = list(pending)
        asks = [JudgeItem(items[i].query, pending[i].pop(0), trimmed[i]) for i in order]
        judgements = list(judge.judge(asks))
        if len(judgements) != len(asks):
            raise RuntimeError(f"judge {judge.name!r} returned {len(judgements)} verdicts for {len(asks)} items")
        for i, ask, judgement in zip(order, asks, judgements):
            last[i] = judgement
            if judgement.unjudged:
                undecided.setdefault(i, judgement)
            if judgement.score == 1:
                verdicts[i] = Verdict(CORRECT, f"judge:{judgement.judge}", judgement.explanation, trimmed[i],
                                      ask.ground_truth)
            if verdicts[i] is not None or not pending[i]:
                del pending[i]
    for i, verdict in enumerate(verdicts):
        if verdict is None:
            verdicts[i] = _failed(undecided.get(i, last[i]), trimmed[i])
    return verdicts


def _apply_rules(item: ScoreItem, prediction: str) -> tuple[Verdict | None, list[str]]:
    """A verdict the rules alone can give, or None plus the ground truths left for the judge."""
    lowered = prediction.lower()
    if IDK_MARKER in lowered:
        return Verdict(MISSING, "idk-rule", f"contains {IDK_MARKER!r}", prediction), []
    truths = ground_truths(item.answer, item.alt_ans)
    if not truths:
        return Verdict(HALLUCINATION, "no-ground-truth", "the example has no gold answer", prediction), []
    to_judge = []
    for truth in truths:
        truth_lowered = truth.lower()
        if lowered == truth_lowered:
            return Verdict(CORRECT, "exact", "exact match", prediction, truth, exact=True), []
        invalid_prediction, invalid_truth = INVALID_MARKER in lowered, INVALID_MARKER in truth_lowered
        if invalid_prediction and invalid_truth:
            return Verdict(CORRECT, "invalid-rule", "both say 'invalid'", prediction, truth), []
        if not invalid_prediction and not invalid_truth:
            to_judge.append(truth)
    if not to_judge:  # every ground truth failed the one-sided invalid rule
        side = "the prediction" if INVALID_MARKER in lowered else "the ground truth"
        return Verdict(HALLUCINATION, "invalid-rule", f"only {side} says 'invalid'", prediction), []
    return None, to_judge


def _failed(judgement: Judgement, prediction: str) -> Verdict:
    if judgement.unjudged:
        decided_by = "unjudged"
    elif judgement.score is None:
        decided_by = f"judge-error:{judgement.judge}"
    else:
        decided_by = f"judge:{judgement.judge}"
    return Verdict(HALLUCINATION, decided_by, judgement.explanation, prediction)


def compute_metrics(verdicts: Sequence[Verdict]) -> dict:
    """The official metrics dict (V3 keys plus `n_correct_exact`); all zeros for no predictions."""
    n = len(verdicts)
    n_correct = sum(v.outcome == CORRECT for v in verdicts)
    n_miss = sum(v.outcome == MISSING for v in verdicts)
    n_hallucination = n - n_correct - n_miss
    accuracy, missing, hallucination = ((x / n if n else 0.0) for x in (n_correct, n_miss, n_hallucination))
    return {
        "score": accuracy - hallucination,
        "accuracy": accuracy,
        "hallucination": hallucination,
        "missing": missing,
        "n_miss": n_miss,
        "n_correct": n_correct,
        "n_correct_exact": sum(v.exact for v in verdicts),
        "n_hallucination": n_hallucination,
        "total": n,
    }


def count_unjudged(verdicts: Sequence[Verdict]) -> int:
    """Predictions counted as hallucinations only because no judge was there to decide."""
    return sum(v.unjudged for v in verdicts)
