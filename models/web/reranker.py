"""Rerankers: score (query, passage) pairs; higher is better. One interface, two implementations.

- `kind: flag` is db3's reranker: FlagEmbedding's `FlagReranker` cross-encoder (bge-reranker-v2-m3, fp16 on
  the GPU profile), scores squashed to [0, 1] by a sigmoid.
- `kind: hybrid` is the CPU profile's stand-in, because no PyPI package ships cross-encoder weights:
  `dense_weight * cosine(query, passage) + (1 - dense_weight) * BM25 / max BM25`, with cosine from the shared
  embedder and BM25 (bm25s) over the query's own candidates. The lexical half rescues exact names, numbers
  and dates that a 22M-parameter bi-encoder blurs; the dense half keeps paraphrases.

Both score many queries in one call (`score_many`) so the whole batch goes through the model together.
"""
from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from models.paths import resolve_model_path
from models.web.lexical import bm25_scores, normalise

log = logging.getLogger(__name__)

RERANKER_KINDS = ("flag", "hybrid")
Items = Sequence[tuple[str, Sequence[str]]]


class Reranker(ABC):
    """Interface: `score_many([(query, passages), ...]) -> [[score per passage], ...]`."""

    @abstractmethod
    def score_many(self, items: Items) -> list[list[float]]:
        """One list of scores per (query, passages) item, each in passage order."""

    def score(self, query: str, passages: Sequence[str]) -> list[float]:
        """One score per passage for `query`, in order."""
        return self.score_many([(query, passages)])[0]


def _split_flat(flat: Sequence[float], items: Items) -> list[list[float]]:
    out, start = [], 0
    for _, passages in items:
        out.append([float(s) for s in flat[start:start + len(passages)]])
        start += len(passages)
    return out


@dataclass
class FlagCrossEncoder(Reranker):
    """FlagEmbedding's `FlagReranker` behind the reranker interface."""

    model: Any  # FlagEmbedding.FlagReranker
    batch_size: int = 16
    max_length: int = 512  # tokens of query + passage

    @classmethod
    def from_config(cls, cfg, models_dir: str) -> "FlagCrossEncoder":
        """Loads the cross-encoder folder named by a `RerankerConfig` (kind=flag).

        Raises:
            ModelNotFoundError: the folder does not exist.
        """
        path = resolve_model_path(cfg.path, models_dir, "reranker")
        from FlagEmbedding import FlagReranker  # heavy import: only when this reranker is configured

        model = FlagReranker(str(path), use_fp16=cfg.fp16 and cfg.device.startswith("cuda"), devices=cfg.device,
                             batch_size=cfg.batch_size, max_length=cfg.max_length)
        log.info("cross-encoder reranker %s loaded on %s", path, cfg.device)
        return cls(model, cfg.batch_size, cfg.max_length)

    def score_many(self, items: Items) -> list[list[float]]:
        pairs = [(query, passage) for query, passages in items for passage in passages]
        if not pairs:
            return [[] for _ in items]
        scores = self.model.compute_score(pairs, batch_size=self.batch_size, max_length=self.max_length,
                                          normalize=True)
        return _split_flat(np.atleast_1d(np.asarray(scores, dtype=np.float32)), items)


class HybridReranker(Reranker):
    """Dense cosine (shared embedder) blended with max-normalised BM25."""

    def __init__(self, embedder, dense_weight: float = 0.5):
        if not 0.0 <= dense_weight <= 1.0:
            raise ValueError(f"dense_weight must be in [0, 1], got {dense_weight}")
        self.embedder = embedder
        self.dense_weight = dense_weight

    def score_many(self, items: Items) -> list[list[float]]:
        passages = [p for _, ps in items for p in ps]
        dense = np.zeros(len(passages), dtype=np.float32)
        if self.dense_weight > 0 and passages:
            queries = self.embedder.encode([q for q, _ in items], is_query=True)
            owner = np.repeat(np.arange(len(items)), [len(ps) for _, ps in items])
            dense = np.einsum("ij,ij->i", self.embedder.encode(passages), queries[owner])
        out = []
        for (query, group), cosine in zip(items, _split_flat(dense, items)):
            lexical = normalise(bm25_scores(query, group)) if self.dense_weight < 1 else 0.0
            blended = self.dense_weight * np.asarray(cosine, dtype=np.float32) + (1 - self.dense_weight) * lexical
            out.append([float(s) for s in blended])
        return out


def make_reranker(cfg, models_dir: str, embedder=None) -> Reranker:
    """The reranker named by `cfg.kind`.

    Raises:
        ValueError: unknown kind, or kind=hybrid without an embedder.
        ModelNotFoundError: kind=flag and the model folder is missing.
    """
    if cfg.kind == "flag":
        return FlagCrossEncoder.from_config(cfg, models_dir)
    if cfg.kind == "hybrid":
        if embedder is None:
            raise ValueError("reranker kind 'hybrid' needs the shared embedder")
        return HybridReranker(embedder, cfg.dense_weight)
    raise ValueError(f"unknown reranker kind {cfg.kind!r}; expected one of {list(RERANKER_KINDS)}")
