"""Question templates over the bundled fixture KG: API-generation examples whose answers are known.

    examples = generate(FixtureKG.load(), seed=0)          # every template x every entity it fits
    splits = split_examples(examples, icl_entities, seed=0) # train / heldout_entities / heldout_templates

Issue 12 asks for training data made from the package's own KG, each target checked by executing it. A
`Template` is a set of paraphrased questions, one program pattern and a `fill` function that reads the KG
*sources* (`data/kg_fixture/`, not the API) and yields, per entity, the slot values, the entities named and the
answer the program must produce. `check_answer` compares that answer with what the executor returns, so a
target that parses but asks the wrong question (or a fixture the API reads differently) is caught.

Design decisions:
- Expected answers come from the sources, independently of the mock API and the executor: agreement of the
  two is the evidence that the target is right. Numbers compare with a small tolerance, texts case-folded,
  several items as a multiset (order is not checked: `[:n]` after a sort is checked by which items remain).
- The answer of a program is what its *final* statements output: a statement whose output a following `*`
  consumes, or that a following `sort` replaced, is an intermediate step (`final_answer`).
- Entities are lower-cased names as a user types them; they are what the held-out entity split separates.
  The split is by entity, not by example: an example goes to `heldout_entities` when it names any held-out
  entity, so no held-out entity ever occurs in `train`. Entities that the in-context pool names are never
  held out (the pool is in every ICL prompt).
- `heldout_templates` are whole templates (all their paraphrases) kept out of training, asked only about
  training entities, so that split measures new question shapes alone.
- Relative dates ("yesterday", "last game") carry their own query time; the expected value is resolved
  from it here, independently of `models.kg.language.timeexpr`.
"""
from __future__ import annotations

import csv
import json
import math
import random
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

from models.paths import REPO_ROOT

FIXTURE_DIR = REPO_ROOT / "data" / "kg_fixture"
SPLITS = ("train", "heldout_entities", "heldout_templates")
_QUERY_TIMES = ("02/26/2024, 13:40:55 PT", "03/01/2024, 17:05:10 PT", "03/06/2024, 08:30:41 PT",
                "03/12/2024, 20:12:03 PT", "03/14/2024, 09:14:02 PT")


# ---------------------------------------------------------------------------------------------- the KG sources
@dataclass
class FixtureKG:
    """The fixture KG's source tables, read as plain Python data."""

    movies: list[dict]
    persons: dict[str, dict]
    oscars: list[dict]
    artists: dict[str, dict]
    songs: dict[str, dict]
    grammys: list[dict]
    billboard: list[dict]
    prices: list[dict]
    dividends: list[dict]
    info: dict[str, dict]
    nba_games: list[dict]
    nba_play_by_play: list[dict]
    soccer: list[dict]
    open_entities: dict[str, dict]
    companies: list[dict]

    @classmethod
    def load(cls, source: str | Path = FIXTURE_DIR) -> "FixtureKG":
        src = Path(source)

        def js(path):
            return json.loads((src / path).read_text(encoding="utf8"))

        def rows(path):
            with open(src / path, encoding="utf8", newline="") as handle:
                return list(csv.DictReader(handle))

        return cls(movies=js("movie/movies.json"), persons=js("movie/persons.json"), oscars=rows("movie/oscars.csv"),
                   artists=js("music/artists.json"), songs=js("music/songs.json"), grammys=rows("music/grammy.csv"),
                   billboard=rows("music/billboard.csv"), prices=rows("finance/prices.csv"),
                   dividends=rows("finance/dividends.csv"), info=js("finance/info.json"),
                   nba_games=js("sports/nba_games.json"), nba_play_by_play=js("sports/nba_play_by_play.json"),
                   soccer=rows("sports/soccer_matches.csv"), open_entities=js("open/entities.json"),
                   companies=rows("finance/companies.csv"))


# ---------------------------------------------------------------------------------------------- templates
@dataclass(frozen=True)
class Filling:
    """One entity's instance of a template."""

    slots: dict[str, Any]
    entities: tuple[str, ...]  # lower-cased names the question mentions
    expected: tuple  # the answer items the program must output
    query_time: str | None = None  # None: one of the default query times


@dataclass(frozen=True)
class Template:
    id: str
    domain: str
    questions: tuple[str, ...]  # paraphrases, `str.format` patterns over the slots
    program: str  # `str.format` pattern over the slots
    fill: Callable[[FixtureKG], Iterable[Filling]] = field(repr=False)


