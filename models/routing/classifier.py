"""The router that needs no LLM call: sentence embeddings + a linear scikit-learn classifier.

ElectricSheep found an SVM on query embeddings more accurate and far cheaper than in-context
classification; here the embedder is the shared one (`models.embedder`, loaded once for every pathway), so
routing costs one batched `encode` of the queries. Design decisions:
- The artefact is a joblib file holding the fitted estimator plus a *fingerprint* of the embedder it was
  trained on (the embedding of a fixed probe sentence). Loading it next to a different embedder (another
  profile, another model) would silently produce garbage, so a mismatch is detected and the classifier is
  retrained from the profile's `training_data` (seconds) instead.
- Nothing binary is committed: a fresh clone trains from the bundled `data/router/*.jsonl` on first use
  and caches the artefact under `.cache/` (git-ignored).
- Training data is any CRAG-format file (`.jsonl` or `.jsonl.bz2`) whose rows carry `query` and `domain`;
  rows with another domain are skipped and counted, never fatal.
"""
from __future__ import annotations

import logging
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import joblib
import numpy as np

from models.deadline import Deadline
from models.isolation import per_item
from models.jsonl import numbered_rows
from models.paths import resolve_repo_path
from models.types import DOMAINS, Query

log = logging.getLogger(__name__)

_PROBE = "a fixed sentence whose embedding identifies the embedder a router was trained on"
ESTIMATORS = ("logreg", "svm")


class RouterTrainingError(ValueError):
    """No usable training data, or an artefact that cannot be read."""


def load_labelled_queries(sources: Sequence[str | os.PathLike]) -> tuple[list[str], list[str]]:
    """Reads `(query, domain)` pairs from CRAG-format files or folders of them.

    Args:
        sources: `.jsonl` / `.jsonl.bz2` files, or folders whose such files are all read (sorted).

    Returns:
        Parallel lists of query texts and domains (each one of `DOMAINS`).

    Raises:
        RouterTrainingError: a source does not exist, or no row had a query and a known domain.
    """
    texts, labels, skipped = [], [], 0
    for path in _expand(sources):
        for _, row in numbered_rows(path, error=RouterTrainingError):
            row = row if isinstance(row, dict) else {"query": None}
            query, domain = row.get("query"), str(row.get("domain", "")).strip().lower()
            if isinstance(query, str) and query.strip() and domain in DOMAINS:
                texts.append(query.strip())
                labels.append(domain)
            elif row:
                skipped += 1
    if skipped:
        log.warning("router training data: skipped %d rows without a query or a known domain", skipped)
    if not texts:
        raise RouterTrainingError(f"no labelled queries (fields 'query' and 'domain') in {list(sources)}")
    return texts, labels


def _expand(sources: Sequence[str | os.PathLike]) -> list[Path]:
    files = []
    for source in sources:
        path = resolve_repo_path(source)
        if path.is_dir():
            files += sorted(p for p in path.iterdir() if p.name.endswith((".jsonl", ".jsonl.bz2")))
        elif path.exists():
            files.append(path)
        else:
            raise RouterTrainingError(f"router training data {path} does not exist")
    return files


