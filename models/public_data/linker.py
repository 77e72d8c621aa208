"""Entity linking: an extracted name -> entities of the store, from strict to lenient (db3 section 2.3).

    1 exact       normalised names equal ("The King's Speech" = "the kings speech")
    2 substring   one normalised name contains the other at word boundaries, the shorter having at
                  least `substring_min_chars` characters ("fight club movie" -> "Fight Club",
                  "dujardin" -> "Jean Dujardin"); closest lengths first
    3 near miss   the trigram index's nearest names, kept if their embedding cosine with the extracted
                  name reaches `embedding_threshold` ("godfather 2" -> "The Godfather: Part II") or
                  their character similarity reaches `fuzzy_threshold` ("the matirx" -> "The Matrix":
                  sentence embeddings read typos poorly, MiniLM gives that pair 0.45)

An exact hit ends the search, so an exact title never competes with look-alikes. A substring hit ends
it too unless it covers under `_WHOLE` of the longer name: "the godfather part two" contains "The
Godfather", but "The Godfather: Part II" is the better answer, so the near-miss stage runs as well and
its hits come first. Each name keeps at most `max_links` entities.
"""
from __future__ import annotations

from dataclasses import dataclass
from difflib import SequenceMatcher

import numpy as np

from models.text import name_key
from models.public_data.store import PublicStore

_WHOLE = 0.8  # a substring hit covering this share of the longer name is taken as the entity


@dataclass(frozen=True)
class Link:
    entity_id: int
    name: str
    stage: str  # exact | substring | embedding | fuzzy
    score: float  # 1.0 exact; length ratio for substring; cosine for embedding; character ratio for fuzzy


class EntityLinker:
    """Links names within one domain of a `PublicStore`."""

    def __init__(self, store: PublicStore, embedder=None, substring_min_chars: int = 4, max_links: int = 3,
                 link_candidates: int = 30, embedding_threshold: float = 0.6, fuzzy_threshold: float = 0.85):
        self.store = store
        self.embedder = embedder  # None: the embedding stage is skipped
        self.substring_min_chars = substring_min_chars
        self.max_links = max_links
        self.link_candidates = link_candidates
        self.embedding_threshold = embedding_threshold
        self.fuzzy_threshold = fuzzy_threshold

    def link(self, name: str, domain: str) -> list[Link]:
        """The entities `name` refers to in `domain`, best first; [] when nothing is close enough."""
        norm = name_key(name)
        if not norm:
            return []
        exact = self.store.exact(domain, norm)
        if exact:
            return [Link(i, n, "exact", 1.0) for i, n, _ in exact[:self.max_links]]
        partial = self._substring(norm, domain)
        if partial and partial[0].score >= _WHOLE:
            return partial
        near = self._near_miss(name, norm, domain)
        seen = {link.entity_id for link in near}
        return (near + [link for link in partial if link.entity_id not in seen])[:self.max_links]

    def _substring(self, norm: str, domain: str) -> list[Link]:
        if len(norm) < self.substring_min_chars:
            return []
        rows = self.store.containing(domain, norm)
        rows += self.store.contained_in(domain, norm, self.substring_min_chars)
        links = {}
        for entity_id, name, other in rows:
            shorter, longer = sorted((norm, other), key=len)
            if f" {shorter} " in f" {longer} ":  # word boundaries: "heat" must not link "wheat"
                links[entity_id] = Link(entity_id, name, "substring", len(shorter) / len(longer))
        return sorted(links.values(), key=lambda link: -link.score)[:self.max_links]

    def _near_miss(self, name: str, norm: str, domain: str) -> list[Link]:
        candidates = self.store.similar(domain, norm, self.link_candidates)
        if not candidates:
            return []
        cosines = [0.0] * len(candidates)
        if self.embedder is not None:
            vectors = np.asarray(self.embedder.encode([name] + [n for _, n, _ in candidates], is_query=False))
            cosines = (vectors[1:] @ vectors[0]).tolist()
        links = []
        for (entity_id, found, other), cosine in zip(candidates, cosines):
            fuzzy = SequenceMatcher(None, norm, other).ratio()
            if cosine >= self.embedding_threshold or fuzzy >= self.fuzzy_threshold:
                stage, score = ("embedding", cosine) if cosine >= fuzzy else ("fuzzy", fuzzy)
                links.append(Link(entity_id, found, stage, score))
        return sorted(links, key=lambda link: -link.score)[:self.max_links]
