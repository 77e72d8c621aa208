"""Are two evaluation runs' predictions the same? For refactors that must not change a single answer.

    python scripts/compare_runs.py BEFORE AFTER          # two run folders, or two folders of run folders
    python scripts/compare_runs.py /tmp/before /tmp/after --sets sample dev task2 task3

A run folder is what `local_evaluation.py --output-dir` writes (its `predictions.jsonl`). Given folders of run
folders, the runs are paired by name. For each pair: how many questions both answered, how many predictions are
byte-identical, how many came from the same pathway (`source`), and every difference with its question. Exit
status 1 when a prediction differs or a question is in only one run. The library is `evaluation/compare.py`.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluation.compare import compare_runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--sets", nargs="*", default=[], help="sub-run names (default: every one in BEFORE)")
    args = parser.parse_args(argv)
    return compare_runs(args.before, args.after, args.sets)


if __name__ == "__main__":
    sys.exit(main())
