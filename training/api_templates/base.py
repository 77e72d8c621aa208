"""The pieces every domain table is made of: the KG sources, a template, its fillings and its examples.

A domain module declares each template once, with `DomainTable.template` on the function that fills it:

    MOVIE = DomainTable("movie")

    @MOVIE.template('get_movie_person_crew("{movie}", None, eq(job, "Director"))["name"]',
                    "who directed {movie}", "who's the director of {movie}",
                    unseen=("who was behind the camera on {movie}",))
    def movie_director(kg): ...   # yields one `Filling` per entity

The phrasings are written in CRAG's register (lower case, often no question mark, "what's"); `unseen`
phrasings are never trained on (they make the held-out-wording split, see `split.py`) and `heldout=True`
keeps every phrasing of the template out of training.
"""
from __future__ import annotations

import csv
import json
import random
import re
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, Callable, Iterable

from models.date_words import MONTHS
from models.paths import REPO_ROOT

FIXTURE_DIR = REPO_ROOT / "data" / "kg_fixture"


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


@dataclass(frozen=True)
class Filling:
    """One entity's instance of a template."""

    slots: dict[str, Any]
    entities: tuple[str, ...]  # lower-cased names the question mentions
    expected: tuple  # the answer items the program must output
    query_time: str | None = None  # None: one of the default query times


@dataclass(frozen=True)
class Template:
    """Attributes:
        questions: trained phrasings, `str.format` patterns over the slots.
        program: `str.format` pattern over the slots.
        unseen: phrasings kept out of training (asked in `heldout_templates`).
        heldout: every phrasing is kept out of training (a question shape the adapter never saw).
    """

    id: str
    domain: str
    questions: tuple[str, ...]
    program: str
    fill: Callable[["FixtureKG"], Iterable[Filling]] = field(repr=False)
    unseen: tuple[str, ...] = ()
    heldout: bool = False


class DomainTable:
    """One domain's templates, in declaration order; `template` is the decorator that declares one."""

    def __init__(self, domain: str):
        self.domain = domain
        self.templates: list[Template] = []

    def add(self, template: Template) -> Template:
        if template.domain != self.domain:
            raise ValueError(f"{template.id}: a {template.domain} template in the {self.domain} table")
        if any(t.id == template.id for t in self.templates):
            raise ValueError(f"template {template.id!r} declared twice")
        self.templates.append(template)
        return template

    def template(self, program: str, *questions: str, unseen: tuple[str, ...] = (), heldout: bool = False,
                 name: str | None = None):
        """Declares the decorated fill function as a template named after it (without a leading "_")."""
        def declare(fill: Callable[[FixtureKG], Iterable[Filling]]):
            self.add(Template(name or fill.__name__.lstrip("_"), self.domain, tuple(questions), program, fill,
                              tuple(unseen), heldout))
            return fill
        return declare


def low(name: str) -> str:
    return name.lower()


def pt(day: date, clock: str = "10:00:00") -> str:
    """A query time in CRAG's format."""
    return f"{day:%m/%d/%Y}, {clock} PT"


# ---------------------------------------------------------------------------------------------- CRAG's register
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_CONTRACTIONS = (("what is ", "what's "), ("who is ", "who's "), ("where is ", "where's "), ("how much is ",
                 "how much's "), ("did not", "didn't"), ("does not", "doesn't"))


def _date_in_words(match: re.Match, rng: random.Random) -> str:
    year, month, day = int(match[1]), int(match[2]), int(match[3])
    name = MONTHS[month - 1]
    return rng.choice((match[0], f"{name} {day}, {year}", f"{name[:3]} {day} {year}", f"{month:02d}/{day:02d}/{year}",
                       f"{name} {day} {year}"))


def crag_register(question: str, rng: random.Random) -> str:
    """The question as CRAG's users type it: dates often in words ("feb 27 2024"; the KG checks give the model
    the API's form back), contractions, and the question mark often left off. Seeded, so data is reproducible."""
    text = _ISO_DATE.sub(lambda m: _date_in_words(m, rng), question)
    if rng.random() < 0.5:
        for full, short in _CONTRACTIONS:
            text = text.replace(full, short)
    text = text.rstrip()
    if rng.random() < 0.6:
        text = text.rstrip("?").rstrip()
    elif not text.endswith(("?", ".")):
        text += "?"
    return text
