"""Runs the verifier over a saved run that has no traces (e.g. one from before the verifier existed):
re-retrieves each question's web context with the profile's retriever (no LLM), checks the saved
prediction against it, and writes a predictions.jsonl whose records carry verifier traces, ready for
scripts/sweep_verifier.py.

    python scripts/verify_saved_run.py /tmp/base-sample/predictions.jsonl --out /tmp/base-verified

The context is the web pathway's (public-data facts, which the pipeline puts first, are not rebuilt), so a
prediction that came from public data or the KG is checked against the web pages only. The library is
`evaluation/experiments/verify_saved.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.data import DEFAULT_DATA_PATH
from evaluation.experiments.verify_saved import verify_saved_run


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("predictions", help="a saved predictions.jsonl")
    parser.add_argument("--data", default=DEFAULT_DATA_PATH, help="the data the run answered")
    parser.add_argument("--task", type=int, default=1)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--out", required=True, help="output dir for the traced predictions.jsonl")
    args = parser.parse_args(argv)
    return verify_saved_run(args.predictions, args.out, args.data, args.task, args.profile)


if __name__ == "__main__":
    sys.exit(main())
