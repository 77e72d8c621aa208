"""An in-memory fake of the CRAG mock API for the KG language/executor tests (no HTTP, no server).

`FakeKG` has the official wrapper's method names and returns the official record shapes
(crag-interface.md §4): movie/person dicts with cast/crew/oscar lists, finance histories keyed
"YYYY-MM-DD HH:MM:SS EST", music attribute routes, soccer `DataFrame.to_json` dumps keyed by the stringified
(league, season, team, game) index, NBA `{column: {"0": value}}` tables. Searches imitate BM25 loosely
(any shared word, hard negatives included). It records every call and can be told to fail.
"""
from __future__ import annotations

import re
from datetime import datetime

import pytest

from models.kg.client import KGClientError
from models.types import parse_query_time


def _words(text: str) -> set[str]:
    return set(re.sub(r"[^\w\s]", " ", str(text).lower()).split())


def _search(query: str, names) -> list:
    wanted = _words(query)
    return [n for n in names if wanted & _words(n)][:10]


def _cast(name, pid, character, gender, order):
    return {"name": name, "id": pid, "character": character, "gender": gender, "order": order}


def _award(year, ceremony, category, name, film, winner):
    return {"year_ceremony": year, "ceremony": ceremony, "category": category, "name": name, "film": film,
            "winner": winner}


ARTIST_2012 = _award(2012, 84, "ACTOR IN A LEADING ROLE", "Jean Dujardin", "The Artist", True)
PITT_2012 = _award(2012, 84, "ACTOR IN A LEADING ROLE", "Brad Pitt", "Moneyball", False)
PARASITE_2020 = _award(2020, 92, "BEST PICTURE", "Kwak Sin Ae and Bong Joon Ho", "Parasite", True)
JOKER_2020 = _award(2020, 92, "BEST PICTURE", "Todd Phillips", "Joker", False)
MOVIES = [
    {"id": 1, "title": "Inception", "original_title": "Inception", "release_date": "2010-07-15", "budget": 160000000,
     "revenue": 825532764, "rating": 8.4, "length": 148, "original_language": "en",
     "genres": [{"id": 28, "name": "Action"}, {"id": 878, "name": "Science Fiction"}],
     "cast": [_cast("Leonardo DiCaprio", 10, "Dom Cobb", 2, 0), _cast("Marion Cotillard", 11, "Mal", 1, 1),
              _cast("Tom Hardy", 12, "Eames", 2, 2)],
     "crew": [{"name": "Christopher Nolan", "id": 20, "job": "Director"},
              {"name": "Hans Zimmer", "id": 21, "job": "Original Music Composer"}], "oscar_awards": []},
    {"id": 2, "title": "Inception: The Cobol Job", "release_date": "2010-12-07", "length": 14, "rating": 7.0,
     "genres": [], "cast": [], "crew": [], "oscar_awards": []},
    {"id": 3, "title": "The Revenant", "release_date": "2015-12-25", "length": 156, "rating": 7.5,
     "genres": [{"id": 1, "name": "Western"}], "cast": [_cast("Leonardo DiCaprio", 10, "Hugh Glass", 2, 0),
                                                        _cast("Tom Hardy", 12, "John Fitzgerald", 2, 1)],
     "crew": [{"name": "Alejandro González Iñárritu", "id": 22, "job": "Director"}], "oscar_awards": []},
    {"id": 4, "title": "Parasite", "original_title": "기생충", "release_date": "2019-05-30", "length": 133,
     "rating": 8.5, "genres": [], "cast": [_cast("Song Kang-ho", 30, "Kim Ki-taek", 2, 0)],
     "crew": [{"name": "Bong Joon Ho", "id": 31, "job": "Director"}], "oscar_awards": [PARASITE_2020]},
    {"id": 5, "title": "The Dark Knight", "release_date": "2008-07-16", "length": 152, "rating": 8.5, "genres": [],
     "cast": [_cast("Christian Bale", 40, "Bruce Wayne / Batman", 2, 0), _cast("Heath Ledger", 41, "Joker", 2, 1)],
     "crew": [{"name": "Christopher Nolan", "id": 20, "job": "Director"}], "oscar_awards": []},
]
PERSONS = [
    {"id": 10, "name": "Leonardo DiCaprio", "birthday": "1974-11-11", "acted_movies": [1, 3], "directed_movies": [],
     "oscar_awards": []},
    {"id": 12, "name": "Tom Hardy", "birthday": "1977-09-15", "acted_movies": [1, 3], "directed_movies": [],
     "oscar_awards": []},
    {"id": 20, "name": "Christopher Nolan", "birthday": "1970-07-30", "acted_movies": [],
     "directed_movies": [1, 5], "oscar_awards": []},
    {"id": 99, "name": "Christopher Lee", "birthday": "1922-05-27", "acted_movies": [], "directed_movies": [],
     "oscar_awards": []},
]
YEARS = {"2012": {"movie_list": [], "oscar_awards": [ARTIST_2012, PITT_2012]},
         "2020": {"movie_list": [4], "oscar_awards": [PARASITE_2020, JOKER_2020]}}

