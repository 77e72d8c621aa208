"""The bundled-KG builder (`mock_api/bundled_kg.py`, `scripts/build_bundled_kg.py`): official file shapes,
source consistency checks, the cache, and a round trip
(build -> serve -> every sample question's fact found through the API the way a KG program would look it up)."""
from __future__ import annotations

import bz2
import json
import shutil
import sqlite3

import pandas as pd
import pytest

from mock_api import bundled_kg, layout
from mock_api.search import normalize
from mock_api.server import running_server
from models.kg.client import MockAPIClient
from scripts import build_bundled_kg


@pytest.fixture(scope="module")
def kg_dir(tmp_path_factory):
    return bundled_kg.build(tmp_path_factory.mktemp("cragkg"))


@pytest.fixture(scope="module")
def api(kg_dir):
    with running_server(kg_dir) as base_url:
        yield MockAPIClient(base_url, timeout_s=10.0)


def test_build_writes_every_official_file(kg_dir):
    assert all((kg_dir / relative).is_file() for relative in layout.ALL_FILES)


def test_files_have_the_official_shapes(kg_dir):
    with bz2.open(kg_dir / layout.OPEN_KG[1], "rt", encoding="utf8") as shard:
        name, entity = json.loads(shard.readline())
    assert isinstance(name, str) and set(entity) == {"summary_text", "summary_structured", "raw_mediawiki"}
    movie_db = json.loads((kg_dir / layout.MOVIE_DB).read_text(encoding="utf8"))
    titles = [normalize(record["title"]) for record in movie_db.values()]
    # the official key is the normalised title; films sharing a title add their release year ("dune 2021")
    assert all(key == normalize(record["title"]) if titles.count(normalize(record["title"])) == 1
               else key == f"{normalize(record['title'])} {record['release_date'][:4]}"
               for key, record in movie_db.items())
    assert {"dune 1984", "dune 2021", "little women 1994", "little women 2019"} <= set(movie_db)
    year_db = json.loads((kg_dir / layout.YEAR_DB).read_text(encoding="utf8"))
    assert list(year_db) == [str(year) for year in range(1990, 2022)]
    assert (kg_dir / layout.FINANCE_COMPANIES).read_text().splitlines()[0] == ",Name,Symbol"
    with sqlite3.connect(kg_dir / layout.FINANCE_PRICE) as db:
        assert db.execute("select name from sqlite_master where type = 'table'").fetchall() == [("unnamed",)]
        assert [row[1] for row in db.execute("pragma table_info(unnamed)")] == ["key", "value"]
    grammy = pd.read_pickle(kg_dir / layout.MUSIC_GRAMMY)
    assert isinstance(grammy.index, pd.RangeIndex) and {"year", "category", "nominee", "artist", "workers"} <= set(
        grammy.columns)
    soccer = pd.read_pickle(kg_dir / layout.SOCCER)
    assert list(soccer.index.names) == ["league", "season", "team", "game"]
    assert pd.api.types.is_datetime64_any_dtype(soccer["date"])
    with sqlite3.connect(kg_dir / layout.NBA_DB) as db:
        columns = [row[1] for row in db.execute("pragma table_info(game)")]
    assert columns[:9] == ["season_id", "team_id_home", "team_abbreviation_home", "team_name_home", "game_id",
                           "game_date", "matchup_home", "wl_home", "min"]
    assert columns[-1] == "season_type" and len(columns) == 55


def test_music_corpora_are_padded_past_the_fast_bm25_minimum(kg_dir):
    for relative in (layout.MUSIC_ARTISTS, layout.MUSIC_SONGS):
        names = pd.read_pickle(kg_dir / relative)
        assert len({normalize(name) for name in names}) == bundled_kg.MUSIC_CORPUS_SIZE >= 83


def test_detailed_bars_reproduce_the_daily_bar(kg_dir, api):
    daily = api.finance_get_price_history("MSFT")["2024-02-23 00:00:00 EST"]
    minutes = {k: v for k, v in api.finance_get_detailed_price_history("MSFT").items() if k.startswith("2024-02-23")}
    assert len(minutes) == bundled_kg.MINUTES_PER_SESSION
    assert minutes["2024-02-23 09:30:00 EST"]["Open"] == daily["Open"]
    assert minutes["2024-02-23 15:59:00 EST"]["Close"] == daily["Close"]
    assert max(bar["High"] for bar in minutes.values()) == daily["High"]
    assert min(bar["Low"] for bar in minutes.values()) == daily["Low"]


# sample id -> a lookup through the API the way a KG program would do it, and the fact it must find
def _director_of_best_picture(api, year):
    film = next(a["film"] for a in api.movie_get_year_info(year)["oscar_awards"]
                if a["winner"] and a["category"] == "BEST PICTURE")
    movie = api.movie_get_movie_info(film)[0]
    return [c["name"] for c in movie["crew"] if c["job"] == "Director"]


