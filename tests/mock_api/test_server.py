"""The local mock-API server over the fixture KG, exercised through real HTTP with `MockAPIClient`.

Every one of the 38 routes is called at least once with an exact expected answer; the official quirks
(top-10 BM25 search dropping zero scores, exact case-sensitive lookups, the movie year-range 500, sports
shapes and nulls) are checked explicitly, as are start-up errors and the load-time budget.
"""
from __future__ import annotations

import shutil
import socket
import subprocess
import sys
import time

import pytest
import requests

from mock_api import KGDataError
from mock_api.bundled_kg import build
from mock_api.layout import MUSIC_GRAMMY
from mock_api.server import create_app, running_server
from models.kg.client import KGClientError, MockAPIClient
from models.paths import REPO_ROOT


@pytest.fixture(scope="module")
def kg_dir(tmp_path_factory):
    return build(tmp_path_factory.mktemp("cragkg"))


@pytest.fixture(scope="module")
def api(kg_dir):
    with running_server(kg_dir) as base_url:
        with MockAPIClient(base_url, timeout_s=10.0) as client:
            yield client


def _titles(records):
    return [record["title"] for record in records]


def _game(table: dict) -> dict:
    """The single row of an NBA answer ({column: {"0": value}}) as a flat dict."""
    assert all(list(cells) == ["0"] for cells in table.values())
    return {column: cells["0"] for column, cells in table.items()}


