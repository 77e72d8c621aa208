"""How well a judge agrees with hand labels: the labelled set `data/judge/labels.jsonl` and its measures.

One row per (question, gold answers, prediction) with a human label, `correct` or `incorrect`, a one-line
reason, and where it came from (`source`: sample, dev, task2, task3 or hard; `origin`: a real run of this
package or a written variant; `heldout`: written after the judge's rules were frozen, reported apart: `true`
for the first such batch, or the batch's name, e.g. "second"). The shipped file holds no CRAG dev question
(`dev` is for rows a user labels from their own runs on the real data).
Each row is scored as `local_evaluation.py` scores a prediction (the V3 exact and invalid rules, then the
judge), with no trim (the rows are short), and compared with its label:
- agreement: the share of decided rows (not unjudged) whose outcome is the label;
- undecided: the share of all rows left unjudged;
- the confusion matrix (label x verdict, verdict `unjudged` apart), the same per source, and the rows a
  judge called correct that are labelled incorrect (false passes inflate a score; on hard rows, none may).
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

from models.jsonl import read_jsonl
from models.paths import REPO_ROOT
from evaluation.judge import Judge
from evaluation.metrics import CORRECT, ScoreItem, Verdict, score_predictions

LABELS_PATH = REPO_ROOT / "data" / "judge" / "labels.jsonl"
LABELS = ("correct", "incorrect")
SOURCES = ("sample", "dev", "task2", "task3", "hard")
ORIGINS = ("run", "written")
UNJUDGED = "unjudged"
MIN_AGREEMENT, MAX_UNDECIDED = 0.95, 0.10  # the judge's thresholds: agreement on decided rows, share undecided


@dataclass(frozen=True)
class LabelledRow:
    source: str
    origin: str
    query: str
    gold: str
    alt_ans: tuple[str, ...]
    prediction: str
    label: str
    reason: str
    heldout: str = ""  # the batch written after the judge's rules were frozen, to measure it on unseen rows


def load_labels(path: str | Path = LABELS_PATH) -> list[LabelledRow]:
    """The labelled rows, every field checked.

    Raises:
        ValueError: a line that is not a valid row, with its line number.
    """
    return read_jsonl(path, _labelled_row)


def _labelled_row(data) -> LabelledRow:
    try:
        row = LabelledRow(data["source"], data["origin"], data["query"], data["gold"],
                          tuple(data.get("alt_ans") or ()), data["prediction"], data["label"], data["reason"],
                          _heldout_batch(data.get("heldout", False)))
    except (ValueError, KeyError, TypeError) as exc:
        raise ValueError(f"not a labelled row: {exc}") from exc
    problems = [f"{name} {value!r} not one of {allowed}" for name, value, allowed in (
        ("source", row.source, SOURCES), ("origin", row.origin, ORIGINS), ("label", row.label, LABELS))
        if value not in allowed] + (["no reason"] if not row.reason.strip() else [])
    if problems:
        raise ValueError(", ".join(problems))
    return row


FIRST_HELDOUT = "first"  # what `"heldout": true` names


def _heldout_batch(value) -> str:
    if value is True:
        return FIRST_HELDOUT
    if value is False or value is None:
        return ""
    if isinstance(value, str) and value.strip():
        return value.strip()
    raise TypeError(f"heldout {value!r} is not true, false or a batch name")


def verdict_label(verdict: Verdict) -> str:
    """correct / incorrect / unjudged, as a verdict compares with a label (missing counts as not correct)."""
    if verdict.unjudged:
        return UNJUDGED
    return "correct" if verdict.outcome == CORRECT else "incorrect"


@dataclass
class Agreement:
    """The judge's verdicts on the labelled rows and the measures over them."""

    rows: list[LabelledRow]
    verdicts: list[Verdict]
    confusion: Counter = field(default_factory=Counter)  # (label, verdict label) -> n

    def __post_init__(self):
        self.confusion = Counter((row.label, verdict_label(v)) for row, v in zip(self.rows, self.verdicts))

    @property
    def n_decided(self) -> int:
        return sum(n for (_, said), n in self.confusion.items() if said != UNJUDGED)

    @property
    def agreement(self) -> float:
        agreed = sum(n for (label, said), n in self.confusion.items() if label == said)
        return agreed / self.n_decided if self.n_decided else 0.0

    @property
    def undecided(self) -> float:
        return (len(self.rows) - self.n_decided) / len(self.rows) if self.rows else 0.0

    def false_passes(self) -> list[tuple[LabelledRow, Verdict]]:
        """Rows labelled incorrect that the judge called correct."""
        return [(row, v) for row, v in zip(self.rows, self.verdicts)
                if row.label == "incorrect" and verdict_label(v) == "correct"]

    def disagreements(self) -> list[tuple[LabelledRow, Verdict]]:
        return [(row, v) for row, v in zip(self.rows, self.verdicts)
                if verdict_label(v) not in (UNJUDGED, row.label)]

    def heldout(self, batch: str = "") -> "Agreement":
        """The held-out rows: all of them, or one batch's."""
        idx = [i for i, row in enumerate(self.rows) if row.heldout and batch in ("", row.heldout)]
        return Agreement([self.rows[i] for i in idx], [self.verdicts[i] for i in idx])

    def heldout_batches(self) -> list[str]:
        return list(dict.fromkeys(row.heldout for row in self.rows if row.heldout))

    def by_source(self) -> dict[str, "Agreement"]:
        groups: dict[str, list[int]] = {}
        for i, row in enumerate(self.rows):
            groups.setdefault(row.source, []).append(i)
        return {source: Agreement([self.rows[i] for i in idx], [self.verdicts[i] for i in idx])
                for source, idx in sorted(groups.items(), key=lambda kv: SOURCES.index(kv[0]))}

    def passes(self) -> bool:
        """The thresholds: agreement on decided rows, undecided share, and no false pass on a hard row."""
        return self.agreement >= MIN_AGREEMENT and self.undecided <= MAX_UNDECIDED and \
            not any(row.source == "hard" for row, _ in self.false_passes())


def measure(rows: Sequence[LabelledRow], judge: Judge) -> Agreement:
    """Scores every row with `judge` the V3 way (no trim) and compares with the labels."""
    items = [ScoreItem(row.query, row.prediction, row.gold, row.alt_ans) for row in rows]
    return Agreement(list(rows), score_predictions(items, judge, trim=lambda text: text))
