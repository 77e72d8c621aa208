"""Importers for the public tables db3 used, by their published column layouts.

Files in --src, by name (the layouts are checked; data/public/README.md says where to download them):
- `the_oscar_award.csv` (kaggle: unanimad/the-oscar-award): `OSCAR_COLUMNS`
- `the_grammy_awards.csv` (kaggle: unanimad/grammy-awards): `GRAMMY_COLUMNS`
- `movies_metadata.csv` (kaggle: rounakbanik/the-movies-dataset): `MOVIE_COLUMNS`, joined with the
  optional `credits.csv` of the same dataset (`CREDIT_COLUMNS`) for lead actors and directors
- `finance_stats.csv` (any US stock screener export, renamed): `FINANCE_COLUMNS`

Extra columns are ignored (newer Oscar files add `canon_category`, the Grammy file has `img`...).
A missing required column is a `PublicDataError` naming the file and the column; a malformed *row*
(the movies file has a few with shifted columns) is skipped and counted, because one bad row in 45,000
must not stop a build.

Award years: Oscar records are indexed by `year_ceremony` (db3 and CRAG's gold answers read "the 2012
Oscars" as the ceremony held in 2012). The Grammy file's `year` is the eligibility year; the Nth
ceremony is held in 1958 + N (the 62nd, for 2019, was held in 2020), which is the year indexed.
"""
from __future__ import annotations

import ast
import csv
import logging
import math
import re
import sys
from pathlib import Path
from typing import Callable, Iterator

from models.public_data.records import Record, format_money, ordinal, serialize

log = logging.getLogger(__name__)
csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # credits.csv cells hold whole cast lists

OSCAR_COLUMNS = ("year_film", "year_ceremony", "ceremony", "category", "name", "film", "winner")
GRAMMY_COLUMNS = ("year", "title", "category", "nominee", "artist", "workers", "winner")
MOVIE_COLUMNS = ("id", "title", "original_title", "release_date", "genres", "original_language", "budget",
                 "revenue", "runtime", "vote_average", "vote_count")
CREDIT_COLUMNS = ("cast", "crew", "id")
FINANCE_COLUMNS = ("ticker", "company_name", "market_cap", "eps", "pe_ratio")
_NOMINEE = "nominee (did not win)"
_PEOPLE_SEPARATOR = re.compile(r"\s*,\s*|\s+and\s+|\s*&\s*|\s*;\s*")
_COMPANY_SUFFIX = re.compile(r"[,.]?\s+(inc|corp|corporation|co|company|ltd|plc|holdings|group|"
                             r"class [a-c]|common stock)\.?$", re.IGNORECASE)


class PublicDataError(ValueError):
    """A public-data file that cannot be imported (missing column, unreadable file)."""


def read_rows(path: Path, required: tuple[str, ...]) -> Iterator[dict[str, str]]:
    """Rows of a CSV as dicts, after checking its header has every required column.

    Raises:
        PublicDataError: the file is empty or lacks a required column.
    """
    with open(path, newline="", encoding="utf-8", errors="replace") as fh:
        reader = csv.DictReader(fh)
        header = [h.strip() for h in (reader.fieldnames or [])]
        for column in required:
            if column not in header:
                raise PublicDataError(f"{path}: missing column {column!r} (found columns: {header})")
        reader.fieldnames = header
        for row in reader:
            yield {k: (v or "").strip() for k, v in row.items() if k is not None and isinstance(v, str)}


def _truthy(value: str) -> bool:
    return value.strip().lower() in ("true", "1", "yes", "y")


def _people(text: str) -> list[str]:
    """'Kwak Sin Ae and Bong Joon Ho' -> the whole string plus each person."""
    parts = [p for p in _PEOPLE_SEPARATOR.split(text) if len(p) > 2]
    return [text] + [p for p in parts if p != text] if text else []