COMPANIES = {"Apple Inc. Common Stock": "AAPL", "Apple Hospitality REIT Inc. Common Shares": "APLE",
             "Microsoft Corporation Common Stock": "MSFT"}
DAILY = {
    "AAPL": {"2024-02-22": (183.48, 184.96, 182.46, 184.37), "2024-02-23": (185.01, 185.04, 182.23, 182.52),
             "2024-02-26": (182.24, 182.76, 180.65, 181.16), "2024-02-27": (181.10, 183.92, 179.56, 182.63),
             "2024-02-28": (182.51, 183.12, 180.13, 181.42)},
    "MSFT": {"2024-02-27": (407.99, 409.78, 405.46, 407.48)},
}
DIVIDENDS = {"MSFT": {"2023-08-16": 0.68, "2023-11-15": 0.75, "2024-02-14": 0.75},
             "AAPL": {"2023-11-10": 0.24, "2024-02-09": 0.24}}
MARKET_CAP = {"MSFT": 3.06e12, "AAPL": 2.81e12}

ARTISTS = {"Coldplay": {"country": "GB", "birth_date": "1996", "end": None,
                        "members": ["Chris Martin", "Jonny Buckland", "Guy Berryman", "Will Champion"]},
           "Coldplay Tribute Band": {"country": "US", "birth_date": "2005", "end": None, "members": None},
           "Queen": {"country": "GB", "birth_date": "1970", "end": None, "members": ["Freddie Mercury"]}}
SONGS = {"Yellow": ("Coldplay", "GB", "2000-06-26"), "Clocks": ("Coldplay", "GB", "2003-03-24"),
         "Viva la Vida": ("Coldplay", "GB", "2008-05-25"), "Bohemian Rhapsody": ("Queen", "GB", "1975-10-31"),
         "Lovin On Me": ("Jack Harlow", "US", "2023-11-10")}
WORKS = {"Coldplay": ["Viva la Vida", "Yellow", "Clocks"]}
GRAMMY = [{"year": 2009, "category": "Song Of The Year", "nominee": "Viva La Vida", "artist": "Coldplay",
           "workers": "Guy Berryman, Jon Buckland, Will Champion & Chris Martin"},
          {"year": 2004, "category": "Record Of The Year", "nominee": "Clocks", "artist": "Coldplay", "workers": ""},
          {"year": 2019, "category": "Best New Artist", "nominee": "Dua Lipa", "artist": "", "workers": ""}]
BILLBOARD = {("1", "2024-02-17"): ("Lovin On Me", "Jack Harlow")}

