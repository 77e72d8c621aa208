"""The vocabulary and building blocks of the hostile SQL generator (evaluation/acceptance/hostile_sql.py): the typed tables' columns,
the store's internal tables, literal values, keywords and writes, and seeded pieces (a table, a literal, a condition,
sized and doubled strings, a cross join)."""
from __future__ import annotations

import random

from models.public_data.tables import TABLES

TYPED = {t.name: tuple(c.name for c in t.columns) for t in TABLES}
TEXT = {t.name: tuple(c.name for c in t.columns if c.type == "TEXT") for t in TABLES}
NUMERIC = {t.name: tuple(c.name for c in t.columns if c.type != "TEXT") for t in TABLES}
INTERNAL = ("meta", "records", "entities", "mentions", "entity_fts", "entity_fts_data", "entity_fts_idx",
            "entity_fts_content", "entity_fts_docsize", "entity_fts_config", "sql_tables", "sqlite_master",
            "sqlite_schema", "sqlite_temp_master", "sqlite_temp_schema", "main.sqlite_master", "temp.sqlite_master",
            "sqlite_sequence", "sqlite_stat1", "main.meta", '"records"', "[entities]", "`mentions`", "MeTa",
            "main.records")
VALUES = {"category": ("best picture", "best director", "song of the year", "album of the year"),
          "nominee": ("Bruce Cohen and Dan Jinks", "Viva La Vida", "Taylor Swift"), "film": ("American Beauty",),
          "artist": ("Coldplay", "Taylor Swift"), "title": ("Inception", "The Matrix", "The Sixth Sense"),
          "language": ("en", "fr"), "person": ("Christopher Nolan", "Leonardo DiCaprio"),
          "job": ("director", "actor"), "character": ("Dom Cobb", "Neo"), "genre": ("Drama", "Science Fiction"),
          "ticker": ("MSFT", "AAPL", "NVDA"), "name": ("Microsoft Corporation", "Apple Inc."),
          "release_date": ("2010-07-15", "1999-03-30")}
KEYWORDS = ("SELECT", "FROM", "WHERE", "GROUP BY", "ORDER BY", "LIMIT", "OFFSET", "UNION", "UNION ALL", "JOIN",
            "LEFT JOIN", "ON", "AND", "OR", "NOT", "IN", "LIKE", "GLOB", "IS NULL", "BETWEEN", "CASE", "WHEN", "END",
            "DISTINCT", "AS", "WITH", "RECURSIVE", "VALUES", "INSERT", "DELETE", "UPDATE", "DROP", "CREATE",
            "PRAGMA", "ATTACH", "DETACH", "VACUUM", "RETURNING", "EXPLAIN", "BEGIN", "COMMIT", ";", "--", "/*", "*/",
            "'", '"', "(", ")", ",", "*", "?", ":a", "@a", "$a", "x'00'", "NULL", "1e999", "-9223372036854775808")
WRITES = ("DROP TABLE movies", "DELETE FROM movies", "DELETE FROM meta", "UPDATE movies SET rating = 0",
          "INSERT INTO movies(title) VALUES ('x')", "PRAGMA query_only = 0", "ATTACH ':memory:' AS m",
          "CREATE TABLE pwned(a)")


def table_of(rng: random.Random) -> str:
    return rng.choice(tuple(TYPED))


def literal_of(rng: random.Random, column: str) -> str:
    if column in VALUES and rng.random() < 0.8:
        return "'" + rng.choice(VALUES[column]).replace("'", "''") + "'"
    return "'" + rng.choice(("a;b", "it''s", "x -- y", "/* z */", "%", "Nolan", "", "Best")) + "'"


def condition_on(rng: random.Random, table: str) -> str:
    if TEXT[table] and rng.random() < 0.5:
        column = rng.choice(TEXT[table])
        form = rng.randrange(4)
        if form == 0:
            return f"{column} = {literal_of(rng, column)}"
        if form == 1:
            return f"{column} LIKE '%{rng.choice(('a', 'the', 'best', 'o'))}%'"
        if form == 2:
            return f"{column} IN ({literal_of(rng, column)}, {literal_of(rng, column)})"
        return f"{column} IS NOT NULL"
    column = rng.choice(NUMERIC[table])
    low = rng.choice((0, 1, 5, 1990, 2000, 1e6))
    return rng.choice((f"{column} > {low}", f"{column} <= {low}", f"{column} BETWEEN {low} AND {low * 2 + 10}",
                       f"{column} IS NULL"))


def sized(n: int, ch: str = "a") -> str:
    """An expression whose value is `n` copies of `ch`, built within the value limit where n <= 10,000."""
    base = f"'{ch * 4}'"
    for _ in range(5):
        base = f"replace({base},'{ch}','{ch * 4}')"  # 4096 characters
    whole, rest = divmod(n, 4096)
    parts = [base] * whole + ([f"substr({base},1,{rest})"] if rest else [])
    return "(" + "||".join(parts or ["''"]) + ")"


def doubled(levels: int, ch: str = "a", start: int = 4) -> str:
    """`'aaaa'` replaced `levels` times: 4 * 4**levels characters (past the value limit from 6 levels on)."""
    expr = f"'{ch * start}'"
    for _ in range(levels):
        expr = f"replace({expr},'{ch}','{ch * 4}')"
    return expr


def cross_tables(rng: random.Random, k: int, same: bool = False) -> tuple[str, list[tuple[str, str]]]:
    table = table_of(rng)
    aliases = [(f"t{i}", table if same else table_of(rng)) for i in range(k)]
    return ", ".join(f"{t} {a}" for a, t in aliases), aliases
