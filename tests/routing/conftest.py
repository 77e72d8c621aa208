"""The real CPU embedder (MiniLM shipped in a PyPI package), loaded once, and a fast hashed stand-in."""
import os
import zlib

import numpy as np
import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def embedder():
    from models.config import load_config
    from models.web.embedder import Embedder

    config = load_config("cpu")
    return Embedder.from_config(config.web.embedder, config.models_dir)


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
