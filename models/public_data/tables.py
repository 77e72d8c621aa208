"""The public tables as typed SQL tables: what the SQL source (models/sources/sql.py) may read.

The store's `records` table holds each row as a "The [attribute] is [value]." paragraph for entity lookup;
an aggregate ("how many times was X nominated", "which film had the higher revenue") needs the row's values
in columns instead. The importers put both into one `Record` (its `rows`), so every CSV is parsed once.

Tables are flat on purpose: a person's films carry the film's title, year and figures (`movie_credits`), so a
count of "films X directed before 2000" or "the average runtime of X's films" is one statement over one table,
the form a small model can write and the SQL grammar (models/public_data/sql/grammar.py) describes. Text columns
compare without case (`COLLATE NOCASE`), because a model copies names from the question as the user typed them.

What each table holds, in words, is stored in the file (`sql_tables`), so the schema descriptor the prompt
reads is generated from the database alone.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Column:
    name: str
    type: str  # INTEGER | REAL | TEXT
    note: str = ""  # what the value means, where the name alone does not say ("1 if it won, else 0")


@dataclass(frozen=True)
class Table:
    name: str
    holds: str  # one sentence, for the prompt
    columns: tuple[Column, ...]

    def create_sql(self) -> str:
        columns = ", ".join(f"{c.name} {c.type}{' COLLATE NOCASE' if c.type == 'TEXT' else ''}" for c in self.columns)
        return f"CREATE TABLE {self.name}({columns})"

    def insert_sql(self) -> str:
        return f"INSERT INTO {self.name} VALUES ({', '.join('?' * len(self.columns))})"


def _c(spec: str, note: str = "") -> Column:
    name, type_ = spec.split()
    return Column(name, type_, note)


_WON = "1 if it won, 0 if only nominated"
TABLES: tuple[Table, ...] = (
    Table("oscar_nominations", "one row per Academy Award (Oscar) nomination, winners and nominees",
          (_c("ceremony_year INTEGER", "the year the ceremony was held"), _c("film_year INTEGER"),
           _c("ceremony INTEGER", "its number: 92 for the 92nd"), _c("category TEXT"),
           _c("nominee TEXT", "the person(s) or film nominated"), _c("film TEXT"), _c("won INTEGER", _WON))),
    Table("grammy_nominations", "one row per Grammy Award nomination, winners and nominees",
          (_c("ceremony_year INTEGER", "the year the ceremony was held"),
           _c("release_year INTEGER", "the eligibility year of the releases"),
           _c("ceremony INTEGER", "its number: 62 for the 62nd"), _c("category TEXT"),
           _c("nominee TEXT", "the song, album or person nominated"), _c("artist TEXT"), _c("won INTEGER", _WON))),
    Table("movies", "one row per film, with its money, length and audience rating",
          (_c("title TEXT"), _c("release_date TEXT", "YYYY-MM-DD"), _c("release_year INTEGER"),
           _c("language TEXT", "original language code: en, fr"), _c("budget REAL", "US dollars"),
           _c("revenue REAL", "box office, US dollars"), _c("runtime REAL", "minutes"),
           _c("rating REAL", "average vote out of 10"), _c("votes INTEGER"))),
    Table("movie_credits", "one row per director or lead actor of a film, with the film's figures",
          (_c("title TEXT"), _c("release_year INTEGER"), _c("person TEXT"), _c("job TEXT", "director or actor"),
           _c("character TEXT", "the part an actor played"), _c("budget REAL", "US dollars"),
           _c("revenue REAL", "box office, US dollars"), _c("runtime REAL", "minutes"),
           _c("rating REAL", "average vote out of 10"))),
    Table("movie_genres", "one row per genre of a film", (_c("title TEXT"), _c("release_year INTEGER"),
                                                           _c("genre TEXT"))),
    Table("companies", "one row per listed company, with its market statistics",
          (_c("ticker TEXT"), _c("name TEXT"), _c("market_cap REAL", "US dollars"),
           _c("eps REAL", "earnings per share"), _c("pe_ratio REAL", "price to earnings"))),
)
TABLE_NAMES = tuple(t.name for t in TABLES)
# Columns that name things (a film, a person, a company): never offered as literals from the column itself, however
# few their values (a fixture store has 22 titles), so a model can only name what the question names.
NAME_COLUMNS = frozenset({"title", "film", "nominee", "artist", "person", "character", "name", "ticker"})
_BY_NAME = {t.name: t for t in TABLES}

CATALOG_SQL = "CREATE TABLE sql_tables(name TEXT PRIMARY KEY, holds TEXT, notes TEXT)"


def table(name: str) -> Table:
    return _BY_NAME[name]


def create_tables(db) -> None:
    """Creates the typed tables and their catalog (what each holds, each column's note) in `db`."""
    for t in TABLES:
        db.execute(t.create_sql())
    db.execute(CATALOG_SQL)
    db.executemany("INSERT INTO sql_tables VALUES (?,?,?)",
                   [(t.name, t.holds, "; ".join(f"{c.name}: {c.note}" for c in t.columns if c.note)) for t in TABLES])


def insert_rows(db, rows) -> None:
    """`rows`: (table name, values in column order) pairs, as a `Record` carries them."""
    for name, values in rows:
        db.execute(_BY_NAME[name].insert_sql(), values)
