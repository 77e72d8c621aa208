"""The one "current results" table of README.md and docs/results.md, made by a command (scripts/current_results.py)
so that nobody types it.

`SETS` are the measured sets, in the table's order: the reported sets of the catalogue (`evaluation.sets`), each a
`Suite` whose `local_evaluation.py` arguments the table shows (`ResultSet.shown`); each (profile, set) is a grid cell (`evaluation.experiments.grid.run_cell`: a
finished run is read, not run again, unless `rerun`). `read_cell` reads a finished run directory as one stored
figure: the normalized judge's counts and the median seconds per question. The figures live in
`docs/current_results.json` (`load_store` / `save_store`), `render` turns them into the Markdown block (a pure
function: the same figures give the same text) and `write_block` puts it between the markers of each document. `run_current_results` does all of
it for the profiles and sets asked, keeping every other stored figure.
"""
from __future__ import annotations

import datetime
import json
import os
import platform
import shlex
import statistics
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from evaluation.experiments.grid import Outcome, run_cell, run_logged
from evaluation.run_dir import RunDir, current_commit
from evaluation.sets import Suite, reported_sets, sets_table
from models import crag_data
from models.config import REPO_ROOT

PROFILES = ("cpu", "cpu-vllm", "g4dn")  # cpu-vllm: the cpu profile with its LLM on vLLM's CPU build
GPU_PROFILES = ("g4dn",)  # their columns say why they are empty until someone runs them on a GPU
START = "<!-- current-results:start -->"
END = "<!-- current-results:end -->"
STORE = REPO_ROOT / "docs" / "current_results.json"
DOCUMENTS = (REPO_ROOT / "README.md", REPO_ROOT / "docs" / "results.md")
# The table of every set (`evaluation.sets.sets_table`), in docs/results.md beside the figures, made the same way.
SETS_MARKERS = ("<!-- sets:start -->", "<!-- sets:end -->")
SETS_DOCUMENT = REPO_ROOT / "docs" / "results.md"
OUTPUT_ROOT = "outputs/current-results"
COMMAND = "python scripts/current_results.py"


@dataclass(frozen=True)
class ResultSet:
    label: str
    size: int  # questions in the data file (the tests count them)
    suite: Suite

    def shown(self) -> str:
        """The command as the docs print it: CRAG's files as `"$CRAG_DATA/<name>"`, for the shell to expand."""
        return " ".join(f'"{arg}"' if crag_data.crag_name(arg) is not None else shlex.quote(arg)
                        for arg in ["python", "local_evaluation.py", *self.suite.arguments()])

    def heading(self) -> str:
        return f"{self.label} ({self.size}, Task {self.suite.task})"

    def missing_inputs(self, root: Path = REPO_ROOT) -> list[str]:
        """The input files or folders of this set that are not there (e.g. CRAG's, where `$CRAG_DATA` lacks them)."""
        paths = [self.suite.data, self.suite.tokenizer, self.suite.kg_source]
        return [path for path in paths if path and not self._where(path, root).exists()]

    @staticmethod
    def _where(path: str, root: Path) -> Path:
        name = crag_data.crag_name(path)
        return crag_data.crag_path(name) if name is not None else root / path


SETS: dict[str, ResultSet] = {name: ResultSet(s.label, s.size, s.suite()) for name, s in reported_sets().items()}


class MarkerError(ValueError):
    """A document without exactly one start marker followed by exactly one end marker."""


def median_seconds(run: RunDir) -> float | None:
    latencies = run.latencies()
    return statistics.median(latencies) if latencies else None


UNRECORDED = "unrecorded"  # a run folder made before local_evaluation.py kept its commit in summary.json


def read_cell(run_dir: Path, commit: str | None, machine: str) -> dict | None:
    """One stored figure from a finished run directory, None when it has no summary. Its date is the summary's
    (UTC) and its commit the one the run recorded (`summary.json`'s `commit`), so a run read back rather than rerun
    keeps the day and the code it was measured on; `commit` is used only when the summary has none (a run made now),
    else it is "unrecorded"."""
    run = RunDir(run_dir)
    cell = run.cell()
    if cell is None:
        return None
    summary = run.summary()
    judge = summary.get("judge", "normalized")
    commit = summary.get("commit") or commit or UNRECORDED
    date = datetime.datetime.fromtimestamp(run.summary_path.stat().st_mtime, datetime.timezone.utc).date().isoformat()
    return {"correct": cell.correct, "missing": cell.missing, "hallucination": cell.hallucination,
            "total": cell.total, "median_s": median_seconds(run), "date": date, "commit": commit,
            "machine": machine, "judge": judge}


