"""Open domain: `get_open(entity)[key]` over `open/search_entity_by_name` and `open/get_entity`.

An entity's row holds its summary text and its infobox (`summary_structured`), with the infobox's wiki
markup reduced to plain text ("[[Pretoria|Pretoria, South Africa]]" → "Pretoria, South Africa"; templates,
references, HTML and images dropped). Infobox keys differ between entities ("founder" vs "founders"), which
`resolve_key`'s plural and containment rules absorb; when a key is missing altogether the executor falls
back to the whole row, so a wrong key guess still yields the entity's facts.
"""
from __future__ import annotations

import re

from models.kg.apis.context import CallContext
from models.kg.apis.records import Row, Table
from models.kg.apis.registry import kg_function
from models.kg.language.signature import TEXT, Param

_SKIPPED_WORDS = {"image", "logo", "caption", "alt", "signature", "map", "website", "url", "coordinates", "footnotes"}
_LINK = re.compile(r"\[\[(?:[^\]|]*\|)?([^\]]*)\]\]")
_TEMPLATE = re.compile(r"\{\{[^{}]*\}\}")
_REFERENCE = re.compile(r"<ref[^>]*/>|<ref[^>]*>.*?</ref>", re.DOTALL | re.IGNORECASE)
_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)
_TAG = re.compile(r"<[^>]+>")
_OPEN_ALIASES = {"summary text": "summary", "description": "summary", "about": "summary", "overview": "summary"}


@kg_function("open", Param("entity", TEXT), searches=True)
def get_open(ctx: CallContext, entity: str) -> Table:
    """get_open(entity)[key]: name, summary and the entity's infobox fields (capital, population, founders,
    birth_place, ...)."""
    rows = []
    for name in ctx.pick(entity, ctx.api.call("open_search_entity_by_name", entity)):
        record = ctx.api.call("open_get_entity", name)
        if isinstance(record, dict):
            rows.append(Row(_fields(name, record), name, "name"))
    return Table(tuple(rows), f"entity matching {entity!r}", aliases=_OPEN_ALIASES, found=bool(rows))


def _fields(name: str, record: dict) -> dict:
    fields = {"name": name, "summary": clean_wiki(record.get("summary_text") or "")}
    structured = record.get("summary_structured")
    for key, value in (structured.items() if isinstance(structured, dict) else ()):
        if _SKIPPED_WORDS & set(re.split(r"[_\s]+", str(key).lower())) or str(key) in fields:
            continue
        text = clean_wiki(str(value)) if value is not None else ""
        if text:
            fields[str(key)] = text
    return fields


def clean_wiki(text: str) -> str:
    """Plain text from MediaWiki markup (links, templates, references, HTML, bold/italic quotes)."""
    text = _REFERENCE.sub("", text)
    text = _BREAK.sub(", ", text)
    previous = None
    while previous != text:  # nested templates: strip innermost first
        previous, text = text, _TEMPLATE.sub("", text)
    text = _LINK.sub(r"\1", text)
    text = _TAG.sub("", text).replace("'''", "").replace("''", "").replace("&nbsp;", " ")
    return " ".join(text.split()).strip(" ,")