@dataclass(frozen=True)
class TemplateExample:
    id: str
    template: str
    query: str
    query_time: str
    domain: str
    program: str
    entities: tuple[str, ...]
    expected: tuple

    def to_json(self) -> str:
        return json.dumps({"id": self.id, "template": self.template, "query": self.query,
                           "query_time": self.query_time, "domain": self.domain, "program": self.program,
                           "entities": list(self.entities), "expected": list(self.expected)}, ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> "TemplateExample":
        row = json.loads(line)
        return cls(row["id"], row["template"], row["query"], row["query_time"], row["domain"], row["program"],
                   tuple(row["entities"]), tuple(row["expected"]))


def _low(name: str) -> str:
    return name.lower()


def _pt(day: date, clock: str = "10:00:00") -> str:
    return f"{day:%m/%d/%Y}, {clock} PT"


# movie ------------------------------------------------------------------------------------------------------
_MOVIE_ATTRIBUTES = {  # key: (paraphrases, value of a movies.json record)
    "release_date": (("when was {movie} released?", "what is the release date of {movie}?",
                      "on what date did the movie {movie} come out?"), lambda m: m["release_date"]),
    "budget": (("what was the budget of {movie}?", "how much did it cost to make {movie}?"), lambda m: m["budget"]),
    "revenue": (("how much money did {movie} make?", "what was the box office revenue of {movie}?"),
                lambda m: m["revenue"]),
    "rating": (("what is the rating of the movie {movie}?", "how well is {movie} rated?"), lambda m: m["rating"]),
    "length": (("how long is the movie {movie}?", "what is the running time of {movie} in minutes?"),
               lambda m: m["length"]),
    "original_language": (("what is the original language of {movie}?", "in which language was {movie} made?"),
                          lambda m: m["original_language"]),
}


def _titled(kg: FixtureKG) -> list[dict]:
    """The movies a title alone names: films sharing a title (the two "Dune"s) are left out, since a question
    naming only the title has no single expected answer."""
    counts = Counter(_low(movie["title"]) for movie in kg.movies)
    return [movie for movie in kg.movies if counts[_low(movie["title"])] == 1]


def _movie_attribute(key: str) -> Template:
    questions, value = _MOVIE_ATTRIBUTES[key]

    def fill(kg: FixtureKG):
        for movie in _titled(kg):
            if value(movie) not in (None, 0, ""):
                yield Filling({"movie": _low(movie["title"])}, (_low(movie["title"]),), (value(movie),))
    return Template(f"movie_{key}", "movie", questions, 'get_movie("{movie}")["' + key + '"]', fill)


def _movie_year(kg: FixtureKG):
    for movie in _titled(kg):
        yield Filling({"movie": _low(movie["title"])}, (_low(movie["title"]),), (int(movie["release_date"][:4]),))


def _movie_genres(kg: FixtureKG):
    for movie in _titled(kg):
        if movie["genres"]:
            yield Filling({"movie": _low(movie["title"])}, (_low(movie["title"]),), tuple(movie["genres"]))


def _person_birthday(kg: FixtureKG):
    for name, person in kg.persons.items():
        if person.get("birthday"):
            yield Filling({"person": _low(name)}, (_low(name),), (person["birthday"],))


def _directors(movie: dict) -> list[str]:
    return [name for name, job in movie["crew"] if job == "Director"]


def _movie_director(kg: FixtureKG):
    for movie in _titled(kg):
        if _directors(movie):
            yield Filling({"movie": _low(movie["title"])}, (_low(movie["title"]),), tuple(_directors(movie)))


def _movie_composer(kg: FixtureKG):
    for movie in _titled(kg):
        composers = [name for name, job in movie["crew"] if job == "Original Music Composer"]
        if composers:
            yield Filling({"movie": _low(movie["title"])}, (_low(movie["title"]),), tuple(composers))


def _director_birthday(kg: FixtureKG):
    for movie in _titled(kg):
        directors = _directors(movie)
        if len(directors) == 1 and kg.persons.get(directors[0], {}).get("birthday"):
            yield Filling({"movie": _low(movie["title"])}, (_low(movie["title"]),),
                          (kg.persons[directors[0]]["birthday"],))


def _character_actor(kg: FixtureKG):
    for movie in _titled(kg):
        characters = [_low(c) for _, c, _ in movie["cast"]]
        for actor, character, _ in movie["cast"]:  # names match by containment: "brand" ~ "professor brand"
            low = _low(character)
            if character and sum(low in other or other in low for other in characters) == 1:
                yield Filling({"movie": _low(movie["title"]), "character": _low(character)},
                              (_low(movie["title"]),), (actor,))


def _cast_size(kg: FixtureKG):
    for movie in _titled(kg):
        if movie["cast"]:
            yield Filling({"movie": _low(movie["title"])}, (_low(movie["title"]),), (len(movie["cast"]),))


def _acted_in(kg: FixtureKG) -> dict[str, list[dict]]:
    films: dict[str, list[dict]] = {}
    for movie in _titled(kg):
        for actor in dict.fromkeys(a for a, _, _ in movie["cast"]):
            films.setdefault(actor, []).append(movie)
    return films


def _actor_movie_count(kg: FixtureKG):
    for actor, films in _acted_in(kg).items():
        yield Filling({"person": _low(actor)}, (_low(actor),), (len(films),))


def _actor_latest_movie(kg: FixtureKG):
    for actor, films in _acted_in(kg).items():
        dates = sorted((m["release_date"] for m in films), reverse=True)
        if len(films) >= 2 and dates[0] != dates[1]:
            latest = max(films, key=lambda m: m["release_date"])
            yield Filling({"person": _low(actor)}, (_low(actor),), (latest["title"],))


def _franchise_titles(kg: FixtureKG):
    for prefix in ("the matrix", "inception", "fight club", "parasite"):
        titles = tuple(m["title"] for m in kg.movies if _low(m["title"]).startswith(prefix))
        if len(titles) >= 2:
            yield Filling({"movie": prefix}, (prefix,), titles)


def _best_picture(kg: FixtureKG):
    for row in kg.oscars:
        if row["category"].lower() == "best picture" and row["winner"] == "True":
            yield Filling({"year": int(row["year_ceremony"])}, (f"oscars {row['year_ceremony']}",), (row["film"],))


def _movie_by_id(kg: FixtureKG):
    for movie in kg.movies[::2]:  # half the movies: id questions are rare
        yield Filling({"id": movie["id"]}, (f"movie id {movie['id']}",), (movie["title"],))


def _person_by_id(kg: FixtureKG):
    for name, person in list(kg.persons.items())[::6]:  # a sixth of the 71 people: id questions are rare
        yield Filling({"id": person["id"]}, (f"person id {person['id']}",), (name,))


# music ------------------------------------------------------------------------------------------------------
def _real_artists(kg: FixtureKG):
    return {name: a for name, a in kg.artists.items()}


def _artist_field(field_name: str, solo: bool | None = None):
    def fill(kg: FixtureKG):
        for name, artist in _real_artists(kg).items():
            if solo is not None and (artist.get("members") is None) != solo:
                continue
            if artist.get(field_name):
                yield Filling({"artist": _low(name)}, (_low(name),), (artist[field_name],))
    return fill


def _band_size(kg: FixtureKG):
    for name, artist in _real_artists(kg).items():
        if artist.get("members"):
            yield Filling({"artist": _low(name)}, (_low(name),), (len(artist["members"]),))


def _band_members(kg: FixtureKG):
    for name, artist in _real_artists(kg).items():
        if artist.get("members"):
            yield Filling({"artist": _low(name)}, (_low(name),), tuple(artist["members"]))


def _song_field(field_name: str):
    def fill(kg: FixtureKG):
        names = Counter(_low(n) for n in kg.songs)
        for name, song in kg.songs.items():
            if song.get(field_name) and names[_low(name)] == 1:
                yield Filling({"song": _low(name)}, (_low(name),), (song[field_name],))
    return fill


def _first_song(kg: FixtureKG):
    for name, artist in _real_artists(kg).items():
        dated = [(kg.songs[w]["date"], w) for w in artist.get("works") or () if kg.songs.get(w, {}).get("date")]
        if len(dated) >= 2 and len(dated) == len(artist["works"]) and len({d for d, _ in dated}) == len(dated):
            yield Filling({"artist": _low(name)}, (_low(name),), (min(dated)[1],))


def _billboard_rank(kg: FixtureKG):
    for row in kg.billboard:
        yield Filling({"rank": int(row["rank"]), "date": row["date"]}, (_low(row["song"]),), (row["song"],))


def _billboard_artist(kg: FixtureKG):
    for row in kg.billboard:
        yield Filling({"rank": int(row["rank"]), "date": row["date"]}, (_low(row["artist"]),), (row["artist"],))


def _grammy_song_count(kg: FixtureKG):
    won = Counter(row["nominee"] for row in kg.grammys)
    for name in kg.songs:
        if won[name]:
            yield Filling({"song": _low(name)}, (_low(name),), (won[name],))


def _grammy_year(category: str):
    def fill(kg: FixtureKG):
        for row in kg.grammys:  # the API's by-year route answers null after 2019 (data/kg_fixture/README.md)
            if row["category"] == category and int(row["year"]) <= 2019:
                yield Filling({"year": int(row["year"])}, (f"grammys {row['year']}",), (row["nominee"],))
    return fill


_GRAMMY_TEXT_COLUMNS = ("nominee", "artist", "workers")  # the columns the API's by-artist routes search


def _grammy_artists(kg: FixtureKG) -> Iterator[tuple[str, list[dict]]]:
    """(artist, the Grammy rows naming them): the API counts every text column that contains the name, so an
    artist whose name is inside another artist's name (Queen, Queen Latifah) is not asked."""
    for name in kg.artists:
        if any(name != other and name in other for other in kg.artists):
            continue
        rows = [row for row in kg.grammys if any(name in row[column] for column in _GRAMMY_TEXT_COLUMNS)]
        if rows:
            yield name, rows


def _grammy_person_years(kg: FixtureKG):
    for name, rows in _grammy_artists(kg):
        yield Filling({"artist": _low(name)}, (_low(name),), tuple(sorted({int(row["year"]) for row in rows})))


def _grammy_person_count(kg: FixtureKG):
    for name, rows in _grammy_artists(kg):  # the official count: one per column naming the artist
        count = sum(name in row[column] for row in rows for column in _GRAMMY_TEXT_COLUMNS)
        yield Filling({"artist": _low(name)}, (_low(name),), (count,))


def _best_new_artist_names(kg: FixtureKG) -> tuple[str, ...]:
    return tuple(dict.fromkeys(row["nominee"] for row in kg.grammys if row["category"] == "Best New Artist"))


def _best_new_artists(kg: FixtureKG):
    yield Filling({}, ("grammy best new artists",), _best_new_artist_names(kg))


def _best_new_artist_count(kg: FixtureKG):
    yield Filling({}, ("grammy best new artists",), (len(_best_new_artist_names(kg)),))


def _billboard_song_rank(kg: FixtureKG):
    for row in kg.billboard:
        yield Filling({"song": _low(row["song"]), "date": row["date"]}, (_low(row["song"]),), (int(row["rank"]),))


# finance ----------------------------------------------------------------------------------------------------
_PRICE_FIELDS = {"open": ("opening price", "open"), "close": ("closing price", "close"),
                 "high": ("highest price", "high"), "low": ("lowest price", "low")}
_PRICE_DAYS = ("2024-01-10", "2024-02-07", "2024-02-26", "2024-02-28", "2024-03-04", "2024-03-13")


def _bars(kg: FixtureKG) -> dict[tuple[str, str], dict]:
    return {(row["ticker"], row["date"]): row for row in kg.prices}


def _price_on_day(column: str):
    def fill(kg: FixtureKG):
        bars = _bars(kg)
        for ticker in sorted({t for t, _ in bars}):
            for day in _PRICE_DAYS:
                if (ticker, day) in bars:
                    yield Filling({"ticker": _low(ticker), "date": day, "what": _PRICE_FIELDS[column][0]},
                                  (_low(ticker),), (float(bars[ticker, day][column]),))
    return fill


def _price_yesterday(kg: FixtureKG):
    bars = _bars(kg)
    for ticker in sorted({t for t, _ in bars}):
        for day in ("2024-02-07", "2024-02-28", "2024-03-06", "2024-03-13"):
            asked = date.fromisoformat(day)
            yesterday = (asked - timedelta(days=1)).isoformat()
            if (ticker, yesterday) in bars:
                yield Filling({"ticker": _low(ticker)}, (_low(ticker),), (float(bars[ticker, yesterday]["close"]),),
                              _pt(asked))


def _month_bars(kg: FixtureKG, ticker: str, month: str) -> list[dict]:
    return [row for row in kg.prices if row["ticker"] == ticker and row["date"].startswith(month)]


_MONTHS = {"2024-01": ("january 2024", "2024-01-01", "2024-01-31"),
           "2024-02": ("february 2024", "2024-02-01", "2024-02-29")}


def _month_average_close(kg: FixtureKG):
    for ticker in sorted({row["ticker"] for row in kg.prices}):
        for month, (words, start, end) in _MONTHS.items():
            closes = [float(r["close"]) for r in _month_bars(kg, ticker, month)]
            if closes:
                yield Filling({"ticker": _low(ticker), "month": words, "start": start, "end": end},
                              (_low(ticker),), (sum(closes) / len(closes),))


def _month_highest_close(kg: FixtureKG):
    for ticker in sorted({row["ticker"] for row in kg.prices}):
        for month, (words, start, end) in _MONTHS.items():
            closes = [float(r["close"]) for r in _month_bars(kg, ticker, month)]
            if closes:
                yield Filling({"ticker": _low(ticker), "month": words, "start": start, "end": end},
                              (_low(ticker),), (max(closes),))


def _info_field(key: str):
    def fill(kg: FixtureKG):
        for ticker, info in kg.info.items():
            if info.get(key) is not None:
                yield Filling({"ticker": _low(ticker)}, (_low(ticker),), (info[key],))
    return fill


def _last_dividend_date(kg: FixtureKG):
    for ticker in sorted({row["ticker"] for row in kg.dividends}):
        paid = [row["date"] for row in kg.dividends if row["ticker"] == ticker]
        if paid:  # asked after the last dividend of the fixture: the API lists future ones too
            yield Filling({"ticker": _low(ticker)}, (_low(ticker),), (max(paid),), _pt(date(2024, 3, 15)))


def _dividends_in_2023(kg: FixtureKG):
    for ticker in sorted({row["ticker"] for row in kg.dividends}):
        count = sum(row["ticker"] == ticker and row["date"].startswith("2023") for row in kg.dividends)
        if count:
            yield Filling({"ticker": _low(ticker)}, (_low(ticker),), (count,))


_LISTING_SUFFIX = re.compile(r"\s+(common stock|common shares|class [a-z]\b|capital stock).*$", re.IGNORECASE)
_LEGAL_SUFFIX = re.compile(r",?\s+(inc\.?|corporation|incorporated|company \(the\)|& co\.)$", re.IGNORECASE)


def _short_company_name(listed: str) -> str:
    """The name a user types: "Apple Inc. Common Stock" -> "apple", "Coca-Cola Company (The)" -> "coca-cola"."""
    return _LEGAL_SUFFIX.sub("", _LISTING_SUFFIX.sub("", listed)).strip().lower()


def _companies(kg: FixtureKG) -> Iterator[tuple[str, dict]]:
    """(short name, listing) for listings whose short name is their own (not both Alphabet share classes)."""
    short = Counter(_short_company_name(row["Name"]) for row in kg.companies)
    for row in kg.companies:
        if short[_short_company_name(row["Name"])] == 1:
            yield _short_company_name(row["Name"]), row


def _company_ticker(kg: FixtureKG):
    for name, row in _companies(kg):
        yield Filling({"company": name}, (name,), (row["Symbol"],))


def _company_listed_name(kg: FixtureKG):
    for name, row in _companies(kg):
        yield Filling({"company": name}, (name,), (row["Name"],))


_MINUTE_BARS_PER_DAY = 390  # 09:30-15:59 Eastern, one bar a minute
_MINUTES_ASKED_ON = date(2024, 3, 1)  # after the five sessions of one-minute history (to 2024-02-28)


def _minute_days(kg: FixtureKG) -> list[str]:
    return sorted({row["date"] for row in kg.prices if row["date"] <= "2024-02-28"})[-5:]


def _minute_bar_count(kg: FixtureKG):
    bars = _bars(kg)
    for ticker in sorted({t for t, _ in bars}):
        for day in _minute_days(kg)[::2]:
            yield Filling({"ticker": _low(ticker), "date": day}, (_low(ticker),), (_MINUTE_BARS_PER_DAY,),
                          _pt(_MINUTES_ASKED_ON))


def _minute_high(kg: FixtureKG):
    bars = _bars(kg)  # the one-minute path passes through the day's high (data/kg_fixture/README.md)
    for ticker in sorted({t for t, _ in bars}):
        for day in _minute_days(kg)[1::2]:
            yield Filling({"ticker": _low(ticker), "date": day}, (_low(ticker),), (float(bars[ticker, day]["high"]),),
                          _pt(_MINUTES_ASKED_ON))


# sports -----------------------------------------------------------------------------------------------------
def _nba_points(stats: dict) -> int:
    return 2 * stats["fgm"] + stats["fg3m"] + stats["ftm"]


def _nba_sides(kg: FixtureKG) -> Iterator[tuple[str, str, dict, dict]]:
    """(date, team, own stats, opponent stats) for both teams of every game."""
    for game in kg.nba_games:
        for own, other in (("home", "away"), ("away", "home")):
            yield game["game_date"], game[own]["team"], game[own], game[other]


def _nba_unique_days(kg: FixtureKG):
    seen = Counter((day, team) for day, team, _, _ in _nba_sides(kg))
    return [(day, team, own, other) for day, team, own, other in _nba_sides(kg) if seen[day, team] == 1]


def _nba_points_on_day(kg: FixtureKG):
    for day, team, own, _ in _nba_unique_days(kg):
        yield Filling({"team": _low(team), "date": day}, (_low(team),), (_nba_points(own),))


def _nba_opponent_on_day(kg: FixtureKG):
    for day, team, _, other in _nba_unique_days(kg):
        yield Filling({"team": _low(team), "date": day}, (_low(team),), (other["team"],))


def _nba_event_count(kg: FixtureKG):
    events = Counter(event["game_id"] for event in kg.nba_play_by_play)
    unique = {(day, team) for day, team, _, _ in _nba_unique_days(kg)}
    for game in kg.nba_games:
        for side in ("home", "away"):
            if events[game["game_id"]] and (game["game_date"], game[side]["team"]) in unique:
                yield Filling({"team": _low(game[side]["team"]), "date": game["game_date"]},
                              (_low(game[side]["team"]),), (events[game["game_id"]],))


def _soccer_sides(kg: FixtureKG) -> Iterator[tuple[str, str, str, int, int]]:
    """(date, team, opponent, goals for, goals against) of both teams of every match played."""
    for row in kg.soccer:
        if not row["home_goals"]:
            continue  # a fixture not yet played
        home, away, hg, ag = row["home"], row["away"], int(row["home_goals"]), int(row["away_goals"])
        yield row["date"], home, away, hg, ag
        yield row["date"], away, home, ag, hg


def _soccer_goals_on_day(kg: FixtureKG):
    for day, team, _, goals, _ in _soccer_sides(kg):
        yield Filling({"team": _low(team), "date": day}, (_low(team),), (goals,))


def _soccer_result_on_day(kg: FixtureKG):
    for day, team, _, scored, conceded in _soccer_sides(kg):
        result = "win" if scored > conceded else "loss" if scored < conceded else "draw"
        yield Filling({"team": _low(team), "date": day}, (_low(team),), (result,))


def _soccer_last_opponent(kg: FixtureKG):
    for team in sorted({team for _, team, _, _, _ in _soccer_sides(kg)}):
        for asked in (date(2024, 2, 20), date(2024, 3, 12)):
            played = sorted((day, opponent) for day, t, opponent, _, _ in _soccer_sides(kg)
                            if t == team and day < asked.isoformat())
            if played and (len(played) < 2 or played[-1][0] != played[-2][0]):
                yield Filling({"team": _low(team)}, (_low(team),), (played[-1][1],), _pt(asked))


def _soccer_next_opponent(kg: FixtureKG):
    upcoming = [(row["date"], team, opponent) for row in kg.soccer if not row["home_goals"]
                for team, opponent in ((row["home"], row["away"]), (row["away"], row["home"]))]
    for team in sorted({team for _, team, _ in upcoming}):
        for asked in (date(2024, 3, 12), date(2024, 4, 5)):
            ahead = sorted((day, opponent) for day, t, opponent in upcoming if t == team and day >= asked.isoformat())
            if ahead:
                yield Filling({"team": _low(team)}, (_low(team),), (ahead[0][1],), _pt(asked))


def _nba_last_opponent(kg: FixtureKG):
    for team in sorted({team for _, team, _, _ in _nba_sides(kg)}):
        for asked in (date(2023, 1, 1), date(2024, 3, 10)):
            played = sorted((day, other["team"]) for day, t, _, other in _nba_sides(kg)
                            if t == team and day < asked.isoformat())
            # a "last game" over a year old is not asked: the KG pathway looks back one calendar year
            recent = played and date.fromisoformat(played[-1][0]).year >= asked.year - 1
            if recent and (len(played) < 2 or played[-1][0] != played[-2][0]):
                yield Filling({"team": _low(team)}, (_low(team),), (played[-1][1],), _pt(asked))


# open -------------------------------------------------------------------------------------------------------
_OPEN_KEYS = {  # infobox key: paraphrases over {entity}
    "capital": ("what is the capital of {entity}?", "which city is the capital of {entity}?"),
    "population": ("what is the population of {entity}?", "how many people live in {entity}?"),
    "height": ("how tall is the {entity}?", "what is the height of the {entity}?"),
    "born": ("when was {entity} born?", "what is the birth date of {entity}?"),
    "birth_place": ("where was {entity} born?", "what is the birthplace of {entity}?"),
    "founded": ("when was {entity} founded?", "in what year was {entity} founded?"),
    "currency": ("what currency is used in {entity}?", "what is the currency of {entity}?"),
    "borders": ("which countries border {entity}?", "what are the neighbouring countries of {entity}?"),
    "largest_city": ("what is the largest city of {entity}?", "which is the biggest city in {entity}?"),
    "location": ("where is the {entity} located?", "what is the location of the {entity}?"),
}


def _open_key(key: str):
    def fill(kg: FixtureKG):
        for name, entity in kg.open_entities.items():
            if entity["infobox"].get(key):
                yield Filling({"entity": _low(name)}, (_low(name),), (entity["infobox"][key],))
    return fill


def _open_founder_birthplace(kg: FixtureKG):
    for name, entity in kg.open_entities.items():
        founder = entity["infobox"].get("founder")
        born = kg.open_entities.get(founder or "", {}).get("infobox", {}).get("birth_place")
        if born:
            yield Filling({"entity": _low(name)}, (_low(name),), (born,))


def _open_capital_population(kg: FixtureKG):
    for name, entity in kg.open_entities.items():
        capital = entity["infobox"].get("capital")
        population = kg.open_entities.get(capital or "", {}).get("infobox", {}).get("population")
        if population:
            yield Filling({"entity": _low(name)}, (_low(name),), (population,))


# the catalogue ----------------------------------------------------------------------------------------------
def templates() -> list[Template]:
    """Every template, in a fixed order (ids are unique)."""
    out = [_movie_attribute(key) for key in _MOVIE_ATTRIBUTES]
    out += [
        Template("movie_year", "movie", ("what year did {movie} come out?", "in which year was {movie} released?"),
                 'get_movie("{movie}")["year"]', _movie_year),
        Template("movie_genres", "movie", ("what genres is {movie}?", "what kind of movie is {movie}?"),
                 'get_movie("{movie}")["genres"]', _movie_genres),
        Template("person_birthday", "movie", ("when was {person} born?", "what is the birthday of {person}?"),
                 'get_person("{person}")["birthday"]', _person_birthday),
        Template("movie_director", "movie", ("who directed {movie}?", "who is the director of the movie {movie}?"),
                 'get_movie_person_crew("{movie}", None, eq(job, "Director"))["name"]', _movie_director),
        Template("movie_composer", "movie", ("who composed the music for {movie}?",
                                             "who wrote the score of {movie}?"),
                 'get_movie_person_crew("{movie}", None, eq(job, "Original Music Composer"))["name"]',
                 _movie_composer),
        Template("director_birthday", "movie", ("when was the director of {movie} born?",
                                                "what is the birthday of the person who directed {movie}?"),
                 'get_movie_person_crew("{movie}", None, eq(job, "Director"))["name"]\nget_person(*)["birthday"]',
                 _director_birthday),
        Template("character_actor", "movie", ("who played {character} in {movie}?",
                                              "which actor played the role of {character} in {movie}?"),
                 'get_movie_person_cast("{movie}", None, eq(character, "{character}"))["name"]', _character_actor),
        Template("cast_size", "movie", ("how many actors are in the cast of {movie}?",
                                        "how big is the cast of {movie}?"),
                 'get_movie_person_cast("{movie}", None)["len"]', _cast_size),
        Template("actor_movie_count", "movie", ("how many movies has {person} acted in?",
                                                "in how many films did {person} appear?"),
                 'get_movie_person_cast(None, "{person}")["len"]', _actor_movie_count),
        Template("actor_latest_movie", "movie", ("what is the most recent movie starring {person}?",
                                                 "which film with {person} came out last?"),
                 'get_movie_person_cast(None, "{person}")\nsort(None, -release_date)["movie_name"][:1]',
                 _actor_latest_movie),
        Template("franchise_titles", "movie", ("list all the movies called {movie}.",
                                               "which movies are in the {movie} franchise?"),
                 'ALL get_movie("{movie}")["title"]', _franchise_titles),
        Template("movie_by_id", "movie", ("which movie has the id {id}?", "what is the title of the movie with id {id}?"),
                 'get_movie_by_id({id})["title"]', _movie_by_id),
        Template("person_by_id", "movie", ("who is the person with id {id}?",
                                           "what is the name of the person whose id is {id}?"),
                 'get_person_by_id({id})["name"]', _person_by_id),
        Template("best_picture", "movie", ("which movie won best picture at the {year} oscars?",
                                           "what won the oscar for best picture in {year}?"),
                 'get_movie_person_oscar(None, None, [eq(year, {year}), eq(category, "best picture"), '
                 'eq(winner, true)])["film"]', _best_picture),
        # music
        Template("artist_birth_date", "music", ("when was {artist} born?", "what is the birth date of {artist}?"),
                 'get_person("{artist}")["birth_date"]', _artist_field("birth_date", solo=True)),
        Template("band_formed", "music", ("when was the band {artist} formed?", "in what year did {artist} start?"),
                 'get_person("{artist}")["birth_date"]', _artist_field("birth_date", solo=False)),
        Template("artist_country", "music", ("which country is {artist} from?", "where does {artist} come from?"),
                 'get_person("{artist}")["birth_place"]', _artist_field("country")),
        Template("band_size", "music", ("how many members does {artist} have?", "how many people are in {artist}?"),
                 'get_person("{artist}")["members"]["len"]', _band_size),
        Template("band_members", "music", ("who are the members of {artist}?", "who is in the band {artist}?"),
                 'get_person("{artist}")["members"]', _band_members),
        Template("song_author", "music", ("who wrote the song {song}?", "who is the author of {song}?"),
                 'get_song("{song}")["author"]', _song_field("author")),
        Template("song_release_date", "music", ("when was the song {song} released?",
                                                "what is the release date of {song}?"),
                 'get_song("{song}")["release_date"]', _song_field("date")),
        Template("song_country", "music", ("in which country was {song} first released?",
                                           "where was the song {song} released?"),
                 'get_song("{song}")["release_country"]', _song_field("country")),
        Template("artist_first_song", "music", ("what is the earliest song by {artist}?",
                                                "which {artist} song came out first?"),
                 'get_person("{artist}")["works"]\nget_song(*)\nsort(None, release_date)["name"][:1]', _first_song),
        Template("billboard_rank_song", "music", ("which song was number {rank} on the billboard hot 100 on {date}?",
                                                  "what was at rank {rank} of the hot 100 on {date}?"),
                 'get_billboard_rank({rank}, "{date}")["song"]', _billboard_rank),
        Template("billboard_rank_artist", "music", ("who was the artist at number {rank} on the billboard hot 100 "
                                                    "on {date}?", "which artist had the number {rank} song on the "
                                                    "hot 100 on {date}?"),
                 'get_billboard_rank({rank}, "{date}")["artist"]', _billboard_artist),
        Template("grammy_song_count", "music", ("how many grammys did the song {song} win?",
                                                "how many grammy awards has {song} won?"),
                 'get_grammy_song("{song}")["grammy_award_count"]', _grammy_song_count),
        Template("grammy_album_of_the_year", "music", ("which album won album of the year at the {year} grammys?",
                                                       "what was the grammy album of the year in {year}?"),
                 'get_grammy_year({year})["album_of_the_year"]', _grammy_year("Album Of The Year")),
        Template("grammy_best_new_artist", "music", ("who won best new artist at the {year} grammys?",
                                                     "who was the grammy best new artist in {year}?"),
                 'get_grammy_year({year})["best_new_artist"]', _grammy_year("Best New Artist")),
        Template("grammy_person_years", "music", ("in which years did {artist} win a grammy?",
                                                  "what years did {artist} get grammy awards?"),
                 'get_grammy_person("{artist}")["grammy_award_years"]', _grammy_person_years),
        Template("grammy_person_count", "music", ("how many grammy awards has the artist {artist} won?",
                                                  "how many grammys does the musician {artist} have?"),
                 'get_grammy_person("{artist}")["grammy_award_count"]', _grammy_person_count),
        Template("best_new_artists", "music", ("which artists have won the grammy for best new artist?",
                                               "list every winner of the best new artist grammy.",
                                               "who are all the best new artist grammy winners?"),
                 'get_grammy_best_new_artists()["name"]', _best_new_artists),
        Template("best_new_artist_count", "music", ("how many artists have won the grammy for best new artist?",
                                                    "how many best new artist grammys have been given?"),
                 'get_grammy_best_new_artists()["len"]', _best_new_artist_count),
        Template("billboard_song_rank", "music", ("what rank was {song} on the billboard hot 100 on {date}?",
                                                  "where did {song} chart on the hot 100 of {date}?"),
                 'get_billboard_song("{song}", "{date}")["rank"]', _billboard_song_rank),
        # finance
        *[Template(f"price_{column}", "finance", ("what was the {what} of {ticker} on {date}?",
                                                  "what was {ticker}'s {what} on {date}?"),
                   'get_stock_price("{ticker}", "{date}")["' + column + '"]', _price_on_day(column))
          for column in _PRICE_FIELDS],
        Template("close_yesterday", "finance", ("what was the closing price of {ticker} yesterday?",
                                                "how did {ticker} close yesterday?"),
                 'get_stock_price("{ticker}", "yesterday")["close"]', _price_yesterday),
        Template("month_average_close", "finance", ("what was the average closing price of {ticker} in {month}?",
                                                    "on average, where did {ticker} close in {month}?"),
                 'AVG get_stock_price("{ticker}", "{start}", "{end}")["close"]', _month_average_close),
        Template("month_highest_close", "finance", ("what was the highest closing price of {ticker} in {month}?",
                                                    "what was {ticker}'s best close in {month}?"),
                 'get_stock_price("{ticker}", "{start}", "{end}")\nsort(None, -close)["close"][:1]',
                 _month_highest_close),
        Template("market_cap", "finance", ("what is the market cap of {ticker}?",
                                           "how much is {ticker} worth on the stock market?"),
                 'get_stock_market_cap("{ticker}")["market_cap"]', _info_field("marketCap")),
        Template("pe_ratio", "finance", ("what is the p/e ratio of {ticker}?",
                                         "what is {ticker}'s price to earnings ratio?"),
                 'get_stock_pe_ratio("{ticker}")["pe_ratio"]', _info_field("forwardPE")),
        Template("eps", "finance", ("what are the earnings per share of {ticker}?", "what is the eps of {ticker}?"),
                 'get_stock_eps("{ticker}")["eps"]', _info_field("forwardEps")),
        Template("sector", "finance", ("what sector is {ticker} in?", "which sector does {ticker} belong to?"),
                 'get_stock_info("{ticker}")["sector"]', _info_field("sector")),
        Template("industry", "finance", ("what industry is {ticker} in?", "what is the industry of {ticker}?"),
                 'get_stock_info("{ticker}")["industry"]', _info_field("industry")),
        Template("company_ticker", "finance", ("what is the ticker symbol of {company}?",
                                               "under which ticker does {company} trade?"),
                 'get_company_names("{company}")["ticker"][:1]', _company_ticker),
        Template("company_listed_name", "finance", ("what is the full listed name of {company}?",
                                                    "what is {company}'s official company name on the exchange?"),
                 'get_company_names("{company}")["name"][:1]', _company_listed_name),
        Template("minute_bar_count", "finance", ("how many one-minute price bars does {ticker} have for {date}?",
                                                 "for how many minutes was {ticker} traded on {date}?"),
                 'get_stock_minute_prices("{ticker}", "{date}")["len"]', _minute_bar_count),
        Template("minute_high", "finance", ("what was the highest one-minute price of {ticker} on {date}?",
                                            "looking at minute-by-minute prices, how high did {ticker} go on {date}?"),
                 'get_stock_minute_prices("{ticker}", "{date}")\nsort(None, -high)["high"][:1]', _minute_high),
        Template("last_dividend_date", "finance", ("when did {ticker} last pay a dividend?",
                                                   "what was the date of {ticker}'s most recent dividend?"),
                 'get_stock_dividend("{ticker}")\nsort(None, -date)["date"][:1]', _last_dividend_date),
        Template("dividends_2023", "finance", ("how many dividends did {ticker} pay in 2023?",
                                               "how many times did {ticker} pay a dividend in 2023?"),
                 'get_stock_dividend("{ticker}", [ge(date, "2023-01-01"), le(date, "2023-12-31")])["len"]',
                 _dividends_in_2023),
        # sports
        Template("nba_points", "sports", ("how many points did the {team} score on {date}?",
                                          "what did the {team} score in their game on {date}?"),
                 'get_nba_on_date("{team}", "{date}")["pts"]', _nba_points_on_day),
        Template("nba_opponent", "sports", ("who did the {team} play on {date}?",
                                            "which team did the {team} face on {date}?"),
                 'get_nba_on_date("{team}", "{date}")["opponent"]', _nba_opponent_on_day),
        Template("soccer_goals", "sports", ("how many goals did {team} score on {date}?",
                                            "how many times did {team} score in their match on {date}?"),
                 'get_soccer_on_date("{team}", "{date}")["GF"]', _soccer_goals_on_day),
        Template("soccer_result", "sports", ("did {team} win their game on {date}?",
                                             "what was the result of {team}'s match on {date}?"),
                 'get_soccer_on_date("{team}", "{date}")["result"]', _soccer_result_on_day),
        Template("soccer_last_opponent", "sports", ("who did {team} play in their last game?",
                                                    "which team did {team} face most recently?"),
                 'get_soccer_last_game("{team}")["opponent"]', _soccer_last_opponent),
        Template("soccer_next_opponent", "sports", ("who will {team} play in their next game?",
                                                    "which team do {team} face next?"),
                 'get_soccer_next_game("{team}")["opponent"]', _soccer_next_opponent),
        Template("nba_play_by_play_events", "sports", ("how many play-by-play events were recorded in the {team} game "
                                                       "on {date}?", "how many events does the play-by-play of the "
                                                       "{team} game on {date} list?"),
                 'get_nba_on_date("{team}", "{date}")["game_id"]\nget_nba_play_by_play(*)["len"]', _nba_event_count),
        Template("nba_last_opponent", "sports", ("who did the {team} play in their last game?",
                                                 "which team did the {team} face most recently?"),
                 'get_nba_last_game("{team}")["opponent"]', _nba_last_opponent),
        # open
        *[Template(f"open_{key}", "open", questions, 'get_open("{entity}")["' + key + '"]', _open_key(key))
          for key, questions in _OPEN_KEYS.items()],
        Template("open_founder_birthplace", "open", ("where was the founder of {entity} born?",
                                                     "what is the birthplace of the person who founded {entity}?"),
                 'get_open("{entity}")["founder"]\nget_open(*)["birth_place"]', _open_founder_birthplace),
        Template("open_capital_population", "open", ("what is the population of the capital of {entity}?",
                                                     "how many people live in the capital city of {entity}?"),
                 'get_open("{entity}")["capital"]\nget_open(*)["population"]', _open_capital_population),
    ]
    ids = [t.id for t in out]
    assert len(ids) == len(set(ids)), "template ids must be unique"
    return out


# Functions no template asks, and why (the test checks every other function of every domain is asked).
UNASKED_FUNCTIONS: dict[str, str] = {}

# Whole templates kept out of training: one or two per domain, each a shape the training templates do not
# teach verbatim (a different key, a different multi-hop, a sort over a different column).
HELDOUT_TEMPLATES = ("movie_composer", "director_birthday", "cast_size", "song_country", "artist_first_song",
                     "grammy_best_new_artist",
                     "price_low", "month_highest_close", "eps", "soccer_result", "nba_opponent", "open_currency",
                     "open_capital_population")


# ---------------------------------------------------------------------------------------------- generation
def generate(kg: FixtureKG, seed: int = 0, catalogue: Sequence[Template] | None = None) -> list[TemplateExample]:
    """Every template filled with every entity it fits, one example per paraphrase (deterministic)."""
    rng = random.Random(seed)
    out = []
    for template in catalogue or templates():
        for n, filling in enumerate(template.fill(kg)):
            program = template.program.format(**filling.slots)
            for p, question in enumerate(template.questions):
                query_time = filling.query_time or rng.choice(_QUERY_TIMES)
                out.append(TemplateExample(f"{template.id}-{n:03d}-{p}", template.id, question.format(**filling.slots),
                                           query_time, template.domain, program, filling.entities, filling.expected))
    return out


_QUOTED = re.compile(r'"([^"]+)"')


def program_entities(programs: Iterable[str]) -> set[str]:
    """Lower-cased quoted strings of programs (the names an in-context pool teaches)."""
    return {m.lower() for program in programs for m in _QUOTED.findall(program)}


def split_examples(examples: Sequence[TemplateExample], protected: Iterable[str] = (), seed: int = 0,
                   heldout_fraction: float = 0.25,
                   heldout_templates: Iterable[str] = HELDOUT_TEMPLATES) -> dict[str, list[TemplateExample]]:
    """train / heldout_entities / heldout_templates.

    Args:
        protected: entities never held out (those of the in-context pool).
        heldout_fraction: share of each domain's other entities held out (seeded).
    """
    protected = {p.lower() for p in protected}
    held_templates = set(heldout_templates)
    rng = random.Random(seed)
    entities_by_domain: dict[str, list[str]] = {}
    for example in examples:
        for entity in example.entities:
            if entity not in protected and entity not in entities_by_domain.setdefault(example.domain, []):
                entities_by_domain[example.domain].append(entity)
    held_entities = set()
    for domain in sorted(entities_by_domain):
        names = sorted(entities_by_domain[domain])
        rng.shuffle(names)
        held_entities.update(names[:max(1, round(len(names) * heldout_fraction))])
    splits = {name: [] for name in SPLITS}
    for example in examples:
        new_entity = any(e in held_entities for e in example.entities)
        if example.template in held_templates:
            if not new_entity:
                splits["heldout_templates"].append(example)
        elif new_entity:
            splits["heldout_entities"].append(example)
        else:
            splits["train"].append(example)
    return splits


def cap_per_template(examples: Sequence[TemplateExample], cap: int | None,
                     seed: int = 0) -> list[TemplateExample]:
    """At most `cap` examples of each template (a seeded sample, original order kept), so that the templates
    with many entities (prices: ticker x day) do not crowd out the rare functions in a short training run."""
    if cap is None:
        return list(examples)
    rng = random.Random(seed)
    by_template: dict[str, list[int]] = {}
    for i, example in enumerate(examples):
        by_template.setdefault(example.template, []).append(i)
    keep = {i for indices in by_template.values() for i in (indices if len(indices) <= cap
                                                               else rng.sample(indices, cap))}
    return [e for i, e in enumerate(examples) if i in keep]


# ---------------------------------------------------------------------------------------------- checking
_STAR_ARGUMENT = re.compile(r"[(,]\s*\*\s*[,)]")


def final_answer(result) -> list:
    """The items an `ExecutionResult` answers with: values, count or average of its final statements."""
    statements = list(result.statements)
    answer = []
    for i, statement in enumerate(statements):
        following = statements[i + 1].statement.text if i + 1 < len(statements) else ""
        if statement.consumed or _STAR_ARGUMENT.search(following):
            continue
        if statement.kind in ("count", "average") and statement.number is not None:
            answer.append(statement.number)
        elif statement.kind == "values":
            answer.extend(v.value for v in statement.values)
    return answer


def _number(value) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return None


def _same(a, b) -> bool:
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        return math.isclose(x, y, rel_tol=1e-6, abs_tol=0.005)
    return str(a).strip().casefold() == str(b).strip().casefold()


def check_answer(answer: Sequence, expected: Sequence) -> bool:
    """True when `answer` holds exactly the expected items (any order, numbers with tolerance)."""
    if len(answer) != len(expected):
        return False
    remaining = list(answer)
    for item in expected:
        match = next((i for i, got in enumerate(remaining) if _same(got, item)), None)
        if match is None:
            return False
        remaining.pop(match)
    return True


def read_examples(path: str | Path) -> list[TemplateExample]:
    with open(path, encoding="utf8") as handle:
        return [TemplateExample.from_json(line) for line in handle if line.strip()]


def write_examples(examples: Iterable[TemplateExample], path: str | Path) -> int:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [e.to_json() + "\n" for e in examples]
    path.write_text("".join(lines), encoding="utf8")
    return len(lines)
