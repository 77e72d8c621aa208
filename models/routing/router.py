"""The `Router` interface and the factory that builds the router a profile names.

Every router returns one of `models.types.DOMAINS` per query, in order; anything it cannot decide is
"open", the domain with no special pathway, so a routing mistake costs a pathway, never an answer.
"""
from __future__ import annotations

from typing import Protocol, Sequence

from models.deadline import Deadline
from models.routing.classifier import ClassifierRouter, load_or_train
from models.routing.config import RoutingConfig
from models.routing.llm_router import LLMRouter
from models.types import Query

KINDS = ("llm", "classifier")


class Router(Protocol):
    def route(self, queries: Sequence[Query], deadline: Deadline | None = None) -> list[str]:
        """One domain per query, in order."""


def make_router(cfg: RoutingConfig, generator=None, embedder=None) -> Router:
    """Builds the router named by `cfg.kind`.

    Args:
        cfg: the profile's `routing` section.
        generator: the shared LLM (kind `llm`).
        embedder: the shared sentence embedder (kind `classifier`): `encode(texts, is_query=True)`.

    Returns:
        An `LLMRouter` or a `ClassifierRouter`; the classifier is trained and cached first when its
        artefact is missing or was fitted on another embedder.

    Raises:
        ValueError: an unknown kind, or the component the kind needs was not given.
        RouterTrainingError: the classifier must be trained and its training data is unusable.
    """
    if cfg.kind == "llm":
        if generator is None:
            raise ValueError("routing.kind 'llm' needs a generator")
        return LLMRouter(generator, cfg.prompt, cfg.max_new_tokens)
    if cfg.kind == "classifier":
        if embedder is None:
            raise ValueError("routing.kind 'classifier' needs an embedder")
        classifier = load_or_train(cfg.classifier_path, embedder, cfg.training_data, cfg.estimator)
        return ClassifierRouter(classifier, embedder)
    raise ValueError(f"unknown routing.kind {cfg.kind!r}; expected one of {list(KINDS)}")
