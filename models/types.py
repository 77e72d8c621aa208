"""Frozen dataclasses that cross package boundaries.

The grader hands us a dict of parallel lists; `CragModel` turns it into `Query` objects exactly once (through
`Query.from_crag`, as the evaluator's tools and training do), so every component below works with typed,
immutable records and never re-validates raw input.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping

from models.text import safe_text

DOMAINS = ("finance", "music", "movie", "sports", "open")
IDK = "i don't know"
INVALID = "invalid question"

_QUERY_TIME_FORMATS = ("%m/%d/%Y, %H:%M:%S PT", "%m/%d/%Y, %H:%M:%S", "%Y-%m-%d %H:%M:%S", "%Y-%m-%d")


def parse_query_time(text: str) -> datetime | None:
    """Parses CRAG's `"02/28/2024, 10:04:54 PT"` (US Pacific); None when it is not a known format."""
    text = (text or "").strip()
    for fmt in _QUERY_TIME_FORMATS:
        try:
            return datetime.strptime(text, fmt)
        except ValueError:
            continue
    return None


def _as_text(value: Any) -> str:
    """Coerces a page field to `str`: None -> "", bytes decoded leniently (pages can be non-UTF-8)."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    return value if isinstance(value, str) else str(value)


@dataclass(frozen=True)
class SearchResult:
    """One web page of a query's search results (keys as in the CRAG data)."""

    page_name: str = ""
    page_url: str = ""
    page_snippet: str = ""
    page_result: str = ""  # full HTML; may be ""
    page_last_modified: str = ""

    @classmethod
    def from_raw(cls, raw: Any) -> "SearchResult":
        """Builds a page from a raw dict; anything that is not a dict becomes an empty page."""
        if not isinstance(raw, Mapping):
            return cls()
        return cls(**{name: _as_text(raw.get(name)) for name in cls.__dataclass_fields__})

    def made_safe(self) -> "SearchResult":
        """The page with every field through `safe_text` (the fields are already strings)."""
        return SearchResult(**{name: safe_text(getattr(self, name)) for name in self.__dataclass_fields__})


@dataclass(frozen=True)
class Query:
    """One question as the model sees it (no domain, type or gold answer reach the model)."""

    interaction_id: str
    text: str
    query_time: str = ""
    search_results: tuple[SearchResult, ...] = ()

    @property
    def time(self) -> datetime | None:
        return parse_query_time(self.query_time)

    @classmethod
    def from_crag(cls, record: Mapping[str, Any], default_id: str = "") -> "Query":
        """One CRAG record (a line of the data, or one row of the grader's batch) as the model sees it.

        Every string (id, query, time, page name, URL, snippet, HTML, date) goes through `safe_text` once here
        (lone surrogates, NULs and other control characters out), so nothing downstream meets text its tokenizer
        or encoder rejects; pages that are not dicts become empty pages; gold fields are never read.

        Raises:
            ValueError: the query is missing, empty or not a string.
        """
        text = record.get("query")
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"the query is empty or not a string: {text!r}")
        pages = record.get("search_results")
        pages = pages if isinstance(pages, (list, tuple)) else []
        interaction_id = record.get("interaction_id")
        return cls(interaction_id=safe_text(default_id if interaction_id is None else interaction_id),
                   text=safe_text(text).strip(), query_time=safe_text(record.get("query_time") or ""),
                   search_results=tuple(SearchResult.from_raw(p).made_safe() for p in pages))


@dataclass(frozen=True)
class Chunk:
    """A piece of retrieved context: a parent chunk, a table, a snippet or a verbalised fact block."""

    text: str
    source: str = ""  # page URL or pathway name
    kind: str = "text"  # text | table | snippet | kg | public
    score: float = 0.0


@dataclass(frozen=True)
class Answer:
    """The final answer for one query plus where it came from (for reports, never sent to the grader).

    `trace` is everything needed to see why the answer is what it is, built stage by stage by the pipeline:
    task, domain, seconds per stage, every LLM call (`llm_calls`: stage, adapter, prompt_tokens,
    output_tokens, seconds; `adapter_missing` when the base model stood in for a missing adapter), the KG program
    with its outcome and facts, the context chunks used, the raw model output and the verifier's decision with
    its reason. Plain JSON-able data.
    """

    text: str
    source: str  # the name of the pathway that settled it, or why none did (models/pathways.py)
    domain: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)
    trace: Mapping[str, Any] = field(default_factory=dict)
