"""Frozen dataclasses that cross package boundaries.

The grader hands us a dict of parallel lists; `CragModel` turns it into `Query` objects exactly once, so
every component below works with typed, immutable records and never re-validates raw input.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Mapping

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
    output_tokens, seconds), the KG program with its outcome and facts, the context chunks used, the raw
    model output and the verifier's decision with its reason. Plain JSON-able data.
    """

    text: str
    source: str  # kg | kg-direct | public | web | llm | deadline | error | fallback
    domain: str = ""
    detail: Mapping[str, Any] = field(default_factory=dict)
    trace: Mapping[str, Any] = field(default_factory=dict)
