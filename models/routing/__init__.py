"""Domain routing: which of finance / music / movie / sports / open a query belongs to."""
from models.routing.classifier import (
    ClassifierRouter, DomainClassifier, RouterTrainingError, load_labelled_queries,
)
from models.routing.llm_router import LLMRouter, parse_domain
from models.routing.router import Router, make_router

__all__ = [
    "ClassifierRouter",
    "DomainClassifier",
    "LLMRouter",
    "Router",
    "RouterTrainingError",
    "load_labelled_queries",
    "make_router",
    "parse_domain",
]
