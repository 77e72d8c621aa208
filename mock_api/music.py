"""Music domain: six pickles under `music/` (artists, songs, Grammy DataFrame, Billboard Hot 100, works).

Artist and song search use the official `fast_bm25` ranking (see `search.py`). Everything else is exact and
case-sensitive, except the Grammy counts and award years, which match the query as a substring of the
`nominee`, `artist` and `workers` columns (a row counts once per column it matches, as officially).
Official behaviours kept on purpose: the by-year Grammy routes answer null outside 1957-2019; an unknown
Billboard rank is `[null, null]` and a date without that rank `[[], []]`; `get_lifespan` of an unknown artist
is `[null, null]`. Deviations: band members keep their stored order (deduplicated) instead of a set's
arbitrary order, and award years come back sorted.
"""
from __future__ import annotations

from pathlib import Path

import pandas as pd

from mock_api.layout import (MUSIC_ARTISTS, MUSIC_GRAMMY, MUSIC_HOT100, MUSIC_RANKS, MUSIC_SONGS,
                                     MUSIC_WORKS, KGDataError, require)
from mock_api.routes import BillboardQuery, IntQuery, RankQuery, Route, TextQuery
from mock_api.search import FastBM25Index, NameSearch

GRAMMY_FIRST_YEAR, GRAMMY_LAST_YEAR = 1957, 2019
_GRAMMY_TEXT_COLUMNS = ("nominee", "artist", "workers")
# Billboard rows are stored in two layouts; `row[6] == "-"` (a new entry) selects the first one.
_NEW_ENTRY_LAYOUT = {"rank_last_week": 6, "weeks_in_chart": 5, "top_position": 4}
_RETURNING_LAYOUT = {"rank_last_week": 4, "weeks_in_chart": 6, "top_position": 5}
_RANK_COLUMN = 3


