"""Object-object compatibility (ARM §3.2.2 and Appendix A): how strongly two objects connect.

An object is split into units: a passage into sentences, a table piece into rows (and, for table-table pairs,
columns: a header and the set of its cells). Two units compare by

    weight * semantic similarity (cosine of their embeddings) + (1 - weight) * exact-value similarity

and a pair of objects scores its best pair of units:

- passage-passage: sentence against sentence, exact = overlap coefficient of their values;
- table-passage: row against sentence, exact = overlap coefficient (the paper compares cells with sentences; a
  row's values are its cells' words, so a sentence naming one cell's entity scores as that cell would);
- table-table: column against column, semantic = cosine of the headers, exact = Jaccard of the column's cells
  (pieces of one table share their header, so they connect through it).

A unit found inside a unit of the other object (overlapping chunks of one page repeat a sentence) is redundancy,
not a connection: such a pair scores 0.

A unit's values are what "exact" means: numbers and the words written capitalised (names of people, companies,
places) in a sentence; every word of a table row. The overlap coefficient |A n B| / min(|A|, |B|) divides by at
least `min_values`, so one shared word in a two-word sentence is not a perfect match.

Embedding is the cost (MiniLM on one core: ~100 short units a second), so only each object's first
`max_units` units are embedded; later units compare by their values alone. Every other step is a sparse
product over all units at once.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

import numpy as np
from scipy import sparse

from models.types import Chunk
from models.web.arm.ngrams import STOP_WORDS, words

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
_CAPITALISED = re.compile(r"\b[A-Z][\w&'.-]*")


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def _is_table(obj: Chunk) -> bool:
    lines = obj.text.split("\n")
    return obj.kind == "table" and len(lines) >= 3 and lines[1].lstrip().startswith("|")


def _content(tokens: Sequence[str]) -> frozenset[str]:
    return frozenset(t for t in tokens if t not in STOP_WORDS and (len(t) > 1 or t.isdigit()))


def sentence_values(sentence: str) -> frozenset[str]:
    """A sentence's values: its numbers and its capitalised words (lower-cased)."""
    named = set(words(" ".join(_CAPITALISED.findall(sentence))))
    return _content([t for t in words(sentence) if t in named or any(ch.isdigit() for ch in t)])


@dataclass(frozen=True)
class Units:
    """One object split for comparison: `texts[i]` (embedded when i < max_units) and its `values[i]`; for a table
    also its columns (`headers[c]`, `columns[c]`: the column's cells, normalised)."""

    texts: tuple[str, ...]
    values: tuple[frozenset[str], ...]
    headers: tuple[str, ...] = ()
    columns: tuple[frozenset[str], ...] = ()

    @property
    def is_table(self) -> bool:
        return bool(self.headers)


def units_of(obj: Chunk) -> Units:
    """Sentences of a passage (lines, then sentence ends), or rows and columns of a table piece."""
    if _is_table(obj):
        lines = obj.text.split("\n")
        header, rows = _cells(lines[1]), [_cells(line) for line in lines[3:] if line.strip()]
        texts = tuple(" | ".join(c for c in row if c) for row in rows)
        values = tuple(_content(words(" ".join(row))) for row in rows)
        columns = tuple(frozenset(" ".join(words(row[c])) for row in rows if c < len(row) and words(row[c]))
                        for c in range(len(header)))
        return Units(texts, values, tuple(header), columns)
    sentences = [s.strip() for line in obj.text.split("\n") for s in _SENTENCE_END.split(line) if s.strip()]
    return Units(tuple(sentences), tuple(sentence_values(s) for s in sentences))


@dataclass(frozen=True)
class Link:
    """Why two objects connect: their best pair of units (sentences, rows or columns) and the values shared."""

    left: str
    right: str
    shared: tuple[str, ...]
    score: float

    def describe(self, left_name: str, right_name: str) -> str:
        """ARM's connection line: "... in A connects with ... in B" (with the shared values)."""
        via = f" (shared: {', '.join(self.shared[:5])})" if self.shared else ""
        return f"{self.left[:80]!r} in {left_name} connects with {self.right[:80]!r} in {right_name}{via}"


