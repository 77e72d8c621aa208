"""Which keys of the mock API's records the templates ask, and why the others are not asked.

`tests/training/test_api_templates.py` runs one call of every function on the bundled KG, reads the keys its
records carry, and requires each to be asked by a template (`asked_keys`), taught through a function returning
the same records (`SAME_RECORDS`, whose declarations it shares), or named here with the reason it is not asked
(`UNASKED_KEYS`).
"""
from __future__ import annotations

import re
from typing import Iterable

from training.api_templates.base import Template

# function -> the function whose templates teach the keys of the same record shape
SAME_RECORDS = {"get_movie_by_id": "get_movie", "get_person_by_id": "get_person",
                "get_soccer_last_game": "get_soccer_on_date", "get_soccer_next_game": "get_soccer_on_date",
                "get_nba_last_game": "get_nba_on_date"}

_ECHO = "echoes what the question names (the entity, ticker, team or date asked)"
_BOX = "further box-score columns: same shape and phrasing as the asked ast / reb / tov / fg3m / pts"
_MATCH = "further match-report columns: same shape and phrasing as the asked GF / GA / Captain / Referee"
UNASKED_KEYS: dict[str, dict[str, str]] = {
    "get_movie_by_id": {"id": _ECHO}, "get_person_by_id": {"id": _ECHO},
    "get_stock_price": {"date": _ECHO, "ticker": _ECHO},
    "get_stock_dividend": {"ticker": _ECHO},
    "get_stock_market_cap": {"ticker": _ECHO},
    "get_stock_pe_ratio": {"ticker": _ECHO},
    "get_stock_eps": {"ticker": _ECHO},
    "get_stock_info": {"symbol": _ECHO, "marketCap": "asked through get_stock_market_cap",
                       "forwardPE": "asked through get_stock_pe_ratio", "forwardEps": "asked through get_stock_eps",
                       "open": "asked through get_stock_price(..., date)[\"open\"]"},
    "get_stock_minute_prices": {k: "the one-minute bars answer counts and extremes (asked: len, high); a single "
                                "minute's price is not a CRAG question" for k in
                                ("close", "date", "low", "open", "ticker", "time", "volume")},
    "get_person": {"name": _ECHO, "lifespan": "a derived text (\"1996 to present\") with no single expected form",
                   "id": "ids are asked the other way (get_person_by_id)",
                   "age": "depends on the query time; asked as birthday"},
    "get_song": {"name": _ECHO}, "get_grammy_person": {"name": _ECHO}, "get_grammy_song": {"name": _ECHO},
    "get_grammy_year": {"year": _ECHO}, "get_billboard_rank": {"date": _ECHO, "rank": _ECHO},
    "get_billboard_song": {"date": _ECHO, "song": _ECHO},
    "get_movie": {"id": "ids are asked the other way (get_movie_by_id)",
                  "original_title": "the fixture keeps no original titles apart from titles",
                  "directors": "asked through the crew join (eq(job, \"Director\")), db3's way"},
    "get_movie_person_cast": {"movie_name": "asked through the crew join's movie_name and sort(...)[\"movie_name\"]",
                              "gender": "not a CRAG question", "order": "billing order, not a CRAG question",
                              "release_date": "asked through get_movie", "year": "asked through get_movie"},
    "get_movie_person_crew": {"release_date": "asked through get_movie", "year": "asked through get_movie"},
    "get_movie_person_oscar": {"ceremony": "the ceremony number, not a CRAG question",
                               "name": "asked as a condition's complement (film / category)",
                               "winner": "asked as a condition (eq(winner, true))", "year": "asked as a condition"},
    "get_soccer_on_date": {**{k: _MATCH for k in ("Attendance", "Notes", "Poss", "xG", "xGA", "match_report",
                                                  "round", "score", "time", "day", "league", "season")},
                           "date": _ECHO, "team": _ECHO},
    "get_nba_on_date": {**{k: _BOX for k in ("blk", "dreb", "fg3_pct", "fg3a", "fg_pct", "fga", "fgm", "ft_pct", "fta",
                                             "ftm", "oreb", "pf", "plus_minus", "stl")},
                        "date": _ECHO, "team": _ECHO,
                        "matchup": "the matchup text (\"GSW vs. LAL\"): asked as opponent",
                        "score": "asked as pts and opponent_pts", "season_type": "not a CRAG question"},
    "get_nba_play_by_play": {"*": "asked as the event count; single events are not CRAG questions"},
    "get_open": {"name": _ECHO, "summary": "free text: answered by the web pathway",
                 "population_census_year": "the year of a population figure: asked with the population",
                 "county_seat_of": "the inverse of county: asked as county", "countries": "a continent's countries: "
                 "asked as borders", "association": "a sports team's governing body: rare in CRAG",
                 "incorporated": "a company's or city's incorporation date: asked as founded",
                 "*": "an infobox key only one fixture entity holds (calling_code, government_type, ...)"},
}

_CALL = re.compile(r"(get_\w+)\(")
_KEY = re.compile(r'\["([^"]+)"\]')


def asked_keys(templates: Iterable[Template]) -> dict[str, set[str]]:
    """function -> the keys templates select from its records (on the call's line, or after a `sort` of it)."""
    asked: dict[str, set[str]] = {}
    for template in templates:
        function = None
        for line in template.program.split("\n"):
            call = _CALL.match(line.strip())
            function = call[1] if call else function
            if function:
                asked.setdefault(function, set()).update(k for k in _KEY.findall(line) if k != "len")
    return asked
