"""The answer gates side by side, each with and without ConfQA's prompt line, on every reported set (the grid's runs,
`evaluation.experiments.grid.run_cell`; the command line is scripts/compare_gates.py).

Gates (`verifier.gate`): `rules` (the hand thresholds), `reader` (the answer reader's P(right) >= 0.5),
`calibrated` (a fitted gate without the reader's feature) and `calibrated-reader` (one fitted with it); each with the
answer prompt as shipped and with `answer_confqa` (ConfQA's "answer only if you are confident" line). A calibrated
configuration whose gate file is not there is listed as not fitted, never run.

The table gives each set's correct / `i don't know` / wrong and score, the sets the gate is fitted on marked
in-sample (`evaluation.sets`), and the score pooled over the sets held out from the gate: (right - wrong) / n over
all their questions. `best` picks the configuration with the highest pooled held-out score; the rules keep the
profile unless another configuration beats them.
"""
from __future__ import annotations

from pathlib import Path
from typing import Mapping, Sequence

from evaluation.experiments.grid import Outcome, run_cell, save_profile
from evaluation.run_dir import Cell, RunDir
from evaluation.sets import GATE, held_out_sets, reported_sets
from models.paths import REPO_ROOT

SETS = {name: s.suite() for name, s in reported_sets().items()}
HELD_OUT = tuple(held_out_sets(GATE))  # pooled: the sets no gate was fitted on
CALIBRATED_GATE = "models/gates/cpu.json"  # fitted without the reader's feature
CALIBRATED_READER_GATE = "models/gates/cpu-reader.json"  # fitted with it (make gate GATE_OUT=...)
GATES: dict[str, dict] = {
    "rules": {"verifier.gate": "rules"},
    "reader": {"verifier.gate": "reader"},
    "calibrated": {"verifier.gate": "calibrated", "verifier.gate_path": CALIBRATED_GATE},
    "calibrated-reader": {"verifier.gate": "calibrated", "verifier.gate_path": CALIBRATED_READER_GATE},
}
PROMPTS: dict[str, dict] = {"": {}, "+confqa": {"pipeline.answer_prompt": "answer_confqa"}}
CONFIGURATIONS: dict[str, dict] = {f"{gate}{arm}": {**GATES[gate], **PROMPTS[arm]} for gate in GATES for arm in PROMPTS}


def missing_gate(overrides: Mapping[str, object]) -> str | None:
    """The gate file a configuration answers through that is not there, else None."""
    path = overrides.get("verifier.gate_path")
    return str(path) if path and not (REPO_ROOT / str(path)).is_file() else None


def pooled(cells: Sequence[Cell]) -> Cell:
    """The finished cells as one: their counts summed (a set not finished leaves the pool incomplete: "not run")."""
    if not cells or any(c.status != "ok" for c in cells):
        return Cell("not run")
    return Cell("ok", sum(c.correct for c in cells), sum(c.missing for c in cells),
                sum(c.hallucination for c in cells), sum(c.total for c in cells))


def read_cells(root: Path, configurations: Sequence[str], sets: Sequence[str]) -> dict[str, dict[str, Cell]]:
    """configuration -> set -> its finished run as a cell ("not run" where there is none)."""
    return {name: {s: RunDir(root / name / s).cell() or Cell("not run") for s in sets} for name in configurations}


def best(cells: Mapping[str, Mapping[str, Cell]], held_out: Sequence[str] = HELD_OUT) -> str:
    """The configuration with the highest pooled held-out score among those measured on every held-out set; `rules`
    unless one scores strictly higher."""
    scores = {name: pooled([row[s] for s in held_out if s in row]) for name, row in cells.items()}
    measured = {name: c.score for name, c in scores.items() if c.status == "ok"}
    top = max(measured.values(), default=None)
    if top is None or measured.get("rules", float("-inf")) >= top:
        return "rules"
    return min(name for name, score in measured.items() if score == top)


def table(cells: Mapping[str, Mapping[str, Cell]], sets: Sequence[str], held_out: Sequence[str] = HELD_OUT) -> str:
    """Markdown: a row per configuration, per set c / m / w and score (in-sample sets marked), then the pool."""
    in_sample = {s for s in sets if s not in held_out}
    head = [f"{s}{' (in-sample)' if s in in_sample else ''}" for s in sets]
    pooled_sets = [s for s in held_out if s in sets]
    lines = ["| configuration | " + " | ".join(head) + " | pooled held out (" + ", ".join(pooled_sets) + ") |",
             "|---" * (len(sets) + 2) + "|"]

    def shown(cell: Cell) -> str:
        if cell.status != "ok":
            return cell.status
        return f"{cell.correct} / {cell.missing} / {cell.hallucination}, {cell.score:+.2f}"

    for name, row in cells.items():
        pool = pooled([row[s] for s in held_out if s in row])
        lines.append(f"| {name} | " + " | ".join(shown(row[s]) for s in sets) + f" | {shown(pool)} |")
    return "\n".join(lines)


def run_answer_gates(configurations: Sequence[str] = tuple(CONFIGURATIONS), sets: Sequence[str] = tuple(SETS), *,
                     profile: str = "cpu", output_root: str = "outputs/answer-gates", limit: int | None = None,
                     lock: str = "", rerun: bool = False, dry_run: bool = False) -> int:
    """Runs (or reads) every (configuration, set) cell, prints the table and the best configuration, and writes
    the table to `<output_root>/answer_gates.md`. Returns 2 when a configuration does not load, 1 when a run
    failed, else 0."""
    root = Path(output_root).resolve()
    failed = []
    for name in configurations:
        overrides = CONFIGURATIONS[name]
        absent = missing_gate(overrides)
        if absent:
            print(f"[{name}] not fitted: {absent} is not there (scripts/fit_gate.py writes it); not run", flush=True)
            continue
        profile_path = save_profile(profile, overrides, root / name, name)
        if profile_path is None:
            return 2
        for set_name in sets:
            outcome = run_cell(f"{name} / {set_name}", SETS[set_name], profile_path, root / name / set_name,
                               limit=limit, lock=lock, rerun=rerun, dry_run=dry_run)
            if outcome is Outcome.FAILED:
                failed.append(f"{name} / {set_name}")
    if dry_run:
        return 0
    cells = read_cells(root, list(configurations), list(sets))
    text = table(cells, list(sets)) + f"\n\nbest pooled over the held-out sets: {best(cells)}"
    root.mkdir(parents=True, exist_ok=True)
    (root / "answer_gates.md").write_text(text + "\n", encoding="utf-8")
    print("\n" + text)
    return 1 if failed else 0
