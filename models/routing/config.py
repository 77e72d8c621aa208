"""Settings of domain routing (one section of a profile)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RoutingConfig:
    kind: str = "classifier"  # llm: db3's domain prompt | classifier: embeddings + scikit-learn
    # llm router
    prompt: str = "domain"  # prompts/<name>.txt; slot {query}
    max_new_tokens: int = 4  # db3 used 3: one word is all the parser reads
    # classifier router
    classifier_path: str = ".cache/router/domain_classifier.joblib"  # repo-relative or absolute (joblib)
    estimator: str = "logreg"  # logreg | svm (LinearSVC): 0.943 vs 0.938 on 5x5-fold CV of data/router
    # Trained into `classifier_path` at start-up when that file is missing or was fitted on another
    # embedder: CRAG-format .jsonl/.jsonl.bz2 files or folders of them (need `query` and `domain`).
    training_data: tuple[str, ...] = ("data/router",)