SOCCER = [  # (league, season, team, game) index, then the columns used
    ("ENG-Premier League", "2324", "Arsenal", "2024-02-04 Arsenal-Liverpool",
     {"date": "2024-02-04T00:00:00.000", "venue": "Home", "result": "W", "GF": 3.0, "GA": 1.0, "opponent": "Liverpool",
      "Captain": "Martin Odegaard", "Poss": 47.0}),
    ("ENG-Premier League", "2324", "Arsenal", "2024-02-24 Arsenal-Newcastle Utd",
     {"date": "2024-02-24T00:00:00.000", "venue": "Home", "result": "W", "GF": 4.0, "GA": 1.0,
      "opponent": "Newcastle Utd", "Captain": "Martin Odegaard", "Poss": 61.0}),
    ("ENG-Premier League", "2324", "Arsenal", "2024-03-30 Manchester City-Arsenal",
     {"date": "2024-03-30T00:00:00.000", "venue": "Away", "result": None, "GF": None, "GA": None,
      "opponent": "Manchester City", "Captain": None, "Poss": None}),
    ("ENG-Premier League", "2324", "Liverpool", "2024-02-04 Arsenal-Liverpool",
     {"date": "2024-02-04T00:00:00.000", "venue": "Away", "result": "L", "GF": 1.0, "GA": 3.0, "opponent": "Arsenal",
      "Captain": "Virgil van Dijk", "Poss": 53.0}),
]
NBA = [{"game_id": "0022200002", "game_date": "2022-10-18 00:00:00", "season_type": "Regular Season",
        "team_name_home": "Golden State Warriors", "team_name_away": "Los Angeles Lakers", "wl_home": "W",
        "wl_away": "L", "pts_home": 123.0, "pts_away": 109.0, "reb_home": 55.0, "reb_away": 41.0,
        "matchup_home": "GSW vs. LAL", "matchup_away": "LAL @ GSW"},
       {"game_id": "0022200010", "game_date": "2022-10-21 00:00:00", "season_type": "Regular Season",
        "team_name_home": "Sacramento Kings", "team_name_away": "Golden State Warriors", "wl_home": "L",
        "wl_away": "W", "pts_home": 125.0, "pts_away": 130.0, "reb_home": 40.0, "reb_away": 47.0,
        "matchup_home": "SAC vs. GSW", "matchup_away": "GSW @ SAC"}]
PLAY_BY_PLAY = {"0022200002": [{"game_id": "0022200002", "eventnum": 2, "period": 1, "pctimestring": "12:00",
                                "homedescription": "Jump Ball Looney vs. Davis"},
                               {"game_id": "0022200002", "eventnum": 7, "period": 1, "pctimestring": "11:41",
                                "homedescription": "Curry 26' 3PT Jump Shot"}]}
OPEN = {"Australia": {"summary_text": "Australia is a country. Its capital is Canberra.",
                      "summary_structured": {"capital": "[[Canberra]]", "image_flag": "Flag.svg",
                                             "population_estimate": "27,204,809"}},
        "Australia (continent)": {"summary_text": "A continent.", "summary_structured": {}},
        "SpaceX": {"summary_text": "SpaceX is a company.", "summary_structured": {"founders": "[[Elon Musk]]"}},
        "Elon Musk": {"summary_text": "Elon Musk is a businessman.",
                      "summary_structured": {"birth_place": "[[Pretoria]], South Africa<ref>x</ref>"}},
        "Springfield, Illinois": {"summary_text": "Capital of Illinois.",
                                  "summary_structured": {"state": "Illinois", "population": "114,394"}},
        "Springfield, Missouri": {"summary_text": "A city.",
                                  "summary_structured": {"state": "Missouri", "population": "169,176"}}}


def _frame(records: list[dict]) -> dict:
    """`{column: {"0": value, ...}}`, the NBA routes' shape."""
    columns = dict.fromkeys(k for r in records for k in r)
    return {c: {str(i): r.get(c) for i, r in enumerate(records)} for c in columns} if records else None


