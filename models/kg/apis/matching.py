"""Picking the entity a program means among a search API's candidates.

The mock API's searches are BM25 over names and return up to 10 keys, with hard negatives on purpose
("Inception" also finds "Inception: The Cobol Job"; "florida city" finds "Florida" first). db3 took the
first hit when nothing matched exactly; here the stages run in order of confidence and the first stage
with a hit decides:

1. exact string equality;
2. equality after `kg_match_key` (case, accents, punctuation, `_`);
3. equality once a leading article is dropped ("glass orchard" = "The Glass Orchard");
4. the whole name written is contained in a candidate's name ("apple" in "Apple Inc. Common Stock"), the
   closest in length winning (so "Apple Inc." beats "Apple Hospitality REIT Inc.");
5. a candidate's name contained in the name written, but only when every word left over is generic
   ("the beatles band" → "The Beatles"); "florida city" never means "Florida", nor "kansas city" "Kansas":
   a shorter, different name is worse evidence than none;
6. a close spelling (difflib ratio ≥ 0.85 on the normalised names; typos in generated names);
7. embedding cosine ≥ `min_similarity` when an embedder is available ("harry potter and the sorcerer's
   stone" vs "... philosopher's stone").
No stage matching means no entity.

Near-duplicates ("The Glass Orchard" 2001, "Glass Orchard" 2019) are told apart by the title first and then
by the caller's `prefer` clue (the year a condition or the question names): a preferred candidate among
the same-title stages 1-3 wins; within any stage preferred candidates come first. Search rank never decides.

`ALL` keeps every candidate that stages 1-6 accept (the "maze runner" films), else the single best.
"""
from __future__ import annotations

import difflib
import logging
from typing import Callable, Iterable, Sequence, TypeVar

import numpy as np

from models.text import kg_match_key

log = logging.getLogger(__name__)
T = TypeVar("T")
_SPELLING_RATIO = 0.85
_SAME_TITLE_STAGES = 3  # exact, normalised, without a leading article
_ARTICLES = ("the ", "a ", "an ")
# words that may surround a name without changing which entity it is ("the beatles band", "apple inc")
_GENERIC_WORDS = frozenset("""the a an band group movie film song album single track artist singer musician
rapper inc incorporated corp corporation company co ltd plc llc stock stocks share shares common official
team club fc""".split())


class EntityMatcher:
    """Args:
        embedder: optional, `encode(texts, is_query=...) -> np.ndarray` of L2-normalised rows.
        min_similarity: cosine needed for an embedding match.
    """

    def __init__(self, embedder=None, min_similarity: float = 0.6):
        self.embedder = embedder
        self.min_similarity = min_similarity

    def pick(self, query: str, items: Sequence[T], names: Callable[[T], Iterable[str]] | None = None,
             all_matches: bool = False, prefer: Callable[[T], bool] | None = None) -> list[T]:
        """The matching items, best first (at most one unless `all_matches`).

        Args:
            query: the name written in the program.
            items: the search API's candidates (strings, or records).
            names: the names of one item (title and original title, ...); default: the item itself.
            all_matches: return every item accepted by the text stages.
            prefer: a clue beyond the name (e.g. the release year the question names); among candidates
                of the same title, and within each stage, those it accepts come first.
        """
        names = names or (lambda item: (item,))
        flat = [(str(n), i) for i, item in enumerate(items) for n in names(item) if n]
        if not flat or not str(query).strip():
            return []
        stages = self._text_stages(query, flat)
        if prefer is not None:
            stages = [_preferred_first(stage, items, prefer) for stage in stages]
        if all_matches:
            accepted = [i for stage in stages for i in stage]
            if accepted:
                return [items[i] for i in dict.fromkeys(accepted)]
        same_title = [i for stage in stages[:_SAME_TITLE_STAGES] for i in stage]
        preferred = [i for i in same_title if prefer is not None and accepts(prefer, items[i])]
        best = preferred or next((stage for stage in stages if stage), [])
        if not best:
            best = self._embedding_match(query, flat)
        return [items[best[0]]] if best else []

    def _text_stages(self, query: str, flat: list[tuple[str, int]]) -> list[list[int]]:
        """Candidate indexes accepted by each text stage, best first within a stage."""
        wanted = kg_match_key(query)
        normalised = [(kg_match_key(n), i) for n, i in flat]
        by_length = sorted(normalised, key=lambda p: abs(len(p[0]) - len(wanted)))
        bare = _without_article(wanted)
        return [
            [i for n, i in flat if n == query],
            [i for n, i in normalised if n == wanted],
            [i for n, i in normalised if bare and _without_article(n) == bare],
            [i for n, i in by_length if wanted and n and f" {wanted} " in f" {n} "],
            [i for n, i in by_length if n and f" {n} " in f" {wanted} " and _generic_rest(wanted, n)],
            [i for n, i in sorted(normalised, key=lambda p: -_ratio(p[0], wanted))
             if _ratio(n, wanted) >= _SPELLING_RATIO],
        ]

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


def _without_article(name: str) -> str:
    for article in _ARTICLES:
        if name.startswith(article):
            return name[len(article):]
    return name


def _generic_rest(written: str, candidate: str) -> bool:
    """Whether the written name is the candidate's plus generic words only."""
    rest = f" {written} ".replace(f" {candidate} ", " ", 1).split()
    return all(word in _GENERIC_WORDS for word in rest)


def accepts(prefer: Callable, item) -> bool:
    try:
        return bool(prefer(item))
    except Exception:  # a clue that cannot be read on this record simply does not apply
        return False


def _preferred_first(stage: list[int], items: Sequence, prefer: Callable) -> list[int]:
    return [i for i in stage if accepts(prefer, items[i])] + [i for i in stage if not accepts(prefer, items[i])]
