"""Accuracy and cost of the static/dynamic attribute predictor (ElectricSheep §4.2).

    python scripts/eval_attributes.py [--profile cpu] [--eval "$CRAG_DATA/dev_data.jsonl.bz2"] [--llm-holdout 60]

Prints, in one run:
- repeated stratified 5-fold cross-validation accuracy of both estimators (logreg, svm) on MiniLM
  embeddings of the training questions (`attributes.training_data`: data/attributes);
- accuracy on `--eval` (the real dev questions, never trained on) of the classifier fitted on all of them,
  and of the LLM few-shot self-consistency predictor (demonstrations drawn from the training questions);
- the LLM predictor's accuracy on `--llm-holdout` training questions held out of its demonstration pool;
- the cost per question of each method (wall ms, one batch).
The library is `evaluation/experiments/attribute_accuracy.py`.
"""
from __future__ import annotations

import argparse

from evaluation.experiments.attribute_accuracy import evaluate_attributes
from models import crag_data


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--eval", default=crag_data.DEV_DATA)
    parser.add_argument("--llm-holdout", type=int, default=60, help="training questions scored by the LLM method")
    parser.add_argument("--samples", type=int, default=5, help="self-consistency votes of the LLM method")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-llm", action="store_true", help="classifier figures only")
    args = parser.parse_args(argv)
    evaluate_attributes(args.profile, args.eval, args.llm_holdout, args.samples, args.threads, args.no_llm)


if __name__ == "__main__":
    main()
