"""Picking the entity a program means among a search API's candidates.

The mock API's searches are BM25 over names and return up to 10 keys, with hard negatives on purpose
("Inception" also finds "Inception: The Cobol Job"). db3 took the first hit when nothing matched exactly;
here the stages run in order of confidence and the first stage with a hit decides:

1. exact string equality;
2. equality after `normalize_text` (case, accents, punctuation, `_`);
3. containment of whole words either way ("apple" in "Apple Inc. Common Stock"), the closest in length
   winning (so "Apple Inc." beats "Apple Hospitality REIT Inc.");
4. a close spelling (difflib ratio ≥ 0.85 on the normalised names; typos in generated names);
5. embedding cosine ≥ `min_similarity` when an embedder is available ("harry potter and the sorcerer's
   stone" vs "... philosopher's stone").
No stage matching means no entity: an unrelated hit is worse evidence than none.

`ALL` keeps every candidate that stages 1-4 accept (the "maze runner" films), else the single best.
"""
from __future__ import annotations

import difflib
import logging
from typing import Callable, Iterable, Sequence, TypeVar

import numpy as np

from models.kg.language.values import normalize_text

log = logging.getLogger(__name__)
T = TypeVar("T")
_SPELLING_RATIO = 0.85


class EntityMatcher:
    """Args:
        embedder: optional, `encode(texts, is_query=...) -> np.ndarray` of L2-normalised rows.
        min_similarity: cosine needed for an embedding match.
    """

    def __init__(self, embedder=None, min_similarity: float = 0.6):
        self.embedder = embedder
        self.min_similarity = min_similarity

    def pick(self, query: str, items: Sequence[T], names: Callable[[T], Iterable[str]] | None = None,
             all_matches: bool = False) -> list[T]:
        """The matching items, best first (at most one unless `all_matches`).

        Args:
            query: the name written in the program.
            items: the search API's candidates (strings, or records).
            names: the names of one item (title and original title, ...); default: the item itself.
            all_matches: return every item accepted by the text stages.
        """
        names = names or (lambda item: (item,))
        flat = [(str(n), i) for i, item in enumerate(items) for n in names(item) if n]
        if not flat or not str(query).strip():
            return []
        if all_matches:
            accepted = self._text_matches(query, flat, stop_at_first_stage=False)
            if accepted:
                return [items[i] for i in dict.fromkeys(accepted)]
        best = self._text_matches(query, flat, stop_at_first_stage=True)
        if not best:
            best = self._embedding_match(query, flat)
        return [items[best[0]]] if best else []

    def _text_matches(self, query: str, flat: list[tuple[str, int]], stop_at_first_stage: bool) -> list[int]:
        wanted = normalize_text(query)
        normalised = [(normalize_text(n), i) for n, i in flat]
        stages = [
            [i for n, i in flat if n == query],
            [i for n, i in normalised if n == wanted],
            [i for n, i in sorted(normalised, key=lambda p: abs(len(p[0]) - len(wanted)))
             if wanted and n and (f" {wanted} " in f" {n} " or f" {n} " in f" {wanted} ")],
            [i for n, i in sorted(normalised, key=lambda p: -_ratio(p[0], wanted))
             if _ratio(n, wanted) >= _SPELLING_RATIO],
        ]
        if stop_at_first_stage:
            return next((stage for stage in stages if stage), [])
        return [i for stage in stages for i in stage]

    def _embedding_match(self, query: str, flat: list[tuple[str, int]]) -> list[int]:
        if self.embedder is None:
            return []
        try:
            vectors = np.asarray(self.embedder.encode([n for n, _ in flat], is_query=False))
            target = np.asarray(self.embedder.encode([query], is_query=True))[0]
        except Exception:  # an embedder failure only loses this fallback stage
            log.warning("embedding match for %r failed", query, exc_info=True)
            return []
        scores = vectors @ target
        best = int(np.argmax(scores))
        return [flat[best][1]] if scores[best] >= self.min_similarity else []


def _ratio(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b).ratio()