SAMPLE_FACTS = {
    "m1": (lambda api: api.movie_get_movie_info("inception")[0]["release_date"], "2010-07-15"),
    "m2": (lambda api: min((api.movie_get_movie_info(title)[0]["release_date"], title)
                           for title in ("the matrix", "fight club"))[1], "the matrix"),
    "m3": (lambda api: [a["name"] for a in api.movie_get_year_info(2012)["oscar_awards"]
                        if a["winner"] and a["category"] == "ACTOR IN A LEADING ROLE"], ["Jean Dujardin"]),
    "m4": (lambda api: _director_of_best_picture(api, 2020), ["Bong Joon Ho"]),
    "mu1": (lambda api: len(api.music_get_members(api.music_search_artist_entity_by_name("coldplay")[0])), 4),
    "mu2": (lambda api: 2020 in api.music_grammy_get_award_date_by_artist("Billie Eilish")
            and "Billie Eilish" in api.music_grammy_get_all_awarded_artists(), True),
    "mu3": (lambda api: api.music_get_artist_all_works("Taylor Swift")[0], "Love Story"),
    "mu4": (lambda api: api.music_get_song_release_date(
        api.music_search_song_entity_by_name("bohemian rhapsody")[0])[:4], "1975"),
    "f1": (lambda api: api.finance_get_price_history(api.finance_get_ticker_by_name(
        api.finance_get_company_name("apple")[0]))["2024-02-27 00:00:00 EST"]["Close"], 182.63),
    "f2": (lambda api: api.finance_get_market_capitalization("MSFT") > api.finance_get_market_capitalization("AAPL"),
           True),
    "f3": (lambda api: [v for k, v in api.finance_get_dividends_history("MSFT").items() if k.startswith("2024-02")],
           [0.75]),
    "f4": (lambda api: sorted(k[:7] for k in api.finance_get_dividends_history("AAPL")),
           ["2023-02", "2023-05", "2023-08", "2023-11", "2024-02"]),
    "s1": (lambda api: api.sports_nba_get_games_on_date("2022-10-18", "Golden State Warriors")["pts_home"]["0"], 123.0),
    "s2": (lambda api: [(t["GF"][k], t["GA"][k]) for t in [api.sports_soccer_get_games_on_date("2024-02-04", "Arsenal")]
                        for k in t["GF"]], [(3.0, 1.0)]),
    "s3": (lambda api: api.open_get_entity(api.open_search_entity_by_name("novak djokovic")[0])[
        "summary_structured"]["grand_slam_singles_titles"], "24"),
    "s4": (lambda api: "nba" in json.dumps(api.open_get_entity("Lionel Messi")).lower(), False),
    "o1": (lambda api: api.open_get_entity(api.open_search_entity_by_name("australia")[0])["summary_structured"][
        "capital"], "Canberra"),
    "o2": (lambda api: [api.open_get_entity(n)["summary_structured"]["height"] for n in ("Eiffel Tower",
                                                                                        "Statue of Liberty")],
           ["330 m", "93 m (ground to torch)"]),
    "o3": (lambda api: api.open_get_entity(api.open_get_entity("SpaceX")["summary_structured"]["founder"])[
        "summary_structured"]["birth_place"], "Pretoria, Transvaal, South Africa"),
    "o4": (lambda api: api.open_get_entity("Switzerland")["summary_structured"]["borders"],
           "France, Germany, Italy, Austria, Liechtenstein"),
}


@pytest.mark.parametrize("sample_id", sorted(SAMPLE_FACTS))
def test_sample_question_facts_round_trip_through_the_api(api, sample_id):
    lookup, expected = SAMPLE_FACTS[sample_id]
    assert lookup(api) == expected


def test_inconsistent_sources_are_rejected(tmp_path):
    source = tmp_path / "source"
    shutil.copytree(bundled_kg.SOURCE_DIR, source)
    movies = json.loads((source / "movie" / "movies.json").read_text(encoding="utf8"))
    movies[0]["cast"].append(["Nobody Listed", "Extra", 2])
    (source / "movie" / "movies.json").write_text(json.dumps(movies), encoding="utf8")
    with pytest.raises(ValueError, match="'Nobody Listed', who is not in persons.json"):
        bundled_kg.build(tmp_path / "out", source)


def test_ensure_bundled_kg_builds_once_and_rebuilds_when_stale(tmp_path, monkeypatch):
    cache = tmp_path / "bundled_kg"
    assert bundled_kg.ensure_bundled_kg(cache) == cache
    marker = cache / layout.MOVIE_DB
    built_at = marker.stat().st_mtime_ns
    bundled_kg.ensure_bundled_kg(cache)
    assert marker.stat().st_mtime_ns == built_at  # fresh: not rebuilt
    monkeypatch.setattr(bundled_kg, "source_digest", lambda source_dir=bundled_kg.SOURCE_DIR: "changed")
    bundled_kg.ensure_bundled_kg(cache)
    assert (cache / ".source-digest").read_text() == "changed"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".bundled_kg-")]  # staging cleaned up


def test_cli_build(tmp_path, capsys):
    build_bundled_kg.main(["--out", str(tmp_path / "cli")])
    assert (tmp_path / "cli" / layout.SOCCER).is_file()
    assert "fixture KG written to" in capsys.readouterr().out


def test_films_of_the_same_title_are_both_found(api):
    found = [(m["title"], m["release_date"][:4]) for m in api.movie_get_movie_info("dune")]
    assert {("Dune", "1984"), ("Dune", "2021")} <= set(found)
    directors = {m["release_date"][:4]: [c["name"] for c in m["crew"] if c["job"] == "Director"]
                 for m in api.movie_get_movie_info("little women") if m["title"] == "Little Women"}
    assert directors == {"1994": ["Gillian Armstrong"], "2019": ["Greta Gerwig"]}