class FakeKG:
    """The mock API in memory. `fail[method] = exception` makes that method raise."""

    def __init__(self):
        self.calls: list[tuple] = []
        self.fail: dict[str, Exception] = {}

    def __getattribute__(self, name):
        fail = object.__getattribute__(self, "fail")
        if name in fail:
            raise fail[name]
        return object.__getattribute__(self, name)

    def _log(self, *call):
        self.calls.append(call)

    # open
    def open_search_entity_by_name(self, query):
        self._log("open_search_entity_by_name", query)
        return _search(query, OPEN)

    def open_get_entity(self, entity):
        self._log("open_get_entity", entity)
        record = OPEN.get(entity)
        return None if record is None else {**record, "raw_mediawiki": ""}

    # movie
    def movie_get_movie_info(self, movie_name):
        self._log("movie_get_movie_info", movie_name)
        return [m for m in MOVIES if _words(movie_name) & _words(m["title"])][:10]

    def movie_get_person_info(self, person_name):
        self._log("movie_get_person_info", person_name)
        return [p for p in PERSONS if _words(person_name) & _words(p["name"])][:10]

    def movie_get_year_info(self, year):
        self._log("movie_get_year_info", year)
        if not 1990 <= int(year) <= 2021:
            raise KGClientError("Year must be between 1990 and 2021", "/movie/get_year_info", status=500)
        return YEARS.get(str(year))

    def movie_get_movie_info_by_id(self, movid_id):
        self._log("movie_get_movie_info_by_id", movid_id)
        return next((m for m in MOVIES if m["id"] == movid_id), None)

    def movie_get_person_info_by_id(self, person_id):
        self._log("movie_get_person_info_by_id", person_id)
        return next((p for p in PERSONS if p["id"] == person_id), None)

    # finance
    def finance_get_company_name(self, query):
        self._log("finance_get_company_name", query)
        return _search(query, COMPANIES)

    def finance_get_ticker_by_name(self, query):
        self._log("finance_get_ticker_by_name", query)
        return COMPANIES.get(query)

    def finance_get_price_history(self, ticker_name):
        self._log("finance_get_price_history", ticker_name)
        days = DAILY.get(ticker_name)
        return None if days is None else {
            f"{d} 00:00:00 EST": dict(zip(("Open", "High", "Low", "Close"), bar), Volume=1000000.0)
            for d, bar in days.items()}

    def finance_get_detailed_price_history(self, ticker_name):
        self._log("finance_get_detailed_price_history", ticker_name)
        if ticker_name not in DAILY:
            return None
        minutes = {"2024-02-28 09:30:00 EST": 182.51, "2024-02-28 13:04:00 EST": 181.9,
                   "2024-02-28 15:59:00 EST": 181.42, "2024-02-29 09:30:00 EST": 181.27}
        return {t: {"Open": p, "High": p + 0.1, "Low": p - 0.1, "Close": p, "Volume": 100.0}
                for t, p in minutes.items()}

    def finance_get_dividends_history(self, ticker_name):
        self._log("finance_get_dividends_history", ticker_name)
        dividends = DIVIDENDS.get(ticker_name)
        return None if dividends is None else {f"{d} 00:00:00 EST": v for d, v in dividends.items()}

    def finance_get_market_capitalization(self, ticker_name):
        self._log("finance_get_market_capitalization", ticker_name)
        return MARKET_CAP.get(ticker_name)

    def finance_get_eps(self, ticker_name):
        self._log("finance_get_eps", ticker_name)
        return {"AAPL": 6.58}.get(ticker_name)

    def finance_get_pe_ratio(self, ticker_name):
        self._log("finance_get_pe_ratio", ticker_name)
        return {"AAPL": 27.6}.get(ticker_name)

    def finance_get_info(self, ticker_name):
        self._log("finance_get_info", ticker_name)
        return {"symbol": "AAPL", "longName": "Apple Inc.", "sector": "Technology",
                "marketCap": 2.81e12} if ticker_name == "AAPL" else None

    # music
    def music_search_artist_entity_by_name(self, artist_name):
        self._log("music_search_artist_entity_by_name", artist_name)
        return _search(artist_name, ARTISTS)

    def music_search_song_entity_by_name(self, song_name):
        self._log("music_search_song_entity_by_name", song_name)
        return _search(song_name, SONGS)

    def music_get_billboard_rank_date(self, rank, date=None):
        self._log("music_get_billboard_rank_date", rank, date)
        hit = BILLBOARD.get((str(rank), date))
        return [[hit[0]], [hit[1]]] if hit else [[], []]

    def music_get_billboard_attributes(self, date, attribute, song_name):
        self._log("music_get_billboard_attributes", date, attribute, song_name)
        if (song_name, date) != ("Lovin On Me", "2024-02-17"):
            return None
        return {"rank": "1", "weeks_in_chart": "14", "top_position": "1", "rank_last_week": "2"}.get(attribute, "1")

    def music_grammy_get_best_artist_by_year(self, year):
        self._log("music_grammy_get_best_artist_by_year", year)
        return [g["nominee"] for g in GRAMMY if g["year"] == year and g["category"] == "Best New Artist"]

    def music_grammy_get_all_awarded_artists(self):
        self._log("music_grammy_get_all_awarded_artists")
        return list(dict.fromkeys(g["nominee"] for g in GRAMMY if g["category"] == "Best New Artist"))

    def music_grammy_get_award_count_by_artist(self, artist_name):
        self._log("music_grammy_get_award_count_by_artist", artist_name)
        return sum(artist_name in g[c] for g in GRAMMY for c in ("nominee", "artist", "workers"))

    def music_grammy_get_award_count_by_song(self, song_name):
        self._log("music_grammy_get_award_count_by_song", song_name)
        return sum(g["nominee"] == song_name for g in GRAMMY)

    def music_grammy_get_best_song_by_year(self, year):
        self._log("music_grammy_get_best_song_by_year", year)
        return [g["nominee"] for g in GRAMMY if g["year"] == year and g["category"] == "Song Of The Year"]

    def music_grammy_get_award_date_by_artist(self, artist_name):
        self._log("music_grammy_get_award_date_by_artist", artist_name)
        return list({g["year"] for g in GRAMMY if artist_name in g["artist"]})

    def music_grammy_get_best_album_by_year(self, year):
        self._log("music_grammy_get_best_album_by_year", year)
        return []

    def music_get_artist_birth_place(self, artist_name):
        self._log("music_get_artist_birth_place", artist_name)
        return ARTISTS.get(artist_name, {}).get("country")

    def music_get_artist_birth_date(self, artist_name):
        self._log("music_get_artist_birth_date", artist_name)
        return ARTISTS.get(artist_name, {}).get("birth_date")

    def music_get_members(self, band_name):
        self._log("music_get_members", band_name)
        return ARTISTS.get(band_name, {}).get("members")

    def music_get_lifespan(self, artist_name):
        self._log("music_get_lifespan", artist_name)
        artist = ARTISTS.get(artist_name)
        return [artist["birth_date"], artist["end"]] if artist else [None, None]

    def music_get_song_author(self, song_name):
        self._log("music_get_song_author", song_name)
        return SONGS.get(song_name, (None,) * 3)[0]

    def music_get_song_release_country(self, song_name):
        self._log("music_get_song_release_country", song_name)
        return SONGS.get(song_name, (None,) * 3)[1]

    def music_get_song_release_date(self, song_name):
        self._log("music_get_song_release_date", song_name)
        return SONGS.get(song_name, (None,) * 3)[2]

    def music_get_artist_all_works(self, artist_name):
        self._log("music_get_artist_all_works", artist_name)
        return WORKS.get(artist_name)

    # sports
    def sports_soccer_get_games_on_date(self, date, team_name=None):
        self._log("sports_soccer_get_games_on_date", date, team_name)
        games = [g for g in SOCCER if (team_name is None or g[2] == team_name) and g[4]["date"].startswith(date)]
        if not games:
            return None
        columns = dict.fromkeys(k for g in games for k in g[4])
        return {c: {str(g[:4]): g[4].get(c) for g in games} for c in columns}

    def sports_nba_get_games_on_date(self, date, team_name=None):
        self._log("sports_nba_get_games_on_date", date, team_name)
        return _frame([g for g in NBA if g["game_date"].startswith(date)
                       and team_name in (None, g["team_name_home"], g["team_name_away"])])

    def sports_nba_get_play_by_play_data_by_game_ids(self, game_ids):
        self._log("sports_nba_get_play_by_play_data_by_game_ids", tuple(game_ids))
        return _frame([e for g in game_ids for e in PLAY_BY_PLAY.get(g, [])])


NOW = parse_query_time("02/28/2024, 10:04:54 PT")  # a Wednesday


@pytest.fixture
def fake():
    return FakeKG()


@pytest.fixture
def now() -> datetime:
    return NOW
