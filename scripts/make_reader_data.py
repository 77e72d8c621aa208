"""Writes the answer reader's training examples, `data/reader/reader_examples.jsonl`, from the answer gate's fit sets.

    python scripts/make_reader_data.py                                   # (re)writes the file
    python scripts/make_reader_data.py --check                           # exit 1 if the committed file differs
    python scripts/make_reader_data.py --runs outputs/gate-fit/cpu/gate_web ...   # with traced candidates too

Right candidates the web questions' own pages state, wrong ones read off pages that state none, candidates of
traced runs of the fit sets labelled by the package's judge (`--runs`: what `make gate` collected), and one
TinyLettuce error made from each right candidate; no question of a reported set is used (the held-out rule). The
library is `training/reader/examples.py`. The output is deterministic for a seed and its inputs, so `--check`
compares bytes.
"""
from __future__ import annotations

import argparse
import sys

from models.paths import REPO_ROOT
from training.reader.examples import OUTPUT, make_reader_data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(REPO_ROOT / OUTPUT))
    parser.add_argument("--runs", nargs="*", default=[], metavar="RUN_DIR",
                        help="traced runs of the gate's fit sets (local_evaluation.py output dirs)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)
    return make_reader_data(args.out, args.runs, args.seed, args.check)


if __name__ == "__main__":
    sys.exit(main())