def import_oscars(path: Path) -> Iterator[Record]:
    """One record per nomination, linked by its film and by each person named."""
    for row in read_rows(path, OSCAR_COLUMNS):
        year, film_year = _number(row["year_ceremony"]), row["year_film"]
        if not year:
            continue
        year = int(year)
        number = int(row["ceremony"]) if row["ceremony"].isdigit() else None
        ceremony = f"the {ordinal(number)} Academy Awards" if number else "the Academy Awards"
        won, category = _truthy(row["winner"]), row["category"].lower()  # the file shouts: "DIRECTING"
        text = serialize([("award", f"{ceremony}, held in {year} for films of {film_year}"),
                          ("Oscar category", category), ("winner" if won else _NOMINEE, row["name"]),
                          ("film", row["film"])])
        names = tuple(_people(row["name"]) + ([row["film"]] if row["film"] else []))
        typed = (year, _int(row["year_film"]), number, category, row["name"], row["film"], int(won))
        yield Record("oscar", "movie", text, names, year, category, won, (("oscar_nominations", typed),))


def import_grammys(path: Path) -> Iterator[Record]:
    """One record per nomination, linked by the nominated work and by the artist(s)."""
    for row in read_rows(path, GRAMMY_COLUMNS):
        number = re.match(r"\s*(\d+)", row["title"])
        year = 1958 + int(number.group(1)) if number else int(_number(row["year"])) + 1
        if year <= 1958:
            continue
        ceremony = f"the {ordinal(year - 1958)} Annual Grammy Awards" if number else "the Grammy Awards"
        won = _truthy(row["winner"])
        text = serialize([("award", f"{ceremony}, held in {year} for releases of {row['year']}"),
                          ("Grammy category", row["category"]), ("winner" if won else _NOMINEE, row["nominee"]),
                          ("artist", row["artist"]), ("credit line", row["workers"])])
        names = tuple(([row["nominee"]] if row["nominee"] else []) + _people(row["artist"]))
        typed = (year, _int(row["year"]), year - 1958 if number else None, row["category"].lower(), row["nominee"],
                 row["artist"], int(won))
        yield Record("grammy", "music", text, names, year, row["category"].lower(), won,
                     (("grammy_nominations", typed),))


def _literal_list(text: str) -> list[dict]:
    """The dataset stores lists as Python literals ("[{'id': 18, 'name': 'Drama'}]")."""
    try:
        value = ast.literal_eval(text) if text else []
    except (ValueError, SyntaxError):
        return []
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _int(text: str) -> int | None:
    """An integer column's value, or None (SQL NULL) when the cell holds none."""
    value = _number(text)
    return int(value) if value else None


def _float(text: str) -> float | None:
    """A real column's value; None (SQL NULL) for an empty or non-numeric cell, so 0 stays a value."""
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _number(text: str) -> float:
    """A float, or 0.0 for anything that is not a finite number ("", "nan", "1999-10-15")."""
    return _float(text) or 0.0


def read_credits(path: Path) -> dict[str, tuple[list[tuple[str, str]], list[str]]]:
    """movie id -> (lead actors (name, character) in billing order, directors)."""
    credits = {}
    for row in read_rows(path, CREDIT_COLUMNS):
        cast = sorted(_literal_list(row["cast"]), key=lambda c: c.get("order", 999))
        leads = [(c["name"], c.get("character") or "") for c in cast[:5] if c.get("name")]
        directors = [c["name"] for c in _literal_list(row["crew"]) if c.get("job") == "Director" and c.get("name")]
        credits[row["id"]] = (leads, directors)
    return credits


def _movie_rows(row: dict[str, str], leads, directors, genres: list[str]) -> tuple[tuple[str, tuple], ...]:
    """The film's typed rows: itself, its directors and lead actors, its genres (tables.py)."""
    title, date = row["title"], row["release_date"]
    year = int(date[:4]) if date[:4].isdigit() else None
    votes = int(_number(row["vote_count"]))
    film = (title, date or None, year, row["original_language"] or None, _number(row["budget"]) or None,
            _number(row["revenue"]) or None, _number(row["runtime"]) or None,
            _number(row["vote_average"]) if votes else None, votes)
    figures = (film[4], film[5], film[6], film[7])  # budget, revenue, runtime, rating: see tables.movie_credits
    people = [(title, year, name, "director", None, *figures) for name in directors]
    people += [(title, year, name, "actor", character or None, *figures) for name, character in leads]
    return (("movies", film), *(("movie_credits", p) for p in people),
            *(("movie_genres", (title, year, g)) for g in genres))


