"""Trains the embedding + scikit-learn domain router and saves its artefact (`models/routing/classifier.py`).

    python scripts/train_router.py                                   # data/router -> the profile's path
    python scripts/train_router.py --data crag_task_1_and_2_dev_v4.jsonl.bz2 data/router --compare
    python scripts/train_router.py --eval "$CRAG_DATA/dev_data.jsonl.bz2"

The embedder is the profile's embedder (`--profile`, default `$CRAG_PROFILE`), because the router
reads the vectors that embedder produces at inference. `--compare` prints repeated stratified 5-fold
accuracy of both estimators on the training data before fitting the chosen one; `--eval` scores the
fitted router on any labelled CRAG-format file.
"""
from __future__ import annotations

import argparse
import logging

from models.routing.classifier import ESTIMATORS
from training.router import train_router


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default=None, help="profile name or YAML path (default $CRAG_PROFILE)")
    parser.add_argument("--data", nargs="+", default=None, help="labelled files/folders (default: profile's)")
    parser.add_argument("--out", default=None, help="artefact path (default: the profile's classifier_path)")
    parser.add_argument("--estimator", choices=ESTIMATORS, default=None)
    parser.add_argument("--compare", action="store_true", help="cross-validate every estimator first")
    parser.add_argument("--eval", nargs="*", default=(), help="labelled files to score the trained router on")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    train_router(args.profile, args.data, args.out, args.estimator, args.compare, args.eval)


if __name__ == "__main__":
    main()
