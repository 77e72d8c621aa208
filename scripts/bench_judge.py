"""How far the evaluation judge agrees with hand labels, on `data/judge/labels.jsonl`.

    python scripts/bench_judge.py [--judge normalized|rules] [--labels data/judge/labels.jsonl] [--all]

Scores every labelled (question, gold, prediction) as `local_evaluation.py` does (V3 exact and invalid
rules, then the judge; no LLM) and prints: agreement on the decided rows, the undecided (unjudged) share,
the confusion matrix, the same per source (sample, dev, task2, task3, hard) and for the held-out rows
(written after the judge's rules were frozen), all and per batch, every disagreement, and every
row labelled incorrect that the judge called correct. With --all it also lists the undecided rows.
Exit status 0 when the thresholds hold (agreement >= 95 % on decided rows, undecided <= 10 %, no hard row
called correct when labelled incorrect), 1 otherwise, so CI can run it. The library is `evaluation/bench/judge.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.bench.judge import JUDGES, bench_judge
from evaluation.experiments.judge_agreement import LABELS_PATH


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judge", choices=tuple(JUDGES), default="normalized")
    parser.add_argument("--labels", default=str(LABELS_PATH), help="labelled rows (JSONL)")
    parser.add_argument("--all", action="store_true", help="also list the undecided rows")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return bench_judge(args.judge, args.labels, args.all)


if __name__ == "__main__":
    sys.exit(main())
