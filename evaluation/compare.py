"""Are two evaluation runs' predictions the same? The refactor check behind scripts/compare_runs.py.

`compare` pairs two run folders' prediction records by question (`load`: interaction_id -> record of a run's
predictions.jsonl) and counts the questions both answered, the byte-identical predictions and those from the same
pathway (`source`), listing every difference with its question; `pairs` matches runs by name when given folders of
run folders; `compare_runs` prints the table and the differences and returns the exit status (1 when a prediction
differs or a question is in only one run).
"""
from __future__ import annotations

from pathlib import Path

from evaluation.run_dir import RunDir


def load(run: Path) -> dict[str, dict]:
    """interaction_id -> prediction record of one run (an id's last record)."""
    return {record["interaction_id"]: record for record in RunDir(run).records()}


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
    if RunDir(before).has_predictions() and RunDir(after).has_predictions():
        return [(before.name, before, after)]
    names = sets or sorted(p.name for p in before.iterdir() if RunDir(p).has_predictions())
    missing = [n for n in names if not (RunDir(before / n).has_predictions() and RunDir(after / n).has_predictions())]
    if missing:
        raise SystemExit(f"no {RunDir.PREDICTIONS} for {missing} in both {before} and {after}")
    return [(name, before / name, after / name) for name in names]


def compare_runs(before: Path, after: Path, sets: list[str] = ()) -> int:
    """Prints, per pair of runs, the counts and then every difference; 1 when any differs, else 0."""
    print("| set | questions | identical predictions | same pathway | only in one run |\n|---|---|---|---|---|")
    failed = False
    details = []
    for name, run_before, run_after in pairs(before, after, list(sets)):
        result = compare(run_before, run_after)
        only = len(result["only_before"]) + len(result["only_after"])
        print(f"| {name} | {result['questions']} | {result['identical']} / {result['questions']} | "
              f"{result['same_source']} / {result['questions']} | {only} |")
        failed |= bool(result["differing"]) or only > 0
        details += [(name, d) for d in result["differing"]]
    for name, d in details:
        print(f"{name} {d['interaction_id']} ({d['query']!r}): {d['before']!r} -> {d['after']!r}")
    print("identical" if not failed else "DIFFERENT")
    return 1 if failed else 0
