"""Ablation of ElectricSheep's stages (seed 001 Table 2), and of the answers computed in code for choice,
yes/no and count questions, with this package's evaluator and normalized judge.

    python scripts/ablation.py [--suites sample dev task2] [--only base +web ...] [--profile cpu] \\
        [--baseline sample=RUN_DIR dev=RUN_DIR task2=RUN_DIR] [--lock "flock LOCKFILE"] \\
        [--output-root outputs/ablation] [--limit N] [--dry-run]

Configurations (rows): the base profile, then one module switched on at a time (web page processing, the
attribute predictor under each dynamic policy, the reasoning step with and without its backup summarizer,
with the calculator, with the knowledge extractor), then all of them, and `computed-off`: the base profile with
`verifier.computed_answers` off (choice, yes/no and count questions checked as before issue 29), and
`kg-checks-off`: the base profile with `kg.program_checks` off (KG programs as generated, before issue 30), and
`sql-off`: the base profile without the SQL source (before issue 31), and `web-arm`: the web pages retrieved by
ARM's information alignment (`web.retriever: arm`, issue 33) instead of recall + rerank, and `web-arm-structure`:
ARM with its structure alignment, drafts and voting (`web.arm.structure.enabled`, issue 34), and the answer gates
of issue 50: `gate-rules` (the hand thresholds), `gate-calibrated` (the fitted `models/gates/cpu.json`), and the
calibrated gate with 3 sampled answers per question or with ARM's structure alignment. Suites (column groups):
the bundled sample (Task 1), the 10 real dev questions (`../shared/crag/dev_data.jsonl.bz2` with the grader's
tokenizer), the Task-2 sample (bundled mock KG API), the Task-3 sample, and `kg_unseen` (62 natural questions
over another KG, `data/kg_acceptance/`, Task 2); `--data/--task/--tokenizer` define one suite of your own instead.

For every configuration, in order (cheapest first), and every suite it resolves and checks the profile with
`load_config`, saves it as `<output-root>/<configuration>/profile.yaml`, runs `local_evaluation.py` in a
subprocess (`--lock` is put in front of it, e.g. a `flock` on a shared lock file so measured runs never
overlap; default none) into `<output-root>/<configuration>/<suite>/`, and reads that run's `summary.json`
(normalized judge) and `predictions.jsonl` (mean seconds per question). A run directory that already has a
summary is read, not rerun (`--rerun` forces it; an unfinished one resumes its predictions). `--baseline
SUITE=DIR` reads the base row of that suite from an existing run directory (e.g. the default profile's
final runs) instead of running it. The table is printed and written to `<output-root>/ablation.md`; a cell
whose run did not happen says "not run", one whose run failed says "failed".
"""
from __future__ import annotations

import argparse
import json
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path


from models.config import REPO_ROOT, ConfigError, load_config, save_config

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
    "computed-off": {"verifier.computed_answers": False},  # issue 29's before: the same code, the switch off
    "kg-checks-off": {"kg.program_checks": False},  # issue 30's before: no KG program checks
    "sql-off": {"pipeline.sources": ["public_data", "kg", "web"]},  # issue 31's before: no SQL source
    "web-arm": {"web.retriever": "arm"},  # issue 33: ARM's information alignment instead of recall + rerank
    # issue 34: ARM with structure alignment, drafts and voting (the support verifier of the CPU profile)
    "web-arm-structure": {"web.retriever": "arm", "web.arm.structure.enabled": True},
    # issue 50: who decides answer or "i don't know": the hand thresholds, or the fitted P(correct) >= 0.5
    "gate-rules": {"verifier.gate": "rules"},
    "gate-calibrated": CALIBRATED,
    "gate-calibrated+samples": {**CALIBRATED, "answering.samples": 3},
    "gate-calibrated+arm-structure": {**CALIBRATED, "web.retriever": "arm", "web.arm.structure.enabled": True},
}


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


def folder(name: str) -> str:
    return name.replace("+", "plus-").replace("(", "-").replace(")", "")


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


def read_run(run_dir: Path) -> Cell | None:
    """The cell of a finished local_evaluation run directory, or None when it has no summary."""
    try:
        summary = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError):
        return None
    m = summary["metrics"]
    latencies = []
    try:
        with open(run_dir / "predictions.jsonl", encoding="utf-8") as fh:
            latencies = [float(json.loads(line)["latency_s"]) for line in fh if line.strip()]
    except (OSError, json.JSONDecodeError, KeyError, ValueError):
        pass
    seconds = sum(latencies) / len(latencies) if latencies else float("nan")
    return Cell("ok", int(m["n_correct"]), int(m["n_miss"]), int(m["n_hallucination"]), int(m["total"]), seconds)


