"""The public-data pathway as the pipeline calls it: an entity request, then facts.

    entity_request(query, domain) -> GenerationRequest | None      prompts/entity_<domain>.txt, base model
    facts(query, domain, entity_text) -> list[str]                  link -> records -> rerank -> top facts

`facts` gathers candidate records from two places: the entities linked from the model's `&&`-joined
output, and, for an Oscar/Grammy question with a year, that ceremony's records (narrowed to the
categories the question names, and to winners unless it asks about nominations). Ceremony records in
a category the question names come first; the rest are reranked by embedding cosine with the
question; the best `top_facts` paragraphs become the context placed before the web context. A
question whose domain has no public data (sports, open, most finance and music questions; see
`triggers`) gets no request, so it costs no LLM call. Nothing here raises into the pipeline: a
missing store disables the pathway with one warning, and any failure inside `facts` returns [].
"""
from __future__ import annotations

import logging
import re

import numpy as np

from models.llm.generator import GenerationRequest
from models.llm.prompts import PromptLibrary
from models.public_data.database import ensure_database
from models.public_data.config import PublicDataConfig
from models.public_data.linker import EntityLinker
from models.text import name_key
from models.public_data.store import PublicStore
from models.public_data.triggers import (
    asks_about_nominations, award_lookup, is_shortcut_question, matching_categories, public_domain,
)
from models.types import Query

log = logging.getLogger(__name__)

_NO_ENTITY = {"", "none", "n a", "null", "unknown", "i dont know", "no entity"}
_ANSWER_PREFIX = re.compile(r"^\s*(answer|entities|entity)\s*:\s*", re.IGNORECASE)


def parse_entities(text: str, limit: int = 4) -> list[str]:
    """The names in an entity-prompt output: first line, `&&`-separated, quotes and "none" dropped.

    Args:
        text: e.g. 'Answer: "the matrix" && fight club\\nQuestion: ...'.
        limit: at most this many names (in order, duplicates removed).
    """
    line = _ANSWER_PREFIX.sub("", (text or "").strip().split("\n", 1)[0])
    names = []
    for part in line.split("&&"):
        name = part.strip().strip("\"'`.,;:[]()").strip()
        if name_key(name) not in _NO_ENTITY and name not in names:
            names.append(name)
    return names[:limit]


class PublicData:
    """Entity requests and facts over one `PublicStore` (or nothing, when the store is unavailable)."""

    def __init__(self, cfg: PublicDataConfig, store: PublicStore | None, embedder=None,
                 prompts: PromptLibrary | None = None):
        self.cfg = cfg
        self.store = store
        self.embedder = embedder
        self.prompts = prompts or PromptLibrary()
        self.linker = EntityLinker(store, embedder, substring_min_chars=cfg.substring_min_chars,
                                   max_links=cfg.max_links, link_candidates=cfg.link_candidates,
                                   embedding_threshold=cfg.embedding_threshold,
                                   fuzzy_threshold=cfg.fuzzy_threshold) if store else None

    @classmethod
    def from_config(cls, cfg: PublicDataConfig, embedder=None) -> "PublicData":
        """Opens (building it first if needed) the configured store; without one the pathway is off."""
        store = None
        path = ensure_database(cfg)
        if path is not None:
            try:
                store = PublicStore(path)
            except Exception as exc:  # a corrupt or foreign file: skip the pathway, keep the model
                log.warning("public-data database %s unusable (%s); the pathway is skipped", path, exc)
        return cls(cfg, store, embedder)

    @property
    def available(self) -> bool:
        return self.store is not None

    def is_shortcut_domain(self, query: Query, domain: str) -> bool:
        """Whether db3's public shortcut applies (an Oscar/Grammy question with a year, or a finance
        statistics question): its public facts alone usually answer it, with the base model."""
        return self.store is not None and is_shortcut_question(query.text, domain)

    def entity_request(self, query: Query, domain: str) -> GenerationRequest | None:
        """The entity-extraction request for `query`, or None when no public data can serve it."""
        target = public_domain(query.text, domain) if self.store else None
        if target is None:
            return None
        messages = self.prompts.get(f"entity_{target}").render(query=query.text)
        return GenerationRequest(messages, adapter=self.cfg.entity_adapter,
                                 max_new_tokens=self.cfg.entity_max_new_tokens, stop=("\n",))

    def facts(self, query: Query, domain: str, entity_text: str) -> list[str]:
        """The top public facts for `query` ("The [attribute] is [value]." paragraphs), best first.

        Args:
            query: the question.
            domain: the routed domain.
            entity_text: the raw output of the entity request (`&&`-joined names; may be "" or junk).

        Returns:
            At most `top_facts` paragraphs; [] when nothing links or anything goes wrong (never raises).
        """
        try:
            return self._facts(query, domain, entity_text)
        except Exception:
            log.exception("public facts failed for %s", query.interaction_id)
            return []

    def _facts(self, query: Query, domain: str, entity_text: str) -> list[str]:
        target = public_domain(query.text, domain) if self.store else None
        if target is None:
            return []
        awards, exact_category = self._award_records(query.text) if self.cfg.award_year_lookup else ([], False)
        entity_ids = [link.entity_id for name in parse_entities(entity_text, self.cfg.max_entities)
                      for link in self.linker.link(name, target)]
        linked = [row for row in self.store.records_of(entity_ids, self.cfg.max_records) if row not in awards]
        # The ceremony's records in the very category asked about answer the question by construction;
        # they go first, before anything the embedding ranks (MiniLM rates "best picture ... The
        # Artist" above "actor in a leading role ... Jean Dujardin" for "best actor in 2012").
        first = [text for _, text in awards] if exact_category else []
        rest = [text for _, text in ([] if exact_category else awards) + linked]
        ranked = first[:self.cfg.top_facts] + self._rerank(query.text, rest[:self.cfg.max_records])
        return ranked[:self.cfg.top_facts]

    def _award_records(self, text: str) -> tuple[list[tuple[int, str]], bool]:
        """That ceremony's `(record id, text)`, narrowed to the categories the question names and, unless
        it asks about nominations, to winners (losing nominees lead a small model to name one), plus
        whether a category was named."""
        lookup = award_lookup(text)
        if lookup is None:
            return [], False
        rows = self.store.award_records(lookup.source, lookup.year)
        wanted = matching_categories(text, {category for _, category, _, _ in rows})
        rows = [row for row in rows if not wanted or row[1] in wanted]
        if not asks_about_nominations(text) and any(won for _, _, won, _ in rows):
            rows = [row for row in rows if row[2]]
        return [(record_id, body) for record_id, _, _, body in rows], bool(wanted)

    def _rerank(self, text: str, facts: list[str]) -> list[str]:
        """`facts` by embedding cosine with the question, best first (unchanged without an embedder)."""
        if not facts or self.embedder is None:
            return facts
        query_vector = np.asarray(self.embedder.encode([text], is_query=True))[0]
        scores = np.asarray(self.embedder.encode(facts, is_query=False)) @ query_vector
        return [facts[i] for i in np.argsort(-scores, kind="stable")]
