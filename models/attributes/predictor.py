"""The attribute predictor (ElectricSheep §4.2): is a question static or dynamic, and what follows.

Two methods behind one interface, chosen by `attributes.method`:
- `classifier`: the MiniLM embedding the web pathway already computes + a linear scikit-learn model
  (ElectricSheep found an SVM more accurate and far cheaper than in-context learning). The fitted model is
  the routing package's `DomainClassifier` (estimator + embedder fingerprint, joblib, retrained when the
  embedder changes); only the labels differ. Nothing binary is committed: it trains from
  `training_data` on first use (340 questions, seconds) and is cached under `.cache/`.
- `llm`: few-shot prompting with self-consistency (`models.attributes.llm`).

`action` turns a prediction into what the pipeline should do with the question, by `dynamic_policy`.
"""
from __future__ import annotations

import logging
from typing import Sequence

from models.attributes.config import METHODS, POLICIES, AttributeConfig
from models.attributes.data import load_attribute_labels
from models.attributes.llm import LLMAttributePredictor
from models.deadline import Deadline
from models.routing.classifier import DomainClassifier
from models.routing.classifier import load_or_train as load_or_train_classifier

log = logging.getLogger(__name__)


def load_or_train(config: AttributeConfig, embedder) -> DomainClassifier:
    """The static/dynamic classifier at `classifier_path`, trained and cached if missing or stale."""
    return load_or_train_classifier(config.classifier_path, embedder, config.training_data, config.estimator,
                                    load=load_attribute_labels, what="the static/dynamic classifier")


class AttributePredictor:
    """`predict` labels questions "static" or "dynamic"; `action` says what a label implies."""

    def __init__(self, config: AttributeConfig, *, classifier: DomainClassifier | None = None, embedder=None,
                 llm: LLMAttributePredictor | None = None):
        if config.method not in METHODS:
            raise ValueError(f"unknown attributes.method {config.method!r}; expected one of {list(METHODS)}")
        if config.dynamic_policy not in POLICIES:
            raise ValueError(f"unknown attributes.dynamic_policy {config.dynamic_policy!r}; "
                             f"expected one of {list(POLICIES)}")
        if config.method == "classifier" and (classifier is None or embedder is None):
            raise ValueError("attributes.method 'classifier' needs a classifier and the embedder")
        if config.method == "llm" and llm is None:
            raise ValueError("attributes.method 'llm' needs an LLMAttributePredictor")
        self.config = config
        self.classifier = classifier
        self.embedder = embedder
        self.llm = llm

    @classmethod
    def from_config(cls, config: AttributeConfig, *, embedder=None, generator=None) -> "AttributePredictor":
        """Builds the configured method (training the classifier on first use)."""
        if config.method == "classifier":
            return cls(config, classifier=load_or_train(config, embedder), embedder=embedder)
        examples = list(zip(*load_attribute_labels(config.training_data)))
        return cls(config, llm=LLMAttributePredictor(config, generator, examples))

    def predict(self, queries: Sequence[str], deadline: Deadline | None = None) -> list[str]:
        """One of "static"/"dynamic" per question. A failure labels the batch "dynamic" (the cautious side)."""
        if not queries:
            return []
        if self.llm is not None:
            return self.llm.predict(queries, deadline)
        try:
            return self.classifier.predict(list(queries), self.embedder)
        except Exception:
            log.exception("static/dynamic classifier failed; treating the batch as dynamic")
            return ["dynamic"] * len(queries)

    def action(self, label: str, has_kg_evidence: bool = False) -> str:
        """What the pipeline does with a question: "answer" as usual, "idk" (answer "i don't know"), or
        "verify" (answer only if the verifier's score reaches `dynamic_verify_threshold`). KG evidence
        is exact and current, so a dynamic question backed by it is answered as usual."""
        if label != "dynamic" or has_kg_evidence or self.config.dynamic_policy == "none":
            return "answer"
        return self.config.dynamic_policy
