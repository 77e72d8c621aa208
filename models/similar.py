"""Ranking a fixed pool of texts by similarity to a query, with the shared embedder (in-context example choice for
the KG programs and the SQL statements). Choosing by similarity is an improvement, never a requirement: without an
embedder, or when it fails, every function here says so with None and the caller keeps its pool's order."""
from __future__ import annotations

import logging
from typing import Sequence

import numpy as np

log = logging.getLogger(__name__)


def embed_pool(embedder, texts: Sequence[str], what: str) -> np.ndarray | None:
    """The pool's vectors (`embedder.encode(texts, is_query=True)`, L2-normalised rows), or None (no embedder, an
    empty pool, or the embedder failed: logged with `what`)."""
    if embedder is None or not texts:
        return None
    try:
        return np.asarray(embedder.encode(list(texts), is_query=True))
    except Exception:  # noqa: BLE001
        log.warning("could not embed the %s; using its order", what, exc_info=True)
        return None


def similarities(embedder, vectors: np.ndarray | None, query: str, what: str) -> np.ndarray | None:
    """The cosine of `query` to each pool vector, or None (no pool vectors, or the embedder failed)."""
    if vectors is None:
        return None
    try:
        return vectors @ np.asarray(embedder.encode([query], is_query=True))[0]
    except Exception:  # noqa: BLE001
        log.warning("could not embed a query for %s", what, exc_info=True)
        return None
