"""The ablation of ElectricSheep's stages (Yuan et al. 2024, Table 2) and of later switches: its configurations, its runs
and its table (the command line is scripts/ablation.py, whose docstring describes the rows and suites).

`CONFIGURATIONS` maps each row to the profile overrides it measures, cheapest first. `run_ablation` saves each
configuration's profile, runs every (configuration, suite) cell as a grid cell (`evaluation.experiments.grid.run_cell`: a
finished run is read, not run again, unless `rerun`), reads the runs back (`evaluation.run_dir`) and writes the
Markdown `table` after every run, so a stopped ablation keeps the rows it finished.
"""
from __future__ import annotations

import sys
from pathlib import Path

from evaluation.experiments.grid import SUITES, Outcome, run_cell, save_profile
from evaluation.sets import Suite
from evaluation.run_dir import Cell, RunDir

WEB = {"web.main_content.enabled": True, "web.sentence_chunks.enabled": True}
ATTRIBUTES = {"attributes.enabled": True}
CALCULATOR = {"calculator.enabled": True}
KNOWLEDGE = {"reasoning.knowledge.enabled": True}
REASONING = {"reasoning.enabled": True}
CALIBRATED = {"verifier.gate": "calibrated", "verifier.gate_path": "models/gates/cpu.json"}
NO_BACKUP = {"reasoning.backup.enabled": False}
# Cheapest first: the retrieval and attribute rows add milliseconds per question, the LLM stages seconds.
CONFIGURATIONS: dict[str, dict] = {
    "base": {},
    "+web": WEB,
    "+attributes(idk)": ATTRIBUTES,
    "+attributes(verify)": {**ATTRIBUTES, "attributes.dynamic_policy": "verify"},
    "+reasoning": REASONING,
    "+reasoning-backup": {**REASONING, **NO_BACKUP},
    "+reasoning+calculator": {**REASONING, **CALCULATOR},
    "+reasoning+knowledge": {**REASONING, **KNOWLEDGE},
    "all": {**WEB, **ATTRIBUTES, **CALCULATOR, **KNOWLEDGE, **REASONING},
    "computed-off": {"verifier.computed_answers": False},  # answers computed in code for choice, yes/no, count: off
    "kg-checks-off": {"kg.program_checks": False},  # no KG program checks (programs run as generated)
    "sql-off": {"pipeline.sources": ["public_data", "kg", "web"]},  # no SQL source
    "web-arm": {"web.retriever": "arm"},  # ARM's information alignment instead of recall + rerank
    # ARM with structure alignment, drafts and voting (the support verifier of the CPU profile)
    "web-arm-structure": {"web.retriever": "arm", "web.arm.structure.enabled": True},
    # the answer gate: who decides answer or "i don't know": the hand thresholds, or the fitted P(correct) >= 0.5
    "gate-rules": {"verifier.gate": "rules"},
    "gate-calibrated": CALIBRATED,
    "gate-calibrated+samples": {**CALIBRATED, "answering.samples": 3},
    "gate-calibrated+arm-structure": {**CALIBRATED, "web.retriever": "arm", "web.arm.structure.enabled": True},
}


def folder(name: str) -> str:
    return name.replace("+", "plus-").replace("(", "-").replace(")", "")


def table(rows: dict[str, dict[str, Cell]], suites: list[str]) -> str:
    """Markdown, the shape of ElectricSheep's Table 2: one row per configuration, per suite the counts of
    correct / missing / hallucinated answers, the score ((correct - hallucinated) / n) and seconds per question."""
    head = "| configuration | " + " | ".join(f"{s}: correct / missing / halluc. (n) | {s}: score | {s}: s/q"
                                             for s in suites) + " |"
    lines = [head, "|---" * (1 + 3 * len(suites)) + "|"]
    for name, cells in rows.items():
        parts = []
        for suite in suites:
            cell = cells.get(suite, Cell("not run"))
            if cell.status != "ok":
                parts += [cell.status, "", ""]
            else:
                parts += [f"{cell.correct} / {cell.missing} / {cell.hallucination} ({cell.total})",
                          f"{cell.score:+.3f}", f"{cell.seconds:.1f}"]
        lines.append(f"| {name} | " + " | ".join(parts) + " |")
    return "\n".join(lines)


def cell(root: Path, name: str, suite: str, baselines: dict[str, str], failed: set) -> Cell:
    """What is known of one configuration on one suite: its run (or the given baseline run), else why not."""
    if name == "base" and suite in baselines:
        return RunDir(baselines[suite]).cell() or Cell("not run")  # not (yet) finished there
    return RunDir(root / folder(name) / suite).cell() or Cell("failed" if (name, suite) in failed else "not run")


def run_ablation(suite_names: list[str] = tuple(SUITES), *, data: str | None = None, task: int = 1,
                 tokenizer: str | None = None, profile: str = "cpu", only: list[str] | None = None,
                 baseline: list[str] = (), lock: str = "", limit: int | None = None,
                 output_root: str = "outputs/ablation", rerun: bool = False, dry_run: bool = False) -> int:
    """Runs (or reads) every configuration of `only` (default all) on the suites named (or on one suite of your
    own, `data` read as `task` with `tokenizer`), prints the table and writes it to `<output_root>/ablation.md`;
    `baseline` items `SUITE=DIR` read the base row of a suite from a finished run directory.
    Returns the exit status: 2 for a baseline of an unknown suite or a configuration that does not load, else 0."""
    suites = {"custom": Suite(data, task, tokenizer)} if data else {name: SUITES[name] for name in suite_names}
    baselines = dict(item.split("=", 1) for item in baseline)
    unknown = set(baselines) - set(suites)
    if unknown:
        print(f"--baseline for unknown suite(s) {sorted(unknown)}; suites: {sorted(suites)}", file=sys.stderr)
        return 2
    root = Path(output_root).resolve()
    failed: set[tuple[str, str]] = set()

    def write_table() -> str:
        text = table({name: {s: cell(root, name, s, baselines, failed) for s in suites} for name in CONFIGURATIONS},
                     list(suites))
        (root / "ablation.md").write_text(text + "\n", encoding="utf-8")
        return text

    for name in only or CONFIGURATIONS:
        profile_path = save_profile(profile, CONFIGURATIONS[name], root / folder(name), name)
        if profile_path is None:
            return 2
        for suite_name, suite in suites.items():
            out_dir = root / folder(name) / suite_name
            if name == "base" and suite_name in baselines:
                print(f"[{name} / {suite_name}] read from {baselines[suite_name]}", flush=True)
                continue
            outcome = run_cell(f"{name} / {suite_name}", suite, profile_path, out_dir, limit=limit, lock=lock,
                               rerun=rerun, dry_run=dry_run)
            if outcome is Outcome.FAILED:
                failed.add((name, suite_name))
            if outcome in (Outcome.RAN, Outcome.FAILED):
                write_table()  # after every run: a stopped ablation keeps the rows it finished
    print("\n" + write_table())
    return 0
