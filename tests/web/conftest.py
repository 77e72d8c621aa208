"""Fakes shared by the web tests: a word-hashing embedder and a whitespace-token generator."""
import hashlib
import re

import numpy as np
import pytest


class HashingEmbedder:
    """Bag of words hashed into 256 dimensions: texts sharing words have high cosine. Counts calls."""

    dimension = 256

    def __init__(self):
        self.calls: list[tuple[int, bool]] = []

    def encode(self, texts, *, is_query=False):
        self.calls.append((len(texts), is_query))
        vectors = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            for word in re.findall(r"\w+", text.lower()):
                vectors[row, int(hashlib.md5(word.encode()).hexdigest(), 16) % self.dimension] += 1.0
        norms = np.linalg.norm(vectors, axis=1, keepdims=True)
        return vectors / np.where(norms == 0, 1.0, norms)


class WordGenerator:
    """Tokens = whitespace-separated words (enough to test budgets exactly)."""

    def count_tokens(self, text):
        return len(text.split())

    def truncate_tokens(self, text, max_tokens):
        return " ".join(text.split()[:max(0, max_tokens)])


@pytest.fixture
def hashing_embedder():
    return HashingEmbedder()


@pytest.fixture
def words():
    return WordGenerator()
