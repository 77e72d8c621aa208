"""A `local_evaluation.py` output folder: the names of its files, and reading them back.

    run = RunDir("outputs/modes/db3/task2")
    run.records()    # each question's prediction record (an id's last record: a resumed run may append it again)
    run.verdicts()   # interaction id -> verdict line
    run.summary()    # summary.json, or None while the run is unfinished
    run.cell()       # the normalized judge's counts and the mean seconds per question, or None

The files, all side by side in the folder: `predictions.jsonl` (one record per question, appended as each batch
returns: `evaluation.runner.PredictionLog` writes it), `verdicts.jsonl`, `summary.json`, `report.md` and its chart
(`evaluation.report`), `report.html` or `compare.html` (`evaluation.html_report`), and `config.yaml` (the profile
the run resolved). A run is finished when its summary is readable: it is written last, after every prediction is
scored. Reading never changes a file (resuming, which cuts a half-written last line off, is PredictionLog's).
"""
from __future__ import annotations

import json
import logging
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from models.jsonl import read_jsonl
from models.paths import REPO_ROOT

log = logging.getLogger(__name__)


def one_per_id(records: Iterable[dict]) -> list[dict]:
    """Each id's last record, in the order the ids first appear: how every reader of a predictions.jsonl counts a
    question that a resumed run asked again (`evaluation.runner.needs_asking_again`)."""
    latest: dict = {}
    for position, record in enumerate(records):
        key = record.get("interaction_id") if isinstance(record, dict) else None
        latest[("id", key) if key is not None else ("line", position)] = record  # a record without an id is its own
    return list(latest.values())


def read_records(path: str | Path) -> list[dict]:
    """The prediction records of a predictions.jsonl file, one per id (`one_per_id`).

    Raises:
        FileNotFoundError: no such file.
        JSONLError: a line that is not JSON (`path:line: ...`).
    """
    return one_per_id(read_jsonl(path))


@dataclass(frozen=True)
class Cell:
    """One run as a table cell: counts of the normalized judge and mean seconds per question."""

    status: str  # "ok" | "not run" | "failed"
    correct: int = 0
    missing: int = 0
    hallucination: int = 0
    total: int = 0
    seconds: float = float("nan")

    @property
    def score(self) -> float:
        return (self.correct - self.hallucination) / self.total if self.total else float("nan")


class RunDir:
    """One `local_evaluation.py --output-dir` folder (it need not exist yet)."""

    PREDICTIONS = "predictions.jsonl"
    VERDICTS = "verdicts.jsonl"
    SUMMARY = "summary.json"
    CONFIG = "config.yaml"
    REPORT = "report.md"
    CHART = "scores_by_domain.png"
    PAGE = "report.html"
    COMPARE_PAGE = "compare.html"

    def __init__(self, path: str | Path):
        self.path = Path(path)

    def __repr__(self) -> str:
        return f"RunDir({str(self.path)!r})"

    @property
    def predictions_path(self) -> Path:
        return self.path / self.PREDICTIONS

    @property
    def verdicts_path(self) -> Path:
        return self.path / self.VERDICTS

    @property
    def summary_path(self) -> Path:
        return self.path / self.SUMMARY

    @property
    def config_path(self) -> Path:
        return self.path / self.CONFIG

    @property
    def report_path(self) -> Path:
        return self.path / self.REPORT

    @property
    def chart_path(self) -> Path:
        return self.path / self.CHART

    @property
    def page_path(self) -> Path:
        return self.path / self.PAGE

    @property
    def compare_page_path(self) -> Path:
        return self.path / self.COMPARE_PAGE

    # ------------------------------------------------------------------ reading
    def has_predictions(self) -> bool:
        return self.predictions_path.is_file()

    def records(self) -> list[dict]:
        """Each question's prediction record (`one_per_id`), in the order first asked; [] before any is saved.

        Raises:
            JSONLError: a line that is not JSON (`path:line: ...`).
        """
        try:
            return read_records(self.predictions_path)
        except FileNotFoundError:
            return []

    def verdicts(self) -> dict[str, dict]:
        """interaction id -> its verdict line; {} before the run is scored."""
        try:
            return {v["interaction_id"]: v for v in read_jsonl(self.verdicts_path)}
        except FileNotFoundError:
            return {}

    def summary(self) -> dict | None:
        """summary.json, None when there is none (the run is unfinished).

        Raises:
            ValueError: the file is not JSON.
        """
        try:
            return json.loads(self.summary_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None

    def finished(self) -> bool:
        """Whether the run has a readable summary (a corrupt one is logged and counts as unfinished)."""
        try:
            return self.summary() is not None
        except (OSError, ValueError) as exc:
            log.warning("%s: unreadable summary (%s); the run counts as not finished (n/a)", self.summary_path, exc)
            return False

    def latencies(self) -> list[float] | None:
        """Each question's seconds (`latency_s`); None, logged, when a record has none or the file is corrupt."""
        try:
            rows = self.records()
        except (OSError, ValueError) as exc:
            log.warning("%s: unreadable (%s); its records are left out", self.predictions_path, exc)
            return None
        try:
            return [float(record["latency_s"]) for record in rows]
        except (KeyError, TypeError, ValueError):
            bad = sum(not isinstance(r.get("latency_s"), (int, float)) for r in rows)
            log.warning("%s: %d of %d records without a readable latency_s; its seconds per question show as n/a",
                        self.predictions_path, bad, len(rows))
            return None

    def cell(self) -> Cell | None:
        """The finished run as a `Cell` (the summary's normalized-judge counts, the mean latency), or None when it
        is not finished."""
        if not self.finished():
            return None
        m = self.summary()["metrics"]
        latencies = self.latencies()
        seconds = sum(latencies) / len(latencies) if latencies else float("nan")
        return Cell("ok", int(m["n_correct"]), int(m["n_miss"]), int(m["n_hallucination"]), int(m["total"]), seconds)


def current_commit() -> str:
    """The code a run's answers come from (summary.json's `commit`): the short commit, `-dirty` when tracked files
    differ from it (untracked outputs do not count); "unknown" outside a git checkout."""
    short = _git("rev-parse", "--short", "HEAD")
    if short is None:
        return "unknown"
    return short + ("-dirty" if _git("status", "--porcelain", "--untracked-files=no") else "")


def _git(*args: str) -> str | None:
    try:
        done = subprocess.run(["git", *args], cwd=REPO_ROOT, capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout.strip() if done.returncode == 0 else None