def current_machine() -> str:
    try:
        done = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"], capture_output=True,
                              text=True, timeout=30)
        names = [line.strip() for line in done.stdout.splitlines() if line.strip()] if done.returncode == 0 else []
    except (OSError, subprocess.SubprocessError):
        names = []
    gpus = ", ".join(f"{names.count(n)} x {n}" if names.count(n) > 1 else n for n in dict.fromkeys(names))
    return f"{platform.machine()}, {os.cpu_count()} CPUs, {gpus or 'no GPU'}"


def load_store(path: Path = STORE) -> dict:
    """The stored figures; none yet when the file does not exist."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {"profiles": {}}


def save_store(store: dict, path: Path = STORE) -> None:
    # Sorted keys and an indent: a re-measured set is a few changed lines in the diff.
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(store, indent=2, sort_keys=True) + "\n", encoding="utf-8")


def _figures(cell: dict | None, unmeasured: str) -> list[str]:
    if cell is None:
        return [unmeasured, "", ""]
    total = cell["total"]
    score = f"{(cell['correct'] - cell['hallucination']) / total:+.2f}" if total else "n/a"
    seconds = "n/a" if cell.get("median_s") is None else f"{cell['median_s']:.1f} s"
    return [f"{cell['correct']} / {cell['missing']} / {cell['hallucination']}", score, seconds]


def _provenance(profile: str, cells: dict[str, dict]) -> str:
    """When, at which commit and where a profile's figures were measured: one group per (date, commit, machine,
    judge), oldest first, naming its sets when there are several groups."""
    if not cells:
        return f"`{profile}`: not measured yet" + (" (needs a GPU machine)." if profile in GPU_PROFILES else ".")
    groups: dict[tuple, list[str]] = {}
    for name, cell in cells.items():
        key = (cell["date"], cell["commit"], cell["machine"], cell.get("judge", "normalized"))
        groups.setdefault(key, []).append(name)
    parts = [f"{date} at commit {commit} on {machine}" + (f" ({', '.join(names)})" if len(groups) > 1 else "")
             for (date, commit, machine, _), names in sorted(groups.items())]
    judges = sorted({key[3] for key in groups})
    return f"`{profile}`: measured {'; '.join(parts)}; {', '.join(judges)} judge"


def render(store: dict) -> str:
    """The Markdown block between the markers: the table, one provenance line per profile, how to re-make it."""
    stored = store.get("profiles", {})
    head = ["set"]
    for profile in PROFILES:
        head += [f"`{profile}`: correct / `i don't know` / wrong", f"`{profile}`: score", f"`{profile}`: median s/q"]
    lines = ["| " + " | ".join(head + ["command"]) + " |", "|---" * (len(head) + 1) + "|"]
    for name, result_set in SETS.items():
        row = [result_set.heading()]
        for profile in PROFILES:
            cells = stored.get(profile, {}).get("sets", {})
            unmeasured = "not measured (no GPU run yet)" if not cells and profile in GPU_PROFILES else "not measured"
            row += _figures(cells.get(name), unmeasured)
        lines.append("| " + " | ".join(row + [f"`{result_set.shown()}`"]) + " |")
    for profile in PROFILES:
        cells = stored.get(profile, {}).get("sets", {})
        lines += ["", _provenance(profile, {name: cells[name] for name in SETS if name in cells})]
    lines += ["", f"Re-made by `{COMMAND}` (add `--profiles g4dn` on a GPU machine with the weights in place)."]
    return "\n".join(lines)


def _span(text: str, name: str, markers: tuple[str, str] = (START, END)) -> tuple[int, int]:
    """Where the block of `text` starts and ends (between the markers); MarkerError naming `name` when the markers
    are missing, doubled or out of order."""
    first, last = markers
    if text.count(first) != 1 or text.count(last) != 1:
        raise MarkerError(f"{name}: needs exactly one {first} and one {last} "
                          f"(found {text.count(first)} and {text.count(last)})")
    start, end = text.index(first) + len(first), text.index(last)
    if end < start:
        raise MarkerError(f"{name}: {last} comes before {first}")
    return start, end


def block_of(text: str, name: str, markers: tuple[str, str] = (START, END)) -> str:
    """The block between the markers, without the line breaks that frame it."""
    start, end = _span(text, name, markers)
    return text[start:end].strip("\n")


def replace_block(text: str, block: str, name: str, markers: tuple[str, str] = (START, END)) -> str:
    start, end = _span(text, name, markers)
    return text[:start] + "\n" + block + "\n" + text[end:]


def write_block(block: str, paths: Sequence[Path], markers: tuple[str, str] = (START, END)) -> None:
    """Puts `block` between the markers of every file of `paths`; every file is checked before any is written,
    so one bad file leaves them all as they were (MarkerError)."""
    texts = {Path(path): Path(path).read_text(encoding="utf-8") for path in paths}
    new = {path: replace_block(text, block, str(path), markers) for path, text in texts.items()}
    for path, text in new.items():
        if text != texts[path]:
            path.write_text(text, encoding="utf-8")


def stale(paths: Sequence[Path], store_path: Path = STORE) -> list[str]:
    """Why the documents' blocks are not the rendering of the stored figures (hand-edited, or not re-made); []
    when they are."""
    expected = render(load_store(store_path))
    problems = []
    for path in paths:
        try:
            found = block_of(Path(path).read_text(encoding="utf-8"), str(path))
        except (OSError, MarkerError) as exc:
            problems.append(str(exc))
            continue
        if found != expected:
            problems.append(f"{path}: the current-results block is not the rendering of {store_path}")
    if SETS_DOCUMENT in [Path(p) for p in paths]:
        try:
            found = block_of(SETS_DOCUMENT.read_text(encoding="utf-8"), str(SETS_DOCUMENT), SETS_MARKERS)
        except (OSError, MarkerError) as exc:
            problems.append(str(exc))
        else:
            if found != sets_table():
                problems.append(f"{SETS_DOCUMENT}: the table of sets is not the rendering of evaluation/sets.py")
    return problems


def run_current_results(profiles: Sequence[str] = ("cpu",), sets: Sequence[str] = tuple(SETS), *,
                        output_root: str = OUTPUT_ROOT, rerun: bool = False, limit: int | None = None,
                        dry_run: bool = False, render_only: bool = False, store_path: Path = STORE,
                        documents: Sequence[Path] = DOCUMENTS,
                        run: Callable[[list[str], Path], int] | None = None) -> int:
    """Measures `sets` on `profiles` (a finished run directory is read unless `rerun`), stores the figures that
    came out, keeps every other, and writes the block into `documents`; prints the table. `limit` runs that many
    questions per set into their own folders and writes nothing; `dry_run` prints the commands; `render_only`
    re-makes the documents from the stored figures; `run(command, log_path)` starts one run and returns its exit
    status (default `evaluation.experiments.grid.run_logged`). Returns 2 for bad markers, 1 when a run failed, else 0."""
    run = run or run_logged
    store = load_store(store_path)
    if not limit and not dry_run:
        try:  # before any run: markers found wrong after an hour of runs would lose nothing, but waste the hour
            for path in documents:
                _span(Path(path).read_text(encoding="utf-8"), str(path))
        except (OSError, MarkerError) as exc:
            print(f"error: {exc}; nothing written", file=sys.stderr)
            return 2
    failed = []
    if not render_only:
        commit, machine = current_commit(), current_machine()
        root = Path(output_root).resolve() / (f"limit-{limit}" if limit else "")
        for profile in profiles:
            for name in sets:
                result_set, out_dir = SETS[name], root / profile / name
                missing = result_set.missing_inputs()
                if missing:
                    print(f"[{profile} / {name}] skipped: {', '.join(missing)} not found; its stored figure is kept",
                          flush=True)
                    continue
                outcome = run_cell(f"{profile} / {name}", result_set.suite, profile, out_dir, limit=limit,
                                   rerun=rerun, dry_run=dry_run, run=run)
                if outcome is Outcome.FAILED:
                    failed.append(f"{profile} / {name}")
                    print(f"[{profile} / {name}] its stored figure is kept", file=sys.stderr, flush=True)
                if outcome in (Outcome.FAILED, Outcome.PLANNED):
                    continue
                entry = store.setdefault("profiles", {}).setdefault(profile, {})
                ran_now = outcome is Outcome.RAN
                entry.setdefault("sets", {})[name] = read_cell(out_dir, commit if ran_now else None, machine)
    if dry_run:
        return 0
    block = render(store)
    if limit:
        print(f"\n--limit {limit}: a quick check; nothing written ({store_path} and the documents are as they were)")
    else:
        if not render_only:
            save_store(store, store_path)
        write_block(block, documents)
        if SETS_DOCUMENT in [Path(p) for p in documents]:
            write_block(sets_table(), [SETS_DOCUMENT], SETS_MARKERS)
        print(f"\nwritten: {store_path if not render_only else '(figures unchanged)'}, "
              + ", ".join(str(path) for path in documents))
    print("\n" + block)
    if failed:
        print(f"failed: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0
