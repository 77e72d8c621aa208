"""Open domain: Wikipedia-like entities from `open/kg.{0,1}.jsonl.bz2`, searched by name with BM25."""
from __future__ import annotations

from pathlib import Path

from mock_api.layout import OPEN_KG, KGDataError, require
from mock_api.routes import Route, TextQuery
from mock_api.search import NameSearch
from models.jsonl import read_jsonl


class OpenKG:
    """Both shards are read (each line is `["Entity Name", {summary_text, summary_structured, raw_mediawiki}]`)."""

    def __init__(self, kg_dir: str | Path):
        self.entities: dict[str, dict] = {}
        for relative in OPEN_KG:
            path = require(kg_dir, relative)
            pairs = read_jsonl(path, _name_and_entity, what="not a [name, entity] JSON pair", error=KGDataError)
            self.entities.update(pairs)
        self.search = NameSearch(self.entities)

    def routes(self) -> list[Route]:
        return [
            Route("/open/search_entity_by_name", TextQuery, lambda body: self.search.search(body.query)),
            Route("/open/get_entity", TextQuery, lambda body: self.entities.get(body.query)),
        ]


def _name_and_entity(pair) -> tuple[str, dict]:
    name, entity = pair
    return name, entity