def import_movies(path: Path, credits_path: Path | None = None) -> Iterator[Record]:
    """One record per movie (+ lead actors and directors when `credits.csv` is present)."""
    credits = read_credits(credits_path) if credits_path and credits_path.exists() else {}
    skipped = 0
    for row in read_rows(path, MOVIE_COLUMNS):
        if not row["title"] or not row["id"].isdigit():  # the shifted rows of the published file
            skipped += 1
            continue
        leads, directors = credits.get(row["id"], ([], []))
        budget, revenue, votes = _number(row["budget"]), _number(row["revenue"]), int(_number(row["vote_count"]))
        original = row["original_title"] if row["original_title"] != row["title"] else ""
        genres = [g.get("name", "") for g in _literal_list(row["genres"]) if g.get("name")]
        text = serialize([
            ("title", row["title"]), ("original title", original), ("release date", row["release_date"]),
            ("directors" if len(directors) > 1 else "director", directors),
            ("lead actors", [f"{name} as {character}" if character else name for name, character in leads]),
            ("genres", genres),
            ("runtime", f"{_number(row['runtime']):g} minutes" if _number(row["runtime"]) else ""),
            ("budget", format_money(budget) if budget else ""),
            ("box office revenue", format_money(revenue) if revenue else ""),
            ("rating", f"{row['vote_average']}/10 from {votes} votes" if votes else ""),
            ("original language", row["original_language"])])
        names = (row["title"],) + ((original,) if original else ()) + tuple(directors)
        yield Record("movie", "movie", text, names, rows=_movie_rows(row, leads, directors, genres))
    if skipped:
        log.warning("%s: skipped %d malformed rows", path, skipped)


def _short_company_name(name: str) -> str:
    """'Berkshire Hathaway Inc. Class B' -> 'Berkshire Hathaway' (suffixes stripped until none is left)."""
    shorter = _COMPANY_SUFFIX.sub("", name).strip(" ,.&")
    return shorter if shorter == name else _short_company_name(shorter)


def import_finance(path: Path) -> Iterator[Record]:
    """One record per company, linked by ticker, full name and the name without its legal suffix."""
    for row in read_rows(path, FINANCE_COLUMNS):
        if not row["ticker"]:
            continue
        cap, name = _number(row["market_cap"]), row["company_name"]
        text = serialize([("company", name), ("ticker symbol", row["ticker"].upper()),
                          ("market capitalization", format_money(cap) if cap else ""),
                          ("EPS (earnings per share)", row["eps"]), ("P/E ratio", row["pe_ratio"])])
        short = _short_company_name(name)
        typed = (row["ticker"].upper(), name, cap or None, _float(row["eps"]), _float(row["pe_ratio"]))
        yield Record("finance", "finance", text, tuple(n for n in (row["ticker"], name, short) if n),
                     rows=(("companies", typed),))


# file name -> importer; `credits.csv` is read by the movie importer, never on its own.
IMPORTERS: dict[str, Callable[[Path], Iterator[Record]]] = {
    "the_oscar_award.csv": import_oscars,
    "the_grammy_awards.csv": import_grammys,
    "movies_metadata.csv": lambda path: import_movies(path, path.with_name("credits.csv")),
    "finance_stats.csv": import_finance,
}


def import_directory(src: str | Path) -> Iterator[Record]:
    """Every record of every known file in `src` (unknown files are ignored).

    Raises:
        PublicDataError: `src` has none of the known files, or a file lacks a required column.
    """
    src = Path(src)
    found = [name for name in IMPORTERS if (src / name).exists()]
    if not found:
        raise PublicDataError(f"{src}: none of the public-data files {sorted(IMPORTERS)} found")
    for name in found:
        yield from IMPORTERS[name](src / name)