# method, args, expected answer (or a predicate on it)
ANSWERS = [
    ("open_search_entity_by_name", ("australia",),
     ["Australia", "Australia (continent)", "Australia national cricket team"]),
    ("open_get_entity", ("Australia",), lambda e: e["summary_structured"]["capital"] == "Canberra"
     and "Canberra" in e["summary_text"] and e["raw_mediawiki"].startswith("{{Infobox")),
    ("movie_get_person_info", ("bong joon ho",), lambda r: r[0]["name"] == "Bong Joon Ho"
     and r[0]["directed_movies"] == [496243] and r[0]["birthday"] == "1969-09-14"),
    ("movie_get_movie_info", ("inception",), lambda r: _titles(r) == ["Inception", "Inception: The Cobol Job"]
     and r[0]["release_date"] == "2010-07-15"
     and {"name": "Christopher Nolan", "id": 525, "job": "Director"} in r[0]["crew"]),
    ("movie_get_year_info", ("2012",), lambda y: {(a["name"], a["film"]) for a in y["oscar_awards"]
                                                   if a["winner"] and a["category"] == "ACTOR IN A LEADING ROLE"}
     == {("Jean Dujardin", "The Artist")} and 74643 not in y["movie_list"]),
    ("movie_get_movie_info_by_id", (603,), lambda m: (m["title"], m["release_date"]) == ("The Matrix", "1999-03-30")),
    ("movie_get_person_info_by_id", (7467,), lambda p: p["name"] == "David Fincher" and 550 in p["directed_movies"]),
    ("finance_get_company_name", ("apple",),
     ["Apple Inc. Common Stock", "Apple Hospitality REIT Inc. Common Shares"]),
    ("finance_get_ticker_by_name", ("Apple Inc. Common Stock",), "AAPL"),
    ("finance_get_price_history", ("AAPL",), lambda h: [h[f"2024-02-{d} 00:00:00 EST"]["Close"] for d in (26, 27, 28)]
     == [181.16, 182.63, 181.42] and set(h["2024-02-27 00:00:00 EST"]) == {"Open", "High", "Low", "Close", "Volume"}),
    ("finance_get_detailed_price_history", ("AAPL",), lambda h: len(h) == 5 * 390
     and min(h) == "2024-02-22 09:30:00 EST" and max(h) == "2024-02-28 15:59:00 EST"
     and h["2024-02-27 15:59:00 EST"]["Close"] == 182.63),
    ("finance_get_dividends_history", ("MSFT",), lambda d: d["2024-02-14 00:00:00 EST"] == 0.75
     and d["2023-11-15 00:00:00 EST"] == 0.75 and d["2023-08-16 00:00:00 EST"] == 0.68),
    ("finance_get_market_capitalization", ("MSFT",), 3.06e12),
    ("finance_get_eps", ("AAPL",), 7.36),
    ("finance_get_pe_ratio", ("AAPL",), 24.66),
    ("finance_get_info", ("AAPL",), lambda i: i["symbol"] == "AAPL" and i["marketCap"] == 2810000000000),
    ("music_search_artist_entity_by_name", ("queen",), ["Queen", "Queen Latifah", "Queen Naija"]),
    ("music_search_song_entity_by_name", ("bohemian rhapsody",),
     ["Bohemian Rhapsody", "Bohemian Rhapsody (Live at Wembley '86)", "Bohemian Like You"]),
    ("music_get_billboard_rank_date", (1, "2024-03-09"), [["Texas Hold 'Em"], ["Beyonce"]]),
    ("music_get_billboard_attributes", ("2024-03-09", "weeks_in_chart", "Texas Hold 'Em"), "2"),
    ("music_grammy_get_best_artist_by_year", (2019,), ["Dua Lipa"]),
    ("music_grammy_get_award_count_by_artist", ("Billie Eilish",), 8),  # one per column mentioning her, 6 rows
    ("music_grammy_get_award_count_by_song", ("Hello",), 2),
    ("music_grammy_get_best_song_by_year", (2017,), ["Hello"]),
    ("music_grammy_get_award_date_by_artist", ("Billie Eilish",), [2020, 2024]),
    ("music_grammy_get_best_album_by_year", (2016,), ["1989"]),
    ("music_grammy_get_all_awarded_artists", (), lambda names: "Billie Eilish" in names and "Adele" in names
     and len(names) == len(set(names)) == 9),
    ("music_get_artist_birth_place", ("Coldplay",), "GB"),
    ("music_get_artist_birth_date", ("Billie Eilish",), "2001-12-18"),
    ("music_get_members", ("Coldplay",), ["Chris Martin", "Jonny Buckland", "Guy Berryman", "Will Champion"]),
    ("music_get_lifespan", ("Freddie Mercury",), ["1946-09-05", "1991-11-24"]),
    ("music_get_song_author", ("Bohemian Rhapsody",), "Freddie Mercury"),
    ("music_get_song_release_country", ("Bohemian Rhapsody",), "GB"),
    ("music_get_song_release_date", ("Bohemian Rhapsody",), "1975-10-31"),
    ("music_get_artist_all_works", ("Coldplay",), lambda works: "Yellow" in works and len(works) == 6),
    ("sports_soccer_get_games_on_date", ("2024-02-04", "Arsenal"), lambda table: table["GF"] == {
        "('ENG-Premier League', '2324', 'Arsenal', '2024-02-04 Arsenal-Liverpool')": 3.0}
     and list(table["GA"].values()) == [1.0] and list(table["result"].values()) == ["W"]
     and list(table["opponent"].values()) == ["Liverpool"] and list(table["venue"].values()) == ["Home"]
     and list(table["date"].values()) == ["2024-02-04T00:00:00.000"]),
    ("sports_nba_get_games_on_date", ("2022-10-18", "Golden State Warriors"), lambda table: {
        k: _game(table)[k] for k in ("team_name_home", "pts_home", "team_name_away", "pts_away", "wl_home",
                                     "game_date", "matchup_away")} == {
        "team_name_home": "Golden State Warriors", "pts_home": 123.0, "team_name_away": "Los Angeles Lakers",
        "pts_away": 109.0, "wl_home": "W", "game_date": "2022-10-18 00:00:00", "matchup_away": "LAL @ GSW"}),
    ("sports_nba_get_play_by_play_data_by_game_ids", (["0022200002"],), lambda table: set(
        table["game_id"].values()) == {"0022200002"} and "Curry 26' 3PT Jump Shot (3 PTS)" in table[
        "homedescription"].values() and len(table) == 34),
]


@pytest.mark.parametrize("method, args, expected", ANSWERS, ids=[row[0] for row in ANSWERS])
def test_route_answers_from_the_fixture(api, method, args, expected):
    answer = getattr(api, method)(*args)
    assert expected(answer) if callable(expected) else answer == expected


def test_answers_cover_every_route_and_the_app_serves_exactly_38(kg_dir):
    assert len({row[0] for row in ANSWERS}) == 38
    app = create_app(kg_dir)
    assert len([route for route in app.routes if "POST" in getattr(route, "methods", ())]) == 38


def test_root_says_it_is_running(api):
    assert requests.get(api.base_url + "/", timeout=5).json() == {"message": "The CRAG API service is running"}


def test_search_keeps_at_most_ten_and_drops_zero_scores(api):
    assert len(api.movie_get_movie_info("the")) == 10
    assert api.open_search_entity_by_name("zzzz qqqq") == []
    assert api.music_search_artist_entity_by_name("zzzz") == []
    assert api.movie_get_movie_info("The Matrix!")[0]["title"] == "The Matrix"  # punctuation/case normalised


