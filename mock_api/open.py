"""Open domain: Wikipedia-like entities from `open/kg.{0,1}.jsonl.bz2`, searched by name with BM25."""
from __future__ import annotations

import bz2
import json
from pathlib import Path

from mock_api.layout import OPEN_KG, KGDataError, require
from mock_api.routes import Route, TextQuery
from mock_api.search import NameSearch


class OpenKG:
    """Both shards are read (each line is `["Entity Name", {summary_text, summary_structured, raw_mediawiki}]`)."""

    def __init__(self, kg_dir: str | Path):
        self.entities: dict[str, dict] = {}
        for relative in OPEN_KG:
            path = require(kg_dir, relative)
            with bz2.open(path, "rt", encoding="utf8") as lines:
                for number, line in enumerate(lines, 1):
                    if not line.strip():
                        continue
                    try:
                        name, entity = json.loads(line)
                    except ValueError as error:
                        raise KGDataError(f"{relative}:{number}: not a [name, entity] JSON pair ({error})") from None
                    self.entities[name] = entity
        self.search = NameSearch(self.entities)

    def routes(self) -> list[Route]:
        return [
            Route("/open/search_entity_by_name", TextQuery, lambda body: self.search.search(body.query)),
            Route("/open/get_entity", TextQuery, lambda body: self.entities.get(body.query)),
        ]
