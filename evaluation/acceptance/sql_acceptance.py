"""The acceptance set of the SQL source, `data/acceptance/public_sql.jsonl`: its questions and golds.

`make_sql_acceptance(src, out)` writes it (the library of scripts/make_sql_acceptance.py); `build(src)` is its rows.

Aggregation, comparison and count questions over the public-data store (the fixture CSVs in data/public/):
each gold is computed here from the CSV rows with Python's `csv` module (and `ast.literal_eval` for the movie
list cells), independent of the SQL the system writes and of the `models` package. No question is a single-fact
lookup: each one counts, compares or aggregates rows.

Conventions (the store's): "the 2020 oscars" is `year_ceremony`; "the 2020 grammys" is the ceremony held in
2020, 1958 + the number in `title` ("62nd Annual GRAMMY Awards" -> 2020); a Grammy row's performer is `artist`,
or `nominee` where `artist` is empty (Best New Artist); a movie's year is `release_date[:4]`; directors are
`credits.csv` crew entries with job "Director", actors the first five cast entries by `order`.

The output is deterministic (fixed key order, UTF-8, no timestamps): the same bytes on every run.
"""
from __future__ import annotations

import ast
import csv
import json
import re
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

REPO = Path(__file__).resolve().parents[2]
DEFAULT_OUT = "data/acceptance/public_sql.jsonl"
DEFAULT_SRC = "data/public"
QUERY_TIME = "03/15/2024, 10:00:00 PT"
KINDS = ("count", "compare", "aggregate")
SOURCES = ("oscar", "grammy", "movie", "finance")
WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")

csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # credits.csv cells hold whole cast lists


# ---------------------------------------------------------------------------------------------- the rows


@dataclass(frozen=True)
class Data:
    """The parsed rows of the four sources."""
    oscars: list[dict]
    grammys: list[dict]
    movies: list[dict]
    finance: list[dict]


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _literal(text: str) -> list[dict]:
    value = ast.literal_eval(text) if text else []
    return [v for v in value if isinstance(v, dict)]


