"""Chooses the verifier's thresholds: replays saved traces under a grid of settings and prints the
accuracy / hallucination / score of each, per run and summed.

    python scripts/sweep_verifier.py outputs/cpu-task1 /tmp/dev10 /tmp/task2 /tmp/task3

Each argument is a `local_evaluation.py` output dir (or its predictions.jsonl) whose records carry traces.
The replayed answers are scored by the deterministic `normalized` judge (the headline) and by the V3 rules
alone (the official numbers without an LLM judge), as local_evaluation.py scores them; the current
profile's setting is marked with `*`. No model is loaded.
The library is `evaluation/experiments/verifier_sweep.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.experiments.verifier_sweep import sweep_verifier


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", help="output dirs or predictions.jsonl files with traces")
    parser.add_argument("--profile", default="cpu", help="the profile whose verifier section is the base")
    parser.add_argument("--tokenizer", help="the grader's tokenizer dir for the exact 75-token trim")
    parser.add_argument("--top", type=int, default=15, help="settings printed, best total score first")
    args = parser.parse_args(argv)
    return sweep_verifier(args.runs, args.profile, args.tokenizer, args.top)


if __name__ == "__main__":
    sys.exit(main())
