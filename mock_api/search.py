"""Name search as the official mock API does it: normalise, tokenise on whitespace, rank with BM25.

Two rankers, because the official server uses two:
- `OkapiIndex` reproduces `rank_bm25.BM25Okapi` (k1=1.5, b=0.75, epsilon=0.25; a negative idf is replaced by
  epsilon x the average idf) followed by the servers' "top 10 by score, drop score == 0" step. It is used by
  open, movie and finance. Scores come from an inverted index instead of one dense pass per query token, so a
  query only touches the documents that share a token with it; the ranking is the same.
- `FastBM25Index` reproduces the bundled `fast_bm25.BM25` (same k1/b, tokens with idf <= 4 are dropped from the
  index entirely, ties keep first-scored order). It is used by music. Its average idf divides by the number of
  surviving tokens, so a corpus where no token survives (fewer than 83 distinct names) fails at load, exactly
  like the official server; here that is a clear `ValueError` instead of a ZeroDivisionError.

Deviation: the official Okapi path ranks with numpy's unstable `argsort`, so the order of equal scores is
arbitrary there; here equal scores are ordered by later corpus position first (what a stable ascending sort
reversed gives), which is deterministic.
"""
from __future__ import annotations

import math
import string
from collections import Counter, defaultdict
from typing import Iterable, Sequence

K1 = 1.5
B = 0.75
OKAPI_EPSILON = 0.25
FAST_IDF_CUTOFF = 4.0
TOP_N = 10

_PUNCTUATION = str.maketrans("", "", string.punctuation)


def normalize(name: str) -> str:
    """The official `normalize`: lowercase, `_` to space, drop ASCII punctuation, collapse whitespace."""
    return " ".join(name.lower().replace("_", " ").translate(_PUNCTUATION).split())


class _Postings:
    """Token -> {document index: term frequency}, plus document lengths."""

    def __init__(self, documents: Sequence[Sequence[str]]):
        if not documents:
            raise ValueError("a BM25 index needs at least one document")
        self.doc_len = [len(doc) for doc in documents]
        self.avgdl = sum(self.doc_len) / len(documents)
        self.postings: dict[str, dict[int, int]] = defaultdict(dict)
        for index, doc in enumerate(documents):
            for token, freq in Counter(doc).items():
                self.postings[token][index] = freq

    def length_norm(self, index: int) -> float:
        return K1 * (1 - B + B * self.doc_len[index] / self.avgdl)


class OkapiIndex:
    """`rank_bm25.BM25Okapi` over whitespace tokens of already-normalised names."""

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        self._index = _Postings([name.split() for name in self.names])
        size = len(self.names)
        self.idf = {t: math.log(size - len(d) + 0.5) - math.log(len(d) + 0.5) for t, d in self._index.postings.items()}
        floor = OKAPI_EPSILON * sum(self.idf.values()) / len(self.idf) if self.idf else 0.0
        self.idf = {t: (floor if v < 0 else v) for t, v in self.idf.items()}

    def search(self, query: str, n: int = TOP_N) -> list[str]:
        """Top-`n` names for a normalised query, best first, documents scoring exactly 0 left out."""
        scores: dict[int, float] = defaultdict(float)
        for token in query.split():  # a repeated query token counts twice, as in rank_bm25
            idf = self.idf.get(token, 0.0)
            for index, freq in self._index.postings.get(token, {}).items():
                # the reference's operation order, so equal scores stay equal and near-equal ones rank alike
                scores[index] += idf * (freq * (K1 + 1) / (freq + self._index.length_norm(index)))
        ranked = sorted(scores, key=lambda i: (scores[i], i), reverse=True)
        positive = [i for i in ranked if scores[i] > 0]
        # The official dense ranking puts every unmatched (score 0) document above negative scores before it
        # takes the top n, so negatives only surface when almost the whole corpus matched.
        unmatched = len(self.names) - len(scores) + sum(1 for i in ranked if scores[i] == 0)
        negative_slots = max(0, n - len(positive) - unmatched)
        negative = [i for i in ranked if scores[i] < 0][:negative_slots]
        return [self.names[i] for i in (positive + negative)[:n]]


class FastBM25Index:
    """The official `fast_bm25.BM25` (music search): low-idf tokens are dropped at build time."""

    def __init__(self, names: Sequence[str]):
        self.names = list(names)
        self._index = _Postings([name.split() for name in self.names])
        size = len(self.names)
        self.idf = {}
        for token, docs in list(self._index.postings.items()):
            idf = math.log(size - len(docs) + 0.5) - math.log(len(docs) + 0.5)
            if idf > FAST_IDF_CUTOFF:
                self.idf[token] = idf
            else:
                del self._index.postings[token]
        if not self.idf:
            raise ValueError(
                f"no token of the {size} names has idf > {FAST_IDF_CUTOFF}: the music search index needs at least "
                f"83 distinct normalised names (the official server fails the same way)")

    def search(self, query: str, n: int = TOP_N) -> list[str]:
        """Top-`n` names for a normalised query; only documents sharing a surviving token are returned."""
        scores: dict[int, float] = {}
        for token in query.split():
            for index, freq in self._index.postings.get(token, {}).items():
                term = self.idf[token] * freq * (K1 + 1) / (freq + self._index.length_norm(index))
                scores[index] = scores.get(index, 0.0) + term
        ranked = sorted(scores, key=scores.__getitem__, reverse=True)  # stable: ties keep first-scored order
        return [self.names[i] for i in ranked[:n]]


class NameSearch:
    """Maps search hits on normalised names back to every original key with that normalised form.

    Args:
        keys: the original entity keys, in corpus order.
        ranker: `OkapiIndex` or `FastBM25Index`.
        dedupe: build the corpus from the sorted set of normalised names (open, music) instead of one document
            per key in key order (finance).
    """

    def __init__(self, keys: Iterable[str], ranker: type = OkapiIndex, dedupe: bool = True):
        self.key_map: dict[str, list[str]] = defaultdict(list)
        corpus = []
        for key in keys:
            norm = normalize(key)
            self.key_map[norm].append(key)
            corpus.append(norm)
        self.index = ranker(sorted(set(corpus)) if dedupe else corpus)

    def search(self, query: str, n: int = TOP_N) -> list[str]:
        """Up to `n` original keys, best match first.

        Deviation: a finance corpus holds one document per key, so two keys with one normalised form make the
        official server return both keys twice; here each key appears once.
        """
        found: dict[str, None] = {}
        for norm in self.index.search(normalize(query), n):
            found.update(dict.fromkeys(self.key_map[norm]))
        return list(found)[:n]
