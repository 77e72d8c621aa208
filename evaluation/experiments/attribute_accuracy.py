"""Accuracy and cost of the static/dynamic attribute predictor (ElectricSheep §4.2), as scripts/eval_attributes.py
prints them (its docstring lists the figures).

`evaluate_attributes` cross-validates both estimators on the training questions, scores the classifier fitted on
all of them and the LLM few-shot self-consistency predictor on the evaluation questions (`accuracy`), and the LLM
predictor on training questions held out of its demonstrations, timing each method per question (`timed`).
"""
from __future__ import annotations

import logging
import os
import random
import time
from dataclasses import replace

import numpy as np

from evaluation.data import load_examples
from models import crag_data
from models.attributes import AttributeConfig, LLMAttributePredictor, binary_label, load_attribute_labels
from models.config import load_config
from models.routing.classifier import DomainClassifier, compare_estimators


def timed(function, *args):
    start = time.perf_counter()
    result = function(*args)
    return result, time.perf_counter() - start


def accuracy(predicted, gold) -> str:
    hits = sum(p == g for p, g in zip(predicted, gold))
    return f"{hits}/{len(gold)} = {hits / len(gold):.3f}" if gold else "n/a"


def evaluate_attributes(profile: str = "cpu", eval_data: str = crag_data.DEV_DATA,
                        llm_holdout: int = 60, samples: int = 5, threads: int = 1, no_llm: bool = False) -> None:
    """Prints every figure of the attribute predictor (the classifier's only, with `no_llm`)."""
    logging.basicConfig(level=logging.WARNING)
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    import torch
    torch.set_num_threads(threads)

    from models.llm.generator import make_generator
    from models.embedder import Embedder

    config = load_config(profile)
    attributes = replace(AttributeConfig(), samples=samples)
    texts, labels = load_attribute_labels(attributes.training_data)
    embedder = Embedder.from_config(config.embedder, config.models_dir)
    print(f"training questions: {len(texts)} ({labels.count('static')} static, {labels.count('dynamic')} dynamic)")
    cv = compare_estimators(texts, labels, embedder)
    print("5x5-fold CV accuracy: " + ", ".join(f"{name} {value:.3f}" for name, value in cv.items()))
    print(f"majority-class baseline: {max(labels.count('static'), labels.count('dynamic')) / len(labels):.3f}")

    examples = [e for e in load_examples(eval_data) if binary_label(e.get("static_or_dynamic"))]
    dev_texts = [e["query"] for e in examples]
    dev_gold = [binary_label(e["static_or_dynamic"]) for e in examples]
    embedder.encode(["warm-up"])
    for estimator in ("logreg", "svm"):
        classifier = DomainClassifier.fit(texts, labels, embedder, estimator)
        predicted, seconds = timed(classifier.predict, dev_texts, embedder)
        print(f"classifier ({estimator}) on {eval_data}: {accuracy(predicted, dev_gold)}, "
              f"{seconds * 1000 / max(1, len(dev_texts)):.1f} ms/question")

    if no_llm:
        return
    generator = make_generator(config.llm, config.models_dir)
    llm = LLMAttributePredictor(attributes, generator, list(zip(texts, labels)))
    predicted_llm, seconds = timed(llm.predict, dev_texts)
    print(f"LLM few-shot x{samples} self-consistency ({config.llm.path}) on {eval_data}: "
          f"{accuracy(predicted_llm, dev_gold)}, {seconds * 1000 / max(1, len(dev_texts)):.0f} ms/question")
    for text, gold, guess in zip(dev_texts, dev_gold, predicted_llm):
        print(f"  {gold:7} llm={guess:7} {text[:90]}")

    order = list(range(len(texts)))
    random.Random(0).shuffle(order)
    held, pool = order[:llm_holdout], order[llm_holdout:]
    holdout = LLMAttributePredictor(attributes, generator, [(texts[i], labels[i]) for i in pool])
    predicted_held, seconds = timed(holdout.predict, [texts[i] for i in held])
    gold_held = [labels[i] for i in held]
    print(f"LLM few-shot x{samples} on {len(held)} held-out training questions: "
          f"{accuracy(predicted_held, gold_held)} (all-dynamic baseline "
          f"{np.mean([g == 'dynamic' for g in gold_held]):.3f}), {seconds * 1000 / max(1, len(held)):.0f} ms/question")
