"""Accuracy and cost of the static/dynamic attribute predictor (ElectricSheep §4.2).

    python scripts/eval_attributes.py [--profile cpu] [--eval ../shared/crag/dev_data.jsonl.bz2] [--llm-holdout 60]

Prints, in one run:
- repeated stratified 5-fold cross-validation accuracy of both estimators (logreg, svm) on MiniLM
  embeddings of the training questions (`attributes.training_data`: data/attributes);
- accuracy on `--eval` (the real dev questions, never trained on) of the classifier fitted on all of them,
  and of the LLM few-shot self-consistency predictor (demonstrations drawn from the training questions);
- the LLM predictor's accuracy on `--llm-holdout` training questions held out of its demonstration pool;
- the cost per question of each method (wall ms, one batch).
"""
from __future__ import annotations

import argparse
import logging
import os
import random
import time
from dataclasses import replace


import numpy as np

from models.attributes import AttributeConfig, LLMAttributePredictor, binary_label, load_attribute_labels
from models.config import load_config
from evaluation.data import load_examples
from models.routing.classifier import DomainClassifier, compare_estimators


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def accuracy(predicted, gold) -> str:
    hits = sum(p == g for p, g in zip(predicted, gold))
    return f"{hits}/{len(gold)} = {hits / len(gold):.3f}" if gold else "n/a"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--eval", default="../shared/crag/dev_data.jsonl.bz2")
    parser.add_argument("--llm-holdout", type=int, default=60, help="training questions scored by the LLM method")
    parser.add_argument("--samples", type=int, default=5, help="self-consistency votes of the LLM method")
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--no-llm", action="store_true", help="classifier figures only")
    args = parser.parse_args()
    logging.basicConfig(level=logging.WARNING)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    import torch
    torch.set_num_threads(args.threads)

    from models.llm.generator import make_generator
    from models.embedder import Embedder

    config = load_config(args.profile)
    attributes = replace(AttributeConfig(), samples=args.samples)
    texts, labels = load_attribute_labels(attributes.training_data)
    embedder = Embedder.from_config(config.embedder, config.models_dir)
    print(f"training questions: {len(texts)} ({labels.count('static')} static, {labels.count('dynamic')} dynamic)")
    cv = compare_estimators(texts, labels, embedder)
    print("5x5-fold CV accuracy: " + ", ".join(f"{name} {value:.3f}" for name, value in cv.items()))
    print(f"majority-class baseline: {max(labels.count('static'), labels.count('dynamic')) / len(labels):.3f}")

    examples = [e for e in load_examples(args.eval) if binary_label(e.get("static_or_dynamic"))]
    dev_texts = [e["query"] for e in examples]
    dev_gold = [binary_label(e["static_or_dynamic"]) for e in examples]
    embedder.encode(["warm-up"])
    for estimator in ("logreg", "svm"):
        classifier = DomainClassifier.fit(texts, labels, embedder, estimator)
        predicted, seconds = timed(classifier.predict, dev_texts, embedder)
        print(f"classifier ({estimator}) on {args.eval}: {accuracy(predicted, dev_gold)}, "
              f"{seconds * 1000 / max(1, len(dev_texts)):.1f} ms/question")

    if args.no_llm:
        return
    generator = make_generator(config.llm, config.models_dir)
    llm = LLMAttributePredictor(attributes, generator, list(zip(texts, labels)))
    predicted_llm, seconds = timed(llm.predict, dev_texts)
    print(f"LLM few-shot x{args.samples} self-consistency ({config.llm.path}) on {args.eval}: "
          f"{accuracy(predicted_llm, dev_gold)}, {seconds * 1000 / max(1, len(dev_texts)):.0f} ms/question")
    for text, gold, guess in zip(dev_texts, dev_gold, predicted_llm):
        print(f"  {gold:7} llm={guess:7} {text[:90]}")

    order = list(range(len(texts)))
    random.Random(0).shuffle(order)
    held, pool = order[:args.llm_holdout], order[args.llm_holdout:]
    holdout = LLMAttributePredictor(attributes, generator, [(texts[i], labels[i]) for i in pool])
    predicted_held, seconds = timed(holdout.predict, [texts[i] for i in held])
    gold_held = [labels[i] for i in held]
    print(f"LLM few-shot x{args.samples} on {len(held)} held-out training questions: "
          f"{accuracy(predicted_held, gold_held)} (all-dynamic baseline "
          f"{np.mean([g == 'dynamic' for g in gold_held]):.3f}), {seconds * 1000 / max(1, len(held)):.0f} ms/question")


if __name__ == "__main__":
    main()
