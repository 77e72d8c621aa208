"""Settings of domain routing (one section of a profile)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class RoutingConfig:
    kind: str = "classifier"  # llm: db3's domain prompt | classifier: embeddings + scikit-learn
    classifier_path: str = "data/router/domain_classifier.joblib"  # repo-relative or absolute
