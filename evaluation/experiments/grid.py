"""A grid of `local_evaluation.py` runs: one run folder per cell (a profile on a suite), run one at a time and read
back with `evaluation.run_dir.RunDir`. The ablation, the mode comparison, the current-results table and the gate's
fit sets are such grids.

A suite is a data file read as one task (`evaluation.sets.Suite`: with the grader's tokenizer, or another KG's
sources, where it needs them); `SUITES` are the ones the ablation and the mode comparison measure on, the reported
sets of the catalogue (`evaluation.sets`) held out from the answer gate. `save_profile` resolves and checks a
configuration and saves it where its runs go, `command` is the `local_evaluation.py` command line of one cell and
`run_cell` runs one cell under the one rule every grid follows:

- a cell whose run folder is finished (a readable `summary.json`) is read back, not run, unless `rerun`;
- a cell that is run loses its old summary first, so a run that fails never reads as finished;
- a rerun starts afresh (`--no-resume`); any other run resumes the predictions an interrupted run left.

A cell's output goes to `<its folder>.log` beside its folder.
"""
from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
from enum import Enum
from pathlib import Path
from typing import Callable, Mapping

from evaluation.run_dir import RunDir
from evaluation.sets import GATE, Suite, held_out_sets
from models.config import REPO_ROOT, ConfigError, load_config, save_config

LOCAL_EVALUATION = REPO_ROOT / "local_evaluation.py"


# The suites the ablation and the mode comparison measure on: the reported sets the answer gate was never fitted on.
SUITES = {name: s.suite() for name, s in held_out_sets(GATE).items()}


class Outcome(Enum):
    """What `run_cell` did with a cell."""

    READ = "read"  # finished before: read back, not run
    PLANNED = "planned"  # a dry run: the command printed, nothing run
    RAN = "ran"  # run now, and finished
    FAILED = "failed"  # run now, and not finished (its exit status and log say why)


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


def command(suite: Suite, profile: str | Path | None, out_dir: Path, *, limit: int | None = None,
            overrides: Mapping[str, str] | None = None, fresh: bool = False, lock: str = "") -> list[str]:
    """The `local_evaluation.py` command line of one cell: `suite` under `profile` (a name or a YAML path; None:
    local_evaluation's default) with `overrides` (`--set KEY=VALUE`) into `out_dir`, afresh (`--no-resume`) when
    `fresh`, the first `limit` questions only when given; `lock` is a command prefix, e.g. 'flock LOCKFILE'."""
    cmd = [*shlex.split(lock or ""), sys.executable, str(LOCAL_EVALUATION), *suite.arguments(explicit=True)]
    if profile is not None:
        cmd += ["--profile", str(profile)]
    cmd += ["--output-dir", str(out_dir)]
    for key, value in (overrides or {}).items():
        cmd += ["--set", f"{key}={value}"]
    if fresh:
        cmd.append("--no-resume")
    if limit:
        cmd += ["--limit", str(limit)]
    return cmd


def run_logged(cmd: list[str], log_path: Path) -> int:
    """Runs one evaluation from the repository root, its output in `log_path`; its exit status."""
    with open(log_path, "w", encoding="utf-8") as log:
        return subprocess.run(cmd, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT).returncode


def run_cell(label: str, suite: Suite, profile: str | Path | None, out_dir: Path, *, limit: int | None = None,
             overrides: Mapping[str, str] | None = None, lock: str = "", rerun: bool = False, dry_run: bool = False,
             run: Callable[[list[str], Path], int] = run_logged) -> Outcome:
    """Runs (or reads) one cell by the module's rule, saying what it does on one line headed `[label]`;
    `run(command, log_path)` starts the evaluation and returns its exit status (default `run_logged`)."""
    folder = RunDir(out_dir)
    if not rerun and folder.finished():
        print(f"[{label}] read from {out_dir} (finished; --rerun runs it again)", flush=True)
        return Outcome.READ
    cmd = command(suite, profile, out_dir, limit=limit, overrides=overrides, fresh=rerun, lock=lock)
    print(f"[{label}] {shlex.join(cmd)}", flush=True)
    if dry_run:
        return Outcome.PLANNED
    folder.summary_path.unlink(missing_ok=True)
    out_dir.mkdir(parents=True, exist_ok=True)
    log_path = out_dir.parent / f"{out_dir.name}.log"
    code = run(cmd, log_path)
    if code != 0 or not folder.finished():
        print(f"[{label}] failed (exit {code}); see {log_path}", file=sys.stderr, flush=True)
        return Outcome.FAILED
    return Outcome.RAN


def add_run_options(parser: argparse.ArgumentParser, output_root: str) -> None:
    """The options every suite grid shares: how many questions, how runs are started, where they go, reruns."""
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--lock", default="", help="command prefix for every run, e.g. 'flock LOCKFILE'")
    parser.add_argument("--output-root", default=output_root)
    parser.add_argument("--rerun", action="store_true", help="run again, afresh, even where a run has finished")
    parser.add_argument("--dry-run", action="store_true", help="write the profiles, print the commands")
