"""Profile variants measured on fixed suites: one `local_evaluation.py` run per (configuration, suite), read back.

A suite is a data file read as one task (with the grader's tokenizer, or another KG's sources, where it needs
them); `SUITES` are the ones the ablation and the mode comparison measure on. `save_profile` resolves and checks a
configuration and saves it where its runs go, `command` is the `local_evaluation.py` command line of one run, and
`read_run` reads a finished run directory back as a `Cell`: the normalized judge's counts from its `summary.json`
and the mean seconds per question from its `predictions.jsonl` (`records`). Used by `evaluation/experiments/ablation.py` and
`evaluation/experiments/modes.py`.
"""
from __future__ import annotations

import argparse
import json
import logging
import shlex
import sys
from dataclasses import dataclass
from pathlib import Path

from evaluation.runner import PREDICTIONS_FILE, one_per_id
from models.config import REPO_ROOT, ConfigError, load_config, save_config
from models.jsonl import read_jsonl

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Suite:
    data: str
    task: int
    tokenizer: str | None = None
    kg_source: str | None = None  # local_evaluation --kg-source: another KG's fixture-format sources


SUITES = {
    "sample": Suite("data/sample/crag_sample.jsonl", 1),
    "dev": Suite("../shared/crag/dev_data.jsonl.bz2", 1, "../shared/crag/tokenizer"),
    "task2": Suite("data/sample/crag_sample.jsonl", 2),
    "task3": Suite("data/sample/crag_sample_task3.jsonl", 3),
    "kg_unseen": Suite("data/acceptance/kg_unseen.jsonl", 2, kg_source="data/kg_acceptance"),
}


@dataclass(frozen=True)
class Cell:
    """One configuration on one suite: counts of the normalized judge and mean seconds per question."""

    status: str  # "ok" | "not run" | "failed"
    correct: int = 0
    missing: int = 0
    hallucination: int = 0
    total: int = 0
    seconds: float = float("nan")

    @property
    def score(self) -> float:
        return (self.correct - self.hallucination) / self.total if self.total else float("nan")


def save_profile(profile: str, overrides: dict, directory: Path, name: str) -> Path | None:
    """`profile` with `overrides`, resolved and checked by `load_config`, saved as `directory/profile.yaml` (its
    path); None after printing why, when the configuration `name` does not load."""
    try:
        config = load_config(profile, overrides)
    except ConfigError as exc:
        print(f"{name}: bad configuration: {exc}", file=sys.stderr)
        return None
    directory.mkdir(parents=True, exist_ok=True)
    save_config(config, directory / "profile.yaml")
    return directory / "profile.yaml"


def records(run_dir: Path) -> list[dict]:
    """The prediction records of a run directory; none when it has no readable predictions.jsonl."""
    try:
        return one_per_id(read_jsonl(run_dir / PREDICTIONS_FILE))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:  # a corrupt file: say so, its seconds then show as n/a
        log.warning("%s: unreadable (%s); its records are left out", run_dir / PREDICTIONS_FILE, exc)
        return []


def read_run(run_dir: Path) -> Cell | None:
    """The cell of a finished local_evaluation run directory, or None when it has no summary."""
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return None
    except (OSError, json.JSONDecodeError) as exc:  # corrupt, not missing: the run shows as n/a, and the log says why
        log.warning("%s: unreadable summary (%s); the run counts as not finished (n/a)", run_dir / "summary.json", exc)
        return None
    m = summary["metrics"]
    rows = records(run_dir)
    try:
        latencies = [float(record["latency_s"]) for record in rows]
    except (KeyError, TypeError, ValueError):
        bad = sum(not isinstance(r.get("latency_s"), (int, float)) for r in rows)
        log.warning("%s: %d of %d records without a readable latency_s; its seconds per question show as n/a",
                    run_dir / PREDICTIONS_FILE, bad, len(rows))
        latencies = []
    seconds = sum(latencies) / len(latencies) if latencies else float("nan")
    return Cell("ok", int(m["n_correct"]), int(m["n_miss"]), int(m["n_hallucination"]), int(m["total"]), seconds)


def command(suite: Suite, profile_path: Path, out_dir: Path, lock: str = "", limit: int | None = None) -> list[str]:
    """The `local_evaluation.py` command line of one run (`lock`: a command prefix, e.g. 'flock LOCKFILE')."""
    cmd = [*shlex.split(lock or ""), sys.executable, str(REPO_ROOT / "local_evaluation.py"), "--profile",
           str(profile_path), "--task", str(suite.task), "--output-dir", str(out_dir), "--data", suite.data]
    if limit:
        cmd += ["--limit", str(limit)]
    if suite.tokenizer:
        cmd += ["--tokenizer", suite.tokenizer]
    if suite.kg_source:
        cmd += ["--kg-source", suite.kg_source]
    return cmd


def add_run_options(parser: argparse.ArgumentParser, output_root: str) -> None:
    """The options every suite runner shares: how many questions, how runs are started, where they go, reruns."""
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--lock", default="", help="command prefix for every run, e.g. 'flock LOCKFILE'")
    parser.add_argument("--output-root", default=output_root)
    parser.add_argument("--rerun", action="store_true", help="run even where a summary exists")
    parser.add_argument("--dry-run", action="store_true", help="write the profiles, print the commands")