def test_exact_lookups_are_case_sensitive(api):
    assert api.open_get_entity("australia") is None
    assert api.finance_get_ticker_by_name("apple inc. common stock") is None
    assert api.music_get_members("coldplay") is None
    assert api.finance_get_price_history("aapl") is None
    assert api.movie_get_movie_info_by_id(1) is None


@pytest.mark.parametrize("year", ["1989", "2022", "nineteen"])
def test_movie_year_outside_range_is_a_plain_text_500(api, year):
    with pytest.raises(KGClientError, match="HTTP 500") as error:
        api.movie_get_year_info(year)
    assert error.value.status == 500


def test_wrong_body_types_are_422(api):
    response = requests.post(api.base_url + "/movie/get_year_info", json={"query": 2012}, timeout=5)
    assert response.status_code == 422  # pydantic v2 does not turn an int into a str field
    response = requests.post(api.base_url + "/movie/get_movie_info_by_id", json={"query": "603"}, timeout=5)
    assert response.status_code == 200 and response.json()["result"]["title"] == "The Matrix"


def test_music_quirks(api):
    assert api.music_grammy_get_best_artist_by_year(2020) is None  # official range is 1957-2019
    assert api.music_get_billboard_rank_date(1, "2024-03-10") == [[], []]
    assert api.music_get_billboard_rank_date(77) == [None, None]
    songs, artists = api.music_get_billboard_rank_date(1)
    assert songs == ["Lovin on Me", "Lovin on Me", "Texas Hold 'Em"] and len(artists) == 3
    assert api.music_get_billboard_attributes("2024-03-02", "rank_last_week", "Texas Hold 'Em") == "-"
    assert api.music_get_billboard_attributes("2024-03-02", "anything", "Texas Hold 'Em") == "2"
    assert api.music_get_lifespan("Nobody At All") == [None, None]
    assert api.music_get_artist_birth_place("Nobody At All") is None


def test_soccer_dates_and_team_names(api):
    february = api.sports_soccer_get_games_on_date("2024-02", "Arsenal")
    assert sorted(february["opponent"].values()) == ["Burnley", "Liverpool", "Newcastle Utd", "West Ham"]
    assert api.sports_soccer_get_games_on_date("2024-02-04", "arsenal") is None
    tula = api.sports_soccer_get_games_on_date("2024", "Arsenal Tula")
    assert list(tula["opponent"].values()) == ["Rodina Moscow"]
    both_sides = api.sports_soccer_get_games_on_date("2024-02-04")
    assert sorted(key.split("'")[5] for key in both_sides["GF"]) == [
        "Arsenal", "Atletico Madrid", "Liverpool", "Real Madrid"]
    assert api.sports_soccer_get_games_on_date("2024-02-04-01") is None


def test_nba_dates_teams_and_quotes(api):
    assert len(api.sports_nba_get_games_on_date("2022")["game_id"]) == 3
    assert api.sports_nba_get_games_on_date("2022-10-18", "Lakers") is None  # names are exact
    assert api.sports_nba_get_games_on_date("2022-10-18", "O'Brien's Team") is None  # bound, not pasted into SQL
    assert api.sports_nba_get_play_by_play_data_by_game_ids([]) is None


def test_missing_file_fails_at_start_naming_it(kg_dir, tmp_path):
    broken = tmp_path / "cragkg"
    shutil.copytree(kg_dir, broken)
    (broken / MUSIC_GRAMMY).unlink()
    with pytest.raises(KGDataError, match="music/grammy_df.pickle is missing"):
        create_app(broken)


def test_fixture_loads_within_three_seconds(kg_dir):
    create_app(kg_dir)  # imports and caches warm
    started = time.perf_counter()
    create_app(kg_dir)
    assert time.perf_counter() - started < 3.0


@pytest.mark.slow
def test_one_command_starts_the_server(kg_dir):
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "scripts.serve_mock_api", "--kg-dir", str(kg_dir),
                                "--port", str(port), "--log-level", "warning"], cwd=REPO_ROOT)
    answer, deadline = None, time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            try:
                answer = MockAPIClient(f"http://127.0.0.1:{port}").finance_get_ticker_by_name("Apple Inc. Common Stock")
                break
            except KGClientError:
                time.sleep(0.2)
        assert answer == "AAPL"
    finally:
        process.terminate()
        process.wait(timeout=10)