class Compatibility:
    """Pairwise compatibility of a pool of objects: `matrix[i, j]` in [0, 1], 0 on the diagonal.

    Args:
        objects: the pool (a question's best objects by relevance).
        embed: texts -> L2-normalised embeddings (rows); called once, with every embedded unit and header.
        semantic_weight: the weight of cosine against exact-value similarity.
        max_units: units embedded per object.
        min_values: the least denominator of the overlap coefficient.
    """

    def __init__(self, objects: Sequence[Chunk], embed, semantic_weight: float = 0.5, max_units: int = 8,
                 min_values: int = 2):
        self.objects = list(objects)
        self.units = [units_of(o) for o in self.objects]
        self.weight, self.max_units, self.min_values = semantic_weight, max_units, min_values
        self.owner = np.array([i for i, u in enumerate(self.units) for _ in u.texts], dtype=np.int64)
        self.starts = np.searchsorted(self.owner, np.arange(len(self.units)))  # each object's first unit
        self._pairs = self._unit_pairs(embed)
        self.matrix = self._object_matrix()

    def _unit_pairs(self, embed) -> np.ndarray:
        """weight * cosine + (1 - weight) * overlap coefficient, for every pair of units of different objects."""
        texts = [t for u in self.units for t in u.texts]
        n = len(texts)
        position = np.arange(n) - self.starts[self.owner] if n else np.zeros(0, dtype=np.int64)
        embedded = np.flatnonzero(position < self.max_units)
        headers = [h or "-" for u in self.units for h in u.headers]
        vectors = np.asarray(embed([texts[k] for k in embedded] + headers), dtype=np.float32) \
            if len(embedded) or headers else np.zeros((0, 1), dtype=np.float32)
        # each object's header embeddings (an empty block for a passage)
        ends = np.cumsum([len(u.headers) for u in self.units])
        self._header_vectors = np.split(vectors[len(embedded):], ends[:-1]) if len(self.units) else []
        # unit embeddings, zero rows for units past max_units (they compare by values; the verifier ranks them last)
        self.vectors = np.zeros((n, vectors.shape[1]), dtype=np.float32)
        self.vectors[embedded] = vectors[:len(embedded)]
        if n == 0:
            return np.zeros((0, 0), dtype=np.float32)
        semantic = self.vectors @ self.vectors.T
        values = [v for u in self.units for v in u.values]
        vocabulary = {t: i for i, t in enumerate(sorted(set().union(*values)))}
        rows = [r for r, v in enumerate(values) for _ in v]
        cols = [vocabulary[t] for v in values for t in v]
        incidence = sparse.csr_matrix((np.ones(len(rows), dtype=np.float32), (rows, cols)),
                                      shape=(n, max(1, len(vocabulary))))
        shared = (incidence @ incidence.T).toarray()
        sizes = np.array([len(v) for v in values], dtype=np.float32)
        smaller = np.maximum(np.minimum.outer(sizes, sizes), self.min_values)
        pairs = self.weight * np.clip(semantic, 0, 1) + (1 - self.weight) * shared / smaller
        pairs[self.owner[:, None] == self.owner[None, :]] = 0  # a unit does not connect its own object
        for a, b in np.argwhere(semantic > 0.9):  # one text twice (overlapping chunks of a page): redundancy
            if a < b and (texts[a] in texts[b] or texts[b] in texts[a]):
                pairs[a, b] = pairs[b, a] = 0
        return pairs

    def _object_matrix(self) -> np.ndarray:
        m = len(self.objects)
        matrix = np.zeros((m, m), dtype=np.float32)
        if self._pairs.size:
            present = np.array([len(u.texts) > 0 for u in self.units])
            idx = self.starts[present]
            block = np.maximum.reduceat(np.maximum.reduceat(self._pairs, idx, axis=0), idx, axis=1)
            matrix[np.ix_(present, present)] = block
        tables = [i for i, u in enumerate(self.units) if u.is_table]
        for a in tables:  # table-table pairs: their best pair of columns instead of rows
            for b in tables:
                if a < b:
                    matrix[a, b] = matrix[b, a] = self._columns(a, b)[0]
        np.fill_diagonal(matrix, 0)
        return matrix

    def _columns(self, a: int, b: int) -> tuple[float, int, int]:
        """(score, column of a, column of b) of the best column pair of two tables."""
        ua, ub = self.units[a], self.units[b]
        va, vb = self._header_vectors[a], self._header_vectors[b]
        cosine = np.clip(va @ vb.T, 0, 1) if len(va) and len(vb) else np.zeros((len(ua.headers), len(ub.headers)))
        best = (0.0, 0, 0)
        for x, cx in enumerate(ua.columns):
            for y, cy in enumerate(ub.columns):
                union = len(cx | cy)
                jaccard = len(cx & cy) / union if union else 0.0
                score = self.weight * float(cosine[x, y]) + (1 - self.weight) * jaccard
                if score > best[0]:
                    best = (score, x, y)
        return best

    def unit_indices(self, i: int) -> np.ndarray:
        """Rows of object i's units in `vectors`."""
        return np.arange(self.starts[i], self.starts[i] + len(self.units[i].texts))

    def link(self, a: int, b: int) -> Link:
        """The best pair of units of objects `a` and `b`, for the trace and the verifier's draft."""
        ua, ub = self.units[a], self.units[b]
        if ua.is_table and ub.is_table:
            score, x, y = self._columns(a, b)
            shared = tuple(sorted(ua.columns[x] & ub.columns[y])) if ua.columns and ub.columns else ()
            return Link(f"column {ua.headers[x]}" if ua.headers else "", f"column {ub.headers[y]}"
                        if ub.headers else "", shared, round(score, 3))
        rows, cols = self.unit_indices(a), self.unit_indices(b)
        if not len(rows) or not len(cols):
            return Link("", "", (), 0.0)
        block = self._pairs[np.ix_(rows, cols)]
        x, y = np.unravel_index(int(np.argmax(block)), block.shape)
        return Link(ua.texts[x], ub.texts[y], tuple(sorted(ua.values[x] & ub.values[y])), round(float(block[x, y]), 3))
