"""Movie domain: `movie/{movie_db,person_db,year_db}.json`.

Movie and person search rank the db keys (already-normalised names) with BM25 and return the records; id
lookups are exact. `get_year_info` keeps the official quirk: a year outside 1990-2021 (or not a number) is a
500 with a plain-text body, which clients must treat as "no result".
"""
from __future__ import annotations

import json
from pathlib import Path

from mock_api.layout import MOVIE_DB, PERSON_DB, YEAR_DB, KGDataError, require
from mock_api.routes import IntQuery, MockAPIError, Route, TextQuery
from mock_api.search import OkapiIndex, normalize

FIRST_YEAR, LAST_YEAR = 1990, 2021


class _RecordSearch:
    """BM25 over the keys of a `{normalised name: record}` db, returning records."""

    def __init__(self, db: dict[str, dict], relative: str):
        for key in db:
            if key != " ".join(key.split()):  # the official server maps hits back by " ".join(key.split())
                raise KGDataError(f"{relative}: key {key!r} is not single-spaced (keys must be normalised names)")
        self.db = db
        self.index = OkapiIndex(list(db))
        self.by_id = {record["id"]: record for record in db.values() if "id" in record}

    def search(self, query: str) -> list[dict]:
        return [self.db[key] for key in self.index.search(normalize(query))]


class MovieKG:
    def __init__(self, kg_dir: str | Path):
        self.movies = _RecordSearch(_load_json(kg_dir, MOVIE_DB), MOVIE_DB)
        self.persons = _RecordSearch(_load_json(kg_dir, PERSON_DB), PERSON_DB)
        self.years: dict[str, dict] = _load_json(kg_dir, YEAR_DB)

    def get_year_info(self, year: str) -> dict | None:
        """The year's `{movie_list, oscar_awards}`.

        Raises:
            MockAPIError: the year is not an integer in 1990-2021 (a 500, as in the official server).
        """
        try:
            number = int(year)
        except ValueError:
            raise MockAPIError(f"invalid literal for int(): {year!r}") from None
        if not FIRST_YEAR <= number <= LAST_YEAR:
            raise MockAPIError(f"Year must be between {FIRST_YEAR} and {LAST_YEAR}")
        return self.years.get(year)

    def routes(self) -> list[Route]:
        return [
            Route("/movie/get_person_info", TextQuery, lambda body: self.persons.search(body.query)),
            Route("/movie/get_movie_info", TextQuery, lambda body: self.movies.search(body.query)),
            Route("/movie/get_year_info", TextQuery, lambda body: self.get_year_info(body.query)),
            Route("/movie/get_movie_info_by_id", IntQuery, lambda body: self.movies.by_id.get(body.query)),
            Route("/movie/get_person_info_by_id", IntQuery, lambda body: self.persons.by_id.get(body.query)),
        ]


def _load_json(kg_dir: str | Path, relative: str) -> dict:
    with open(require(kg_dir, relative), encoding="utf8") as file:
        data = json.load(file)
    if not isinstance(data, dict):
        raise KGDataError(f"{relative}: expected a JSON object keyed by name or year")
    return data
