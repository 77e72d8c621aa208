"""The real CPU embedder (MiniLM shipped in a PyPI package), loaded once, and a fast hashed stand-in."""
import os
import zlib

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")


class CachingEmbedder:
    """The real embedder, remembering vectors: several tests embed the same 260 training queries."""

    def __init__(self, inner):
        self.inner, self.cache = inner, {}

    def encode(self, texts, *, is_query=False):
        missing = [t for t in dict.fromkeys(texts) if (t, is_query) not in self.cache]
        if missing:
            self.cache.update(zip([(t, is_query) for t in missing], self.inner.encode(missing, is_query=is_query)))
        return np.stack([self.cache[(t, is_query)] for t in texts]) if texts else self.inner.encode([])


@pytest.fixture(scope="session")
def embedder(cpu_embedder):
    return CachingEmbedder(cpu_embedder)


class HashEmbedder:
    """A fast stand-in: bag of hashed words, L2-normalised (enough to tell "stock" from "album")."""

    def __init__(self, dimension=256):
        self.dimension, self.calls = dimension, 0

    def encode(self, texts, *, is_query=False):
        self.calls += 1
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in text.lower().split():
                vectors[row, zlib.crc32(word.encode()) % self.dimension] += 1.0
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)


@pytest.fixture
def hash_embedder():
    """The `HashEmbedder` class: tests build one per dimension they need."""
    return HashEmbedder