def _float(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _people(names: str) -> list[str]:
    """'Graham King and Martin Scorsese' -> ['Graham King', 'Martin Scorsese']."""
    return [p.strip() for p in re.split(r",\s*|\s+and\s+|\s*&\s*", names) if p.strip()]


def load(src: Path) -> Data:
    """The four sources' rows, typed: award years, winners as bools, movie lists parsed, numbers as floats."""
    oscars = [{**r, "year": int(r["year_ceremony"]), "won": r["winner"] == "True", "people": _people(r["name"])}
              for r in _rows(src / "the_oscar_award.csv")]
    grammys = [{**r, "year": 1958 + int(re.match(r"\s*(\d+)", r["title"]).group(1)), "won": r["winner"] == "True",
                "performer": r["artist"] or r["nominee"]} for r in _rows(src / "the_grammy_awards.csv")]
    credits = {r["id"]: r for r in _rows(src / "credits.csv")}
    movies = []
    for r in _rows(src / "movies_metadata.csv"):
        credit = credits.get(r["id"], {"cast": "", "crew": ""})
        cast = sorted(_literal(credit["cast"]), key=lambda c: c["order"])[:5]
        movies.append({"title": r["title"], "year": int(r["release_date"][:4]), "budget": int(float(r["budget"])),
                       "revenue": int(float(r["revenue"])), "runtime": float(r["runtime"]),
                       "rating": float(r["vote_average"]), "genres": [g["name"] for g in _literal(r["genres"])],
                       "directors": [c["name"] for c in _literal(credit["crew"]) if c["job"] == "Director"],
                       "cast": [c["name"] for c in cast]})
    finance = [{"ticker": r["ticker"], "name": r["company_name"], "market_cap": _float(r["market_cap"]),
                "eps": _float(r["eps"]), "pe": _float(r["pe_ratio"])} for r in _rows(src / "finance_stats.csv")]
    return Data(oscars, grammys, movies, finance)


# ------------------------------------------------------------------------------------------ gold helpers

Gold = tuple[str, list[str]]


def count(n: int, one: str, many: str) -> Gold:
    """'3' with ['three', '3 times'] (a count must be >= 1: a zero gold is not worth a question)."""
    if n < 1:
        raise ValueError("a count question whose gold is 0")
    alts = ([WORDS[n]] if n < len(WORDS) else []) + [f"{n} {one if n == 1 else many}"]
    return str(n), alts


def _trim(value: float, places: int) -> str:
    text = f"{value:.{places}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def money(value: float) -> Gold:
    """'$160 million' with ['$160,000,000']; billions and trillions to two places."""
    for scale, word, places in ((1e12, "trillion", 2), (1e9, "billion", 2), (1e6, "million", 1)):
        if value >= scale:
            return f"${_trim(value / scale, places)} {word}", [f"${round(value):,}"]
    return f"${round(value):,}", []


def number(value: float, places: int, unit: str = "") -> Gold:
    """A value rounded to `places` ('156.3 minutes'); one place fewer or more, or the bare number, also pass."""
    suffix = f" {unit}" if unit else ""
    forms = [_trim(value, places), _trim(value, places - 1) if places else "", _trim(value, places + 1),
             f"{value:.{places}f}"]
    alts = [f"{f}{suffix}" for f in forms if f] + ([forms[0]] if unit else [])
    return alts[0], [a for a in dict.fromkeys(alts) if a != alts[0]]


def name(value: str, *alts: str) -> Gold:
    return value, [a for a in alts if a != value]


def pick(scores: dict[str, float], highest: bool = True) -> str:
    """The key with the highest (lowest) score; a tie is an error, since the gold would be ambiguous."""
    best = (max if highest else min)(scores.values())
    winners = [k for k, v in scores.items() if v == best]
    if len(winners) != 1:
        raise ValueError(f"tie in {scores}")
    return winners[0]


def film(data: Data, title: str) -> dict:
    return next(m for m in data.movies if m["title"] == title)


def company(data: Data, ticker: str) -> dict:
    return next(c for c in data.finance if c["ticker"] == ticker)


def company_gold(data: Data, typed: dict[str, str], key: str, highest: bool = True) -> Gold:
    """Among companies typed as the user would (name -> ticker), the one with the highest (lowest) `key`."""
    best = pick({t: company(data, t)[key] for t in typed.values()}, highest)
    said = next(k for k, t in typed.items() if t == best)
    return name(company(data, best)["name"], said, best)


def oscar_nominations(data: Data, year: int | None = None, film_title: str = "", person: str = "",
                      won: bool = False) -> int:
    return sum(1 for r in data.oscars if (year is None or r["year"] == year)
               and (not film_title or r["film"] == film_title) and (not person or person in r["people"])
               and (r["won"] or not won))


def grammy_wins(data: Data, performer: str, year: int | None = None) -> int:
    return sum(1 for r in data.grammys
               if r["performer"] == performer and r["won"] and (year is None or r["year"] == year))


def most_oscar_nominations(data: Data, year: int) -> Gold:
    films = Counter(r["film"] for r in data.oscars if r["year"] == year)
    return name(pick(dict(films)))


def most_grammy_wins(data: Data, year: int) -> Gold:
    wins = Counter(r["performer"] for r in data.grammys if r["year"] == year and r["won"])
    return name(pick(dict(wins)))


def avg(values: list[float]) -> float:
    return sum(values) / len(values)


# --------------------------------------------------------------------------------------------- questions


@dataclass(frozen=True)
class Question:
    id: str  # sql-<kind>-NN
    source: str  # oscar | grammy | movie | finance
    domain: str  # movie | music | finance
    question_type: str  # CRAG's: aggregation | comparison | ...
    query: str
    gold: Callable[[Data], Gold]

    @property
    def kind(self) -> str:
        return self.id.split("-")[1]


Q = Question
QUESTIONS: list[Question] = [
    # counts
    Q("sql-count-01", "oscar", "movie", "aggregation",
      "how many oscar nominations did the social network get at the 2011 oscars",
      lambda d: count(oscar_nominations(d, 2011, film_title="The Social Network"), "nomination", "nominations")),
    Q("sql-count-02", "oscar", "movie", "aggregation", "how many oscars did the matrix win?",
      lambda d: count(oscar_nominations(d, film_title="The Matrix", won=True), "oscar", "oscars")),
    Q("sql-count-03", "oscar", "movie", "aggregation", "how many times has martin scorsese been nominated for an oscar",
      lambda d: count(oscar_nominations(d, person="Martin Scorsese"), "time", "times")),
    Q("sql-count-04", "oscar", "movie", "aggregation", "how many films were up for best picture at the 2012 oscars?",
      lambda d: count(len({r["film"] for r in d.oscars if r["year"] == 2012 and r["category"] == "BEST PICTURE"}),
                      "film", "films")),
    Q("sql-count-05", "oscar", "movie", "aggregation", "how many academy awards did parasite win in 2020",
      lambda d: count(oscar_nominations(d, 2020, film_title="Parasite", won=True), "oscar", "oscars")),
    Q("sql-count-06", "grammy", "music", "aggregation", "how many grammys did billie eilish win at the 2020 grammys?",
      lambda d: count(grammy_wins(d, "Billie Eilish", 2020), "grammy", "grammys")),
    Q("sql-count-07", "grammy", "music", "aggregation", "how many grammy awards has taylor swift won",
      lambda d: count(grammy_wins(d, "Taylor Swift"), "grammy", "grammys")),
    Q("sql-count-08", "grammy", "music", "aggregation",
      "how many artists were nominated for best new artist at the 2020 grammys",
      lambda d: count(sum(1 for r in d.grammys if r["year"] == 2020 and r["category"] == "Best New Artist"),
                      "artist", "artists")),
    Q("sql-count-09", "grammy", "music", "aggregation",
      "how many different categories was billie eilish nominated in at the grammys?",
      lambda d: count(len({r["category"] for r in d.grammys if r["performer"] == "Billie Eilish"}),
                      "category", "categories")),
    Q("sql-count-10", "movie", "movie", "aggregation", "how many films did christopher nolan direct before 2012",
      lambda d: count(sum(1 for m in d.movies if "Christopher Nolan" in m["directors"] and m["year"] < 2012),
                      "film", "films")),
    Q("sql-count-11", "movie", "movie", "aggregation", "how many movies has leonardo dicaprio starred in?",
      lambda d: count(sum(1 for m in d.movies if "Leonardo DiCaprio" in m["cast"]), "movie", "movies")),
    Q("sql-count-12", "movie", "movie", "aggregation", "how many crime movies came out in the 1970s",
      lambda d: count(sum(1 for m in d.movies if "Crime" in m["genres"] and 1970 <= m["year"] <= 1979),
                      "movie", "movies")),
    Q("sql-count-13", "movie", "movie", "aggregation", "how many science fiction films were released in the 2000s?",
      lambda d: count(sum(1 for m in d.movies if "Science Fiction" in m["genres"] and 2000 <= m["year"] <= 2009),
                      "film", "films")),
    Q("sql-count-14", "finance", "finance", "aggregation", "how many companies have a p/e ratio above 100",
      lambda d: count(sum(1 for c in d.finance if c["pe"] is not None and c["pe"] > 100), "company", "companies")),
    Q("sql-count-15", "finance", "finance", "aggregation", "how many companies are worth more than 2 trillion dollars?",
      lambda d: count(sum(1 for c in d.finance if c["market_cap"] is not None and c["market_cap"] > 2e12),
                      "company", "companies")),
    Q("sql-count-16", "finance", "finance", "aggregation", "how many stocks have a negative eps",
      lambda d: count(sum(1 for c in d.finance if c["eps"] is not None and c["eps"] < 0), "stock", "stocks")),
    # comparisons: A or B, or among a set
    Q("sql-compare-01", "oscar", "movie", "comparison",
      "which got more oscar nominations at the 2012 oscars, hugo or the descendants?",
      lambda d: name(pick({t: oscar_nominations(d, 2012, film_title=t) for t in ("Hugo", "The Descendants")}))),
    Q("sql-compare-02", "oscar", "movie", "comparison",
      "who has more oscar nominations, sam mendes or martin scorsese",
      lambda d: name(pick({p: oscar_nominations(d, person=p) for p in ("Sam Mendes", "Martin Scorsese")}))),
    Q("sql-compare-03", "grammy", "music", "comparison", "who has won more grammys, billie eilish or taylor swift?",
      lambda d: name(pick({p: grammy_wins(d, p) for p in ("Billie Eilish", "Taylor Swift")}))),
    Q("sql-compare-04", "movie", "movie", "comparison",
      "which made more at the box office, the dark knight or joker",
      lambda d: name(pick({t: film(d, t)["revenue"] for t in ("The Dark Knight", "Joker")}))),
    Q("sql-compare-05", "movie", "movie", "comparison", "which movie is longer, interstellar or the godfather?",
      lambda d: name(pick({t: film(d, t)["runtime"] for t in ("Interstellar", "The Godfather")}))),
    Q("sql-compare-06", "movie", "movie", "comparison", "which had a bigger budget, hugo or inception",
      lambda d: name(pick({t: film(d, t)["budget"] for t in ("Hugo", "Inception")}))),
    Q("sql-compare-07", "movie", "movie", "comparison", "which film is rated higher, joker or inception?",
      lambda d: name(pick({t: film(d, t)["rating"] for t in ("Joker", "Inception")}))),
    Q("sql-compare-08", "finance", "finance", "comparison",
      "which company has the largest market cap among apple, nvidia and amazon",
      lambda d: company_gold(d, {"apple": "AAPL", "nvidia": "NVDA", "amazon": "AMZN"}, "market_cap")),
    Q("sql-compare-09", "finance", "finance", "comparison",
      "which of these companies has the higher eps, meta or netflix",
      lambda d: company_gold(d, {"meta": "META", "netflix": "NFLX"}, "eps")),
    Q("sql-compare-10", "finance", "finance", "comparison", "which has a lower p/e ratio, coca-cola or pepsi?",
      lambda d: company_gold(d, {"coca-cola": "KO", "pepsi": "PEP"}, "pe", highest=False)),
    # aggregates and superlatives: max, min, avg, sum
    Q("sql-aggregate-01", "oscar", "movie", "aggregation",
      "which film got the most oscar nominations at the 2020 oscars",
      lambda d: most_oscar_nominations(d, 2020)),
    Q("sql-aggregate-02", "grammy", "music", "aggregation", "which artist won the most grammys at the 2020 grammys?",
      lambda d: most_grammy_wins(d, 2020)),
    Q("sql-aggregate-03", "movie", "movie", "aggregation", "what is the average runtime of christopher nolan's films",
      lambda d: number(avg([m["runtime"] for m in d.movies if "Christopher Nolan" in m["directors"]]), 1, "minutes")),
    Q("sql-aggregate-04", "movie", "movie", "aggregation",
      "what was the total budget of the matrix reloaded and the matrix revolutions?",
      lambda d: money(sum(film(d, t)["budget"] for t in ("The Matrix Reloaded", "The Matrix Revolutions")))),
    Q("sql-aggregate-05", "movie", "movie", "aggregation", "which film released in 2011 had the highest rating",
      lambda d: name(pick({m["title"]: m["rating"] for m in d.movies if m["year"] == 2011}))),
    Q("sql-aggregate-06", "movie", "movie", "aggregation", "which 2019 movie made the most money?",
      lambda d: name(pick({m["title"]: m["revenue"] for m in d.movies if m["year"] == 2019}))),
    Q("sql-aggregate-07", "movie", "movie", "aggregation", "what's the average rating of the matrix movies",
      lambda d: number(avg([m["rating"] for m in d.movies if m["title"].startswith("The Matrix")]), 1)),
    Q("sql-aggregate-08", "movie", "movie", "aggregation", "how much did the godfather movies make in total?",
      lambda d: money(sum(m["revenue"] for m in d.movies if m["title"].startswith("The Godfather")))),
    Q("sql-aggregate-09", "finance", "finance", "aggregation",
      "what's the average p/e ratio of microsoft, apple and nvidia",
      lambda d: number(avg([company(d, t)["pe"] for t in ("MSFT", "AAPL", "NVDA")]), 2)),
    Q("sql-aggregate-10", "finance", "finance", "aggregation",
      "what is the combined market cap of microsoft and apple?",
      lambda d: money(sum(company(d, t)["market_cap"] for t in ("MSFT", "AAPL")))),
    Q("sql-aggregate-11", "finance", "finance", "aggregation",
      "what is the lowest p/e ratio among jpmorgan, exxon and berkshire hathaway",
      lambda d: number(min(company(d, t)["pe"] for t in ("JPM", "XOM", "BRK-B")), 2)),
]


# ------------------------------------------------------------------------------------------------ output


def build(src: Path) -> list[dict]:
    """The rows of the output file, in QUESTIONS order."""
    data = load(src)
    rows = []
    for q in QUESTIONS:
        answer, alts = q.gold(data)
        if not answer:
            raise ValueError(f"{q.id}: empty gold")
        rows.append({"interaction_id": q.id, "query_time": QUERY_TIME, "domain": q.domain,
                     "question_type": q.question_type, "static_or_dynamic": "static", "query": q.query,
                     "answer": answer, "alt_ans": alts, "split": 0, "popularity": "torso", "search_results": [],
                     "kind": q.kind})
    return rows


def render(rows: list[dict]) -> str:
    return "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows)


def summary(rows: list[dict]) -> str:
    kinds = Counter(r["kind"] for r in rows)
    domains = Counter(r["domain"] for r in rows)
    sources = Counter(q.source for q in QUESTIONS)
    return (f"{len(rows)} questions; " + ", ".join(f"{k} {kinds[k]}" for k in KINDS) + "; "
            + ", ".join(f"{k} {v}" for k, v in sorted(domains.items())) + "; sources: "
            + ", ".join(f"{s} {sources[s]}" for s in SOURCES))


def _repo_path(text: str) -> Path:
    path = Path(text)
    return path if path.is_absolute() else REPO / path


def make_sql_acceptance(src: str = DEFAULT_SRC, out: str = DEFAULT_OUT) -> Path:
    """Builds the set from the CSVs in `src` and writes it to `out` (relative paths: from the repo root), printing
    its summary; returns the file written."""
    rows = build(_repo_path(src))
    path = _repo_path(out)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render(rows), encoding="utf-8")
    print(f"{path.name}: {summary(rows)}")
    return path
