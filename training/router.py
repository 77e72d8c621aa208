"""Trains the embedding + scikit-learn domain router of a profile and saves it (`models/routing/classifier.py`).

    train_router("cpu", compare=True)                                   # data/router -> the profile's path
    train_router(None, data=["crag_task_1_and_2_dev_v4.jsonl.bz2", "data/router"], eval_paths=["dev.jsonl.bz2"])

The embedder is the profile's embedder, because the router reads the vectors that embedder produces at inference.
`compare` prints repeated stratified 5-fold accuracy of both estimators on the training data before fitting the
chosen one; `eval_paths` are labelled CRAG-format files the fitted router is scored on. Its command line is
scripts/train_router.py.
"""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Sequence

from models.config import load_config
from models.embedder import Embedder
from models.paths import resolve_repo_path
from models.routing.classifier import DomainClassifier, compare_estimators, load_labelled_queries


def train_router(profile: str | None = None, data: Sequence[str] | None = None, out: str | None = None,
                 estimator: str | None = None, compare: bool = False, eval_paths: Sequence[str] = ()) -> Path:
    """Fits the router of `profile` (None: `$CRAG_PROFILE`) on the labelled files/folders `data` (default: the
    profile's `routing.training_data`) with `estimator` (default: the profile's), saves it to `out` (default: the
    profile's `routing.classifier_path`) and prints what it did; returns the artefact's path."""
    config = load_config(profile)
    routing = config.routing
    embedder = Embedder.from_config(config.embedder, config.models_dir)
    texts, labels = load_labelled_queries(data or routing.training_data)
    print(f"training queries: {len(texts)} {dict(sorted(Counter(labels).items()))}")
    if compare:
        for name, score in compare_estimators(texts, labels, embedder).items():
            print(f"  {name:7s} 5x5-fold accuracy {score:.3f}")
    estimator = estimator or routing.estimator
    classifier = DomainClassifier.fit(texts, labels, embedder, estimator)
    out = resolve_repo_path(out or routing.classifier_path)
    classifier.save(out)
    print(f"saved {estimator} router to {out}")
    for path in eval_paths:
        eval_texts, eval_labels = load_labelled_queries([path])
        print(f"  accuracy on {path}: {classifier.accuracy(eval_texts, eval_labels, embedder):.3f} "
              f"({len(eval_texts)} queries)")
    return out
