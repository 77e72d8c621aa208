"""Are two evaluation runs' predictions the same? For refactors that must not change a single answer.

    python scripts/compare_runs.py BEFORE AFTER          # two run folders, or two folders of run folders
    python scripts/compare_runs.py /tmp/before /tmp/after --sets sample dev task2 task3

A run folder is what `local_evaluation.py --output-dir` writes (its `predictions.jsonl`). Given folders of run
folders, the runs are paired by name. For each pair: how many questions both answered, how many predictions are
byte-identical, how many came from the same pathway (`source`), and every difference with its question. Exit
status 1 when a prediction differs or a question is in only one run.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

PREDICTIONS = "predictions.jsonl"


def load(run: Path) -> dict[str, dict]:
    """interaction_id -> prediction record of one run."""
    records = {}
    for line in (run / PREDICTIONS).read_text(encoding="utf-8").splitlines():
        if line.strip():
            record = json.loads(line)
            records[record["interaction_id"]] = record
    return records


def compare(before: Path, after: Path) -> dict:
    """The comparison of two run folders: counts and the differing questions."""
    a, b = load(before), load(after)
    shared = [i for i in a if i in b]
    differing = [{"interaction_id": i, "query": a[i].get("query", ""), "before": a[i]["prediction"],
                  "after": b[i]["prediction"]} for i in shared if a[i]["prediction"] != b[i]["prediction"]]
    return {"questions": len(shared), "only_before": sorted(set(a) - set(b)), "only_after": sorted(set(b) - set(a)),
            "identical": len(shared) - len(differing), "same_source": sum(a[i].get("source") == b[i].get("source")
                                                                          for i in shared),
            "differing": differing}


def pairs(before: Path, after: Path, sets: list[str]) -> list[tuple[str, Path, Path]]:
    """(name, before run, after run): the folders themselves when they are runs, else their named sub-runs."""
    if (before / PREDICTIONS).exists() and (after / PREDICTIONS).exists():
        return [(before.name, before, after)]
    names = sets or sorted(p.name for p in before.iterdir() if (p / PREDICTIONS).exists())
    missing = [n for n in names if not (before / n / PREDICTIONS).exists() or not (after / n / PREDICTIONS).exists()]
    if missing:
        raise SystemExit(f"no {PREDICTIONS} for {missing} in both {before} and {after}")
    return [(name, before / name, after / name) for name in names]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--sets", nargs="*", default=[], help="sub-run names (default: every one in BEFORE)")
    args = parser.parse_args(argv)
    print("| set | questions | identical predictions | same pathway | only in one run |\n|---|---|---|---|---|")
    failed = False
    details = []
    for name, before, after in pairs(args.before, args.after, args.sets):
        result = compare(before, after)
        only = len(result["only_before"]) + len(result["only_after"])
        print(f"| {name} | {result['questions']} | {result['identical']} / {result['questions']} | "
              f"{result['same_source']} / {result['questions']} | {only} |")
        failed |= bool(result["differing"]) or only > 0
        details += [(name, d) for d in result["differing"]]
    for name, d in details:
        print(f"{name} {d['interaction_id']} ({d['query']!r}): {d['before']!r} -> {d['after']!r}")
    print("identical" if not failed else "DIFFERENT")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