def command(args, suite: Suite, profile_path: Path, out_dir: Path) -> list[str]:
    cmd = [*shlex.split(args.lock or ""), sys.executable, str(REPO_ROOT / "local_evaluation.py"), "--profile",
           str(profile_path), "--task", str(suite.task), "--output-dir", str(out_dir), "--data", suite.data]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    if suite.tokenizer:
        cmd += ["--tokenizer", suite.tokenizer]
    if suite.kg_source:
        cmd += ["--kg-source", suite.kg_source]
    return cmd


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


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--suites", nargs="+", choices=sorted(SUITES), default=list(SUITES))
    parser.add_argument("--data", help="one suite of your own instead of --suites (with --task, --tokenizer)")
    parser.add_argument("--task", type=int, default=1, choices=(1, 2, 3))
    parser.add_argument("--tokenizer")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--only", nargs="+", choices=list(CONFIGURATIONS), help="configurations to run")
    parser.add_argument("--baseline", nargs="+", default=[], metavar="SUITE=DIR",
                        help="read the base row of SUITE from this finished run directory")
    parser.add_argument("--lock", default="", help="command prefix for every run, e.g. 'flock LOCKFILE'")
    parser.add_argument("--output-root", default="outputs/ablation")
    parser.add_argument("--rerun", action="store_true", help="run even where a summary exists")
    parser.add_argument("--dry-run", action="store_true", help="write the profiles, print the commands")
    return parser.parse_args(argv)


def cell(root: Path, name: str, suite: str, baselines: dict[str, str], failed: set) -> Cell:
    """What is known of one configuration on one suite: its run (or the given baseline run), else why not."""
    if name == "base" and suite in baselines:
        return read_run(Path(baselines[suite])) or Cell("not run")  # not (yet) finished there
    return read_run(root / folder(name) / suite) or Cell("failed" if (name, suite) in failed else "not run")


def main(argv=None) -> int:
    args = parse_args(argv)
    suites = {"custom": Suite(args.data, args.task, args.tokenizer)} if args.data else \
        {name: SUITES[name] for name in args.suites}
    baselines = dict(item.split("=", 1) for item in args.baseline)
    unknown = set(baselines) - set(suites)
    if unknown:
        print(f"--baseline for unknown suite(s) {sorted(unknown)}; suites: {sorted(suites)}", file=sys.stderr)
        return 2
    root = Path(args.output_root).resolve()
    failed: set[tuple[str, str]] = set()

    def write_table() -> str:
        text = table({name: {s: cell(root, name, s, baselines, failed) for s in suites} for name in CONFIGURATIONS},
                     list(suites))
        (root / "ablation.md").write_text(text + "\n", encoding="utf-8")
        return text

    for name in args.only or CONFIGURATIONS:
        profile_path = save_profile(args.profile, CONFIGURATIONS[name], root / folder(name), name)
        if profile_path is None:
            return 2
        for suite_name, suite in suites.items():
            out_dir = root / folder(name) / suite_name
            if name == "base" and suite_name in baselines:
                print(f"[{name} / {suite_name}] read from {baselines[suite_name]}", flush=True)
                continue
            if not args.rerun and read_run(out_dir) is not None:
                print(f"[{name} / {suite_name}] already measured in {out_dir}", flush=True)
                continue
            cmd = command(args, suite, profile_path, out_dir)
            print(f"[{name} / {suite_name}] {shlex.join(cmd)}", flush=True)
            if args.dry_run:
                continue
            if args.rerun:
                (out_dir / "summary.json").unlink(missing_ok=True)
            log_path = root / folder(name) / f"{suite_name}.log"
            with open(log_path, "w", encoding="utf-8") as log:
                result = subprocess.run(cmd, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT)
            if result.returncode != 0 or read_run(out_dir) is None:
                failed.add((name, suite_name))
                print(f"[{name} / {suite_name}] failed (exit {result.returncode}); see {log_path}", file=sys.stderr)
            write_table()  # after every run: a stopped ablation keeps the rows it finished
    print("\n" + write_table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