class MusicKG:
    def __init__(self, kg_dir: str | Path):
        self.artists: dict = _load_pickle(kg_dir, MUSIC_ARTISTS)
        self.songs: dict = _load_pickle(kg_dir, MUSIC_SONGS)
        self.ranks: dict = _load_pickle(kg_dir, MUSIC_RANKS)
        self.hot100: dict = _load_pickle(kg_dir, MUSIC_HOT100)
        self.works: dict = _load_pickle(kg_dir, MUSIC_WORKS)
        grammy = _load_pickle(kg_dir, MUSIC_GRAMMY)
        missing = {"year", "category", *_GRAMMY_TEXT_COLUMNS} - set(getattr(grammy, "columns", ()))
        if missing:
            raise KGDataError(f"{MUSIC_GRAMMY}: expected a DataFrame with columns {sorted(missing)}")
        self.grammy_rows = grammy.to_dict("records")
        self.artist_search = NameSearch(self.artists, FastBM25Index)
        self.song_search = NameSearch(self.songs, FastBM25Index)

    # ------------------------------------------------------------------ Billboard
    def billboard_rank_date(self, rank: int, date: str | None) -> list:
        items = self.ranks.get(str(rank))
        if items is None:
            return [None, None]
        if date:
            for item in items:
                if item["Date"] == date:
                    return [[item["Song"]], [item["Artist"]]]
            return [[], []]
        return [[item["Song"] for item in items], [item["Artist"] for item in items]]

    def billboard_attribute(self, date: str, attribute: str, song_name: str):
        row = self.hot100.get(song_name, {}).get(date)
        if row is None:
            return None
        layout = _NEW_ENTRY_LAYOUT if row[6] == "-" else _RETURNING_LAYOUT
        return row[layout.get(attribute, _RANK_COLUMN)]  # any other attribute means the rank

    # ------------------------------------------------------------------ Grammy
    def grammy_winners(self, category: str, year: int) -> list | None:
        if year < GRAMMY_FIRST_YEAR or year > GRAMMY_LAST_YEAR:
            return None
        return [row["nominee"] for row in self.grammy_rows if row["category"] == category and row["year"] == year]

    def grammy_count_by_artist(self, name: str) -> int:
        return sum(name in str(row[column]) for row in self.grammy_rows for column in _GRAMMY_TEXT_COLUMNS)

    def grammy_years_by_artist(self, name: str) -> list[int]:
        return sorted({int(row["year"]) for row in self.grammy_rows
                       if any(name in str(row[column]) for column in _GRAMMY_TEXT_COLUMNS)})

    def grammy_all_best_new_artists(self) -> list:
        names = [row["nominee"] for row in self.grammy_rows if row["category"] == "Best New Artist"]
        return list(dict.fromkeys(n for n in names if isinstance(n, str)))  # dropna().unique()

    # ------------------------------------------------------------------ artists and songs
    def members(self, band: str) -> list | None:
        record = self.artists.get(band)
        if not isinstance(record, dict) or record.get("members") is None:
            return None
        return list(dict.fromkeys(record["members"]))

    def lifespan(self, artist: str) -> list:
        record = self.artists.get(artist)
        if not isinstance(record, dict):
            return [None, None]
        return [record.get("birth_date"), record.get("end_date")]

    def routes(self) -> list[Route]:
        def field(table, name):
            return lambda body: _field(table, body.query, name)

        return [
            Route("/music/search_artist_entity_by_name", TextQuery,
                  lambda body: self.artist_search.search(body.query)),
            Route("/music/search_song_entity_by_name", TextQuery, lambda body: self.song_search.search(body.query)),
            Route("/music/get_billboard_rank_date", RankQuery,
                  lambda body: self.billboard_rank_date(body.rank, body.date)),
            Route("/music/get_billboard_attributes", BillboardQuery,
                  lambda body: self.billboard_attribute(body.date, body.attribute, body.song_name)),
            Route("/music/grammy_get_best_artist_by_year", IntQuery,
                  lambda body: self.grammy_winners("Best New Artist", body.query)),
            Route("/music/grammy_get_award_count_by_artist", TextQuery,
                  lambda body: self.grammy_count_by_artist(body.query)),
            Route("/music/grammy_get_award_count_by_song", TextQuery,
                  lambda body: sum(row["nominee"] == body.query for row in self.grammy_rows)),
            Route("/music/grammy_get_best_song_by_year", IntQuery,
                  lambda body: self.grammy_winners("Song Of The Year", body.query)),
            Route("/music/grammy_get_award_date_by_artist", TextQuery,
                  lambda body: self.grammy_years_by_artist(body.query)),
            Route("/music/grammy_get_best_album_by_year", IntQuery,
                  lambda body: self.grammy_winners("Album Of The Year", body.query)),
            Route("/music/grammy_get_all_awarded_artists", None, self.grammy_all_best_new_artists),
            Route("/music/get_artist_birth_place", TextQuery, field(self.artists, "country")),
            Route("/music/get_artist_birth_date", TextQuery, field(self.artists, "birth_date")),
            Route("/music/get_members", TextQuery, lambda body: self.members(body.query)),
            Route("/music/get_lifespan", TextQuery, lambda body: self.lifespan(body.query)),
            Route("/music/get_song_author", TextQuery, field(self.songs, "author")),
            Route("/music/get_song_release_country", TextQuery, field(self.songs, "country")),
            Route("/music/get_song_release_date", TextQuery, field(self.songs, "date")),
            Route("/music/get_artist_all_works", TextQuery, lambda body: self.works.get(body.query)),
        ]


def _field(table: dict, key: str, name: str):
    """Official: a record's stored value when truthy, else null (also for an unknown key)."""
    record = table.get(key)
    return (record.get(name) or None) if isinstance(record, dict) else None


def _load_pickle(kg_dir: str | Path, relative: str):
    # pandas' reader also loads pickles written by older pandas (the official KG was pickled with 2.0.3);
    # pickles run code when loaded: only ever point --kg-dir at data you trust.
    return pd.read_pickle(require(kg_dir, relative))