def make_estimator(name: str):
    """An untrained scikit-learn classifier: `logreg` (LogisticRegression) or `svm` (LinearSVC).

    C is high because the features are unit-length embeddings: the default C=1 over-regularises them.
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import LinearSVC

    if name == "logreg":
        return LogisticRegression(C=20.0, max_iter=2000, class_weight="balanced")
    if name == "svm":
        return LinearSVC(C=1.0, class_weight="balanced")
    raise ValueError(f"unknown router estimator {name!r}; expected one of {list(ESTIMATORS)}")


def compare_estimators(texts: list[str], labels: list[str], embedder, repeats: int = 5) -> dict[str, float]:
    """Mean accuracy of every estimator under repeated stratified 5-fold cross-validation.

    Returns:
        `{estimator name: mean accuracy}`.
    """
    from sklearn.model_selection import RepeatedStratifiedKFold, cross_val_score

    vectors = embedder.encode(texts, is_query=True)
    folds = RepeatedStratifiedKFold(n_splits=5, n_repeats=repeats, random_state=0)
    return {name: float(np.mean(cross_val_score(make_estimator(name), vectors, labels, cv=folds)))
            for name in ESTIMATORS}


@dataclass
class DomainClassifier:
    """A fitted estimator plus the fingerprint of the embedder whose vectors it reads."""

    estimator: object
    fingerprint: np.ndarray
    trained_on: int = 0  # number of training queries (for logs and reports)

    @classmethod
    def fit(cls, texts: Sequence[str], labels: Sequence[str], embedder, estimator: str = "logreg"):
        """Embeds `texts` with `embedder` and fits the named estimator on them."""
        model = make_estimator(estimator)
        model.fit(embedder.encode(list(texts), is_query=True), list(labels))
        return cls(model, _fingerprint(embedder), len(texts))

    def predict(self, texts: Sequence[str], embedder) -> list[str]:
        """One domain per text (never outside `DOMAINS`: the estimator only knows the training labels)."""
        if not texts:
            return []
        return [str(label) for label in self.estimator.predict(embedder.encode(list(texts), is_query=True))]

    def accuracy(self, texts: Sequence[str], labels: Sequence[str], embedder) -> float:
        """Share of `texts` whose predicted domain equals the label."""
        predicted = self.predict(texts, embedder)
        return float(np.mean([p == g for p, g in zip(predicted, labels)])) if labels else 0.0

    def fits(self, embedder) -> bool:
        """Whether this classifier was trained on vectors of `embedder`."""
        probe = _fingerprint(embedder)
        return probe.shape == self.fingerprint.shape and float(probe @ self.fingerprint) > 0.999

    def save(self, path: str | os.PathLike) -> None:
        """Writes the artefact atomically (a crash never leaves half a file to load next time)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        joblib.dump({"estimator": self.estimator, "fingerprint": self.fingerprint,
                     "trained_on": self.trained_on}, partial)
        os.replace(partial, path)

    @classmethod
    def load(cls, path: str | os.PathLike) -> "DomainClassifier":
        """Reads an artefact written by `save`; raises RouterTrainingError if it is not one."""
        try:
            data = joblib.load(path)
            return cls(data["estimator"], np.asarray(data["fingerprint"]), int(data.get("trained_on", 0)))
        except Exception as exc:  # joblib raises many types for a truncated or foreign file
            raise RouterTrainingError(f"{path} is not a router artefact: {exc}") from exc


def _fingerprint(embedder) -> np.ndarray:
    vector = np.asarray(embedder.encode([_PROBE], is_query=True), dtype=np.float32)[0]
    return vector / (np.linalg.norm(vector) or 1.0)


def load_or_train(path: str | os.PathLike, embedder, training_data: Sequence[str],
                  estimator: str = "logreg", load=load_labelled_queries,
                  what: str = "the domain router") -> DomainClassifier:
    """The classifier at `path`, (re)trained from `training_data` and cached there if missing or stale.

    `load` reads `(texts, labels)` from `training_data`: domains by default; the attribute predictor
    passes its static/dynamic loader (the classifier itself does not care what the labels are).

    Raises:
        RouterTrainingError: the artefact has to be trained and the training data is unusable.
    """
    path = resolve_repo_path(path)
    if path.exists():
        try:
            classifier = DomainClassifier.load(path)
            if classifier.fits(embedder):
                return classifier
            log.warning("router artefact %s was trained on another embedder; retraining", path)
        except RouterTrainingError as exc:
            log.warning("%s; retraining", exc)
    texts, labels = load(training_data)
    classifier = DomainClassifier.fit(texts, labels, embedder, estimator)
    classifier.save(path)
    log.info("trained %s (%s) on %d queries %s and cached it at %s",
             what, estimator, len(texts), dict(Counter(labels)), path)
    return classifier


class ClassifierRouter:
    """Routes a batch with one `encode` call and a linear classifier."""

    def __init__(self, classifier: DomainClassifier, embedder):
        self.classifier = classifier
        self.embedder = embedder

    def route(self, queries: Sequence[Query], deadline: Deadline | None = None) -> list[str]:
        """One domain per query, in order ("open" for a query that cannot be classified, its neighbours keep
        theirs). The deadline is not checked: routing takes milliseconds."""
        return per_item(lambda texts: self.classifier.predict(texts, self.embedder), [q.text for q in queries],
                        lambda _: "open", "routing", deadline=deadline)
