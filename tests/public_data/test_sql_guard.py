"""The read-only SQL guard (models/public_data/sql/guard.py): chosen hostile cases, then generated ones.

The fuzz run (`run_fuzz`) sends statements of evaluation/acceptance/hostile_sql.py through one guard over a copy of
the store in the test's own tmp dir and asserts that nothing escaped: no exception out of `run`, the file's
sha256 and `sqlite_master` unchanged, no file created beside it (ATTACH and VACUUM INTO would make one), every
result within the time limit plus a margin, no refused result with rows, no cell holding text of the internal
tables. 500 statements in the default suite (a few seconds), 10,000 under `-m slow`; `pytest -s` prints the
figures, as does scripts/fuzz_sql_guard.py.
"""
from __future__ import annotations

import shutil
import sqlite3
import time
from pathlib import Path

import pytest

from evaluation.acceptance.hostile_sql import FAMILIES, hostile_cases, hostile_statements
from evaluation.acceptance.hostile_sql_run import FuzzFigures, run_statements, secrets, store_state
from models.public_data.sql.guard import ReadOnlySQL
from models.public_data.tables import TABLE_NAMES
from scripts.fuzz_sql_guard import main as fuzz_main

FUZZ_LIMIT_S = 0.05  # the fuzz guard's time limit: a cross join costs this much
MARGIN_S = 0.5  # what a result may take beyond its limit (slow shared CI)


@pytest.fixture(scope="module")
def sql_store(store_path, tmp_path_factory) -> Path:
    """A copy of the session's store (tests/public_data/conftest.py), so a write could not reach other tests."""
    path = tmp_path_factory.mktemp("sql_guard") / "pd.sqlite"
    shutil.copyfile(store_path, path)
    return path


@pytest.fixture(scope="module")
def guard(sql_store):
    guard = ReadOnlySQL(sql_store, TABLE_NAMES)
    yield guard
    guard.close()


def _count(path: Path, table: str) -> int:
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    finally:
        db.close()


# ----------------------------------------------------------------------------- chosen cases
def test_a_valid_count_returns_its_row(guard, sql_store):
    result = guard.run("SELECT count(*) FROM movies")
    assert result.error == "" and result.ok
    assert result.rows == ((_count(sql_store, "movies"),),) and result.columns == ("count(*)",)
    assert result.tables == ("movies",) and not result.truncated


def test_the_same_statement_twice_reports_its_tables_twice(guard):
    first, second = (guard.run("SELECT title FROM movie_genres WHERE genre = 'Drama'") for _ in range(2))
    assert first.tables == second.tables == ("movie_genres",)


REFUSED = {
    "write": "DELETE FROM movies",
    "write behind a CTE": "WITH x AS (SELECT 1) DELETE FROM movies",
    "write after a comment": "/* a select */ DROP TABLE movies",
    "attach": "ATTACH ':memory:' AS m",
    "pragma": "PRAGMA query_only = 0",
    "table-valued pragma": "SELECT * FROM pragma_table_info('meta')",
    "two statements": "SELECT 1; SELECT 2",
    "a write after a select": "SELECT count(*) FROM movies; DROP TABLE movies",
    "internal table": "SELECT * FROM meta",
    "internal table in a subquery": "SELECT title FROM movies WHERE title IN (SELECT text FROM records)",
    "sqlite_master": "SELECT sql FROM sqlite_master",
    "sqlite_schema": "SELECT name FROM sqlite_schema",
    "randomblob": "SELECT randomblob(1e9)",
    "zeroblob": "SELECT length(zeroblob(1e9))",
    "printf": "SELECT printf('%.*c', 1000000000, 'x')",
    "load_extension": "SELECT load_extension('/tmp/x.so')",
    "recursive CTE": "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT max(x) FROM c",
    "vacuum into": "VACUUM INTO '/tmp/never-written.sqlite'",
    "NUL": "SELECT 1\x00; DROP TABLE movies",
    "lone surrogate": "SELECT count(*) FROM movies WHERE title = '\ud800'",
    "trim with a character set": "SELECT trim(title, 'aeiou') FROM movies",
    "too long": "SELECT '" + "a" * 100_000 + "'",
    "value over the size limit": "SELECT length(" + "replace(" * 8 + "'aaaa'" + ",'a','aaaa')" * 8 + ")",
}


@pytest.mark.parametrize("statement", REFUSED.values(), ids=REFUSED.keys())
def test_a_hostile_statement_is_refused_without_rows(guard, sql_store, statement):
    before = store_state(sql_store)
    result = guard.run(statement)
    assert result.error and not result.ok
    assert result.rows == () and result.columns == ()
    assert store_state(sql_store) == before


def test_a_semicolon_in_a_string_and_a_trailing_comment_are_fine(guard):
    in_string = guard.run("SELECT count(*) FROM oscar_nominations WHERE nominee = 'a;b'")
    assert in_string.error == "" and in_string.rows == ((0,),)
    commented = guard.run("SELECT count(*) FROM movies -- how many; DROP TABLE movies")
    assert commented.error == "" and commented.rows == guard.run("SELECT count(*) FROM movies;").rows


def test_a_huge_cross_join_is_interrupted_in_time(sql_store):
    guard = ReadOnlySQL(sql_store, TABLE_NAMES, time_limit_s=0.2)
    try:
        started = time.perf_counter()
        result = guard.run("SELECT count(*) FROM movies a, movies b, movies c, movies d, movies e, movies f, "
                           "movies g ORDER BY a.title || g.title")
        wall = time.perf_counter() - started
    finally:
        guard.close()
    assert result.error.startswith("interrupted") and result.rows == ()
    assert result.seconds <= 0.2 + 0.3 and wall <= 0.2 + 0.3


def test_quadratic_functions_stay_within_the_time_limit(sql_store):
    """One call of `instr` or `replace` is never interrupted; the value limit bounds it, and 40 calls of it."""
    a = "replace(replace(replace(replace(replace('aaa','a','aaaa'),'a','aaaa'),'a','aaaa'),'a','aaaa'),'a','aaaa')"
    statement = (f"WITH s(a, b) AS (SELECT {a} || {a}, substr({a}, 1, 3000) || 'b') SELECT "  # 6144 and 3001 chars
                 + ", ".join(f"instr(a || '{i}', b)" for i in range(40)) + " FROM s")
    guard = ReadOnlySQL(sql_store, TABLE_NAMES, time_limit_s=FUZZ_LIMIT_S)
    try:
        started = time.perf_counter()
        result = guard.run(statement)
        wall = time.perf_counter() - started
    finally:
        guard.close()
    assert result.error == "" and result.rows == ((0,) * 40,)
    assert wall <= FUZZ_LIMIT_S + MARGIN_S


def test_row_limit_truncates(sql_store):
    guard = ReadOnlySQL(sql_store, TABLE_NAMES, row_limit=5)
    try:
        many, few = guard.run("SELECT title FROM movie_credits"), guard.run("SELECT title FROM movies LIMIT 3")
    finally:
        guard.close()
    assert _count(sql_store, "movie_credits") > 5
    assert many.ok and many.truncated and len(many.rows) == 5
    assert few.ok and not few.truncated and len(few.rows) == 3


# ----------------------------------------------------------------------------- generated cases
def test_the_generator_is_deterministic_and_covers_every_family():
    cases = hostile_cases(400, seed=3, scratch_dir="/x")
    assert cases == hostile_cases(400, seed=3, scratch_dir="/x") != hostile_cases(400, seed=4, scratch_dir="/x")
    assert {family for family, _ in cases} == set(FAMILIES)
    assert all(isinstance(statement, str) and statement for _, statement in cases)
    assert hostile_statements(50, seed=3, scratch_dir="/x") == [statement for _, statement in cases[:50]]
    valid_share = sum(family == "valid" for family, _ in cases) / len(cases)
    assert 0.1 < valid_share < 0.3


def run_fuzz(n: int, tmp_path: Path, source: Path) -> FuzzFigures:
    """Runs `n` generated statements on a copy of `source` in `tmp_path` and asserts that nothing escaped."""
    store = tmp_path / "pd.sqlite"
    shutil.copyfile(source, store)
    (digest, master), secret_texts = store_state(store), secrets(store)
    guard = ReadOnlySQL(store, TABLE_NAMES, time_limit_s=FUZZ_LIMIT_S)
    started = time.perf_counter()
    try:
        figures = run_statements(guard, hostile_cases(n, seed=0, scratch_dir=tmp_path), secret_texts)
        still = guard.run("SELECT count(*) FROM movies")
    finally:
        guard.close()
    print(f"\n{figures.line()} ({time.perf_counter() - started:.1f} s; slowest: {figures.slowest[:100]!r})")
    assert not figures.escapes, figures.escapes[:5]
    assert store_state(store)[0] == digest, "the store file changed"
    assert store_state(store)[1] == master, "sqlite_master changed"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["pd.sqlite"]
    if max(figures.max_seconds, figures.max_wall) > FUZZ_LIMIT_S + MARGIN_S:
        # A shared machine can stall one run for a second (seen once in CI: 0.95 s on a statement that takes
        # 0.05-0.1 s here); a guard that fails to interrupt is slow every time, so the slowest runs again alone.
        again = _best_of(store, figures.slowest, runs=3)
        assert again <= FUZZ_LIMIT_S + MARGIN_S, (again, figures.slowest[:300])
    assert not figures.bad_results, figures.bad_results[:5]
    assert not figures.leaks, figures.leaks[:5]
    assert still.rows == ((_count(store, "movies"),),)  # the guard still answers after it all
    assert figures.statements == n == (figures.refused_before + figures.refused_by_authorizer + figures.errors
                                       + figures.ran + figures.interrupted)
    assert figures.ran and figures.refused_before and figures.refused_by_authorizer and figures.interrupted
    return figures


def _best_of(store: Path, statement: str, runs: int) -> float:
    """The shortest wall time of `runs` runs of `statement` through a fresh guard with the fuzz's limit."""
    guard = ReadOnlySQL(store, TABLE_NAMES, time_limit_s=FUZZ_LIMIT_S)
    try:
        walls = []
        for _ in range(runs):
            started = time.perf_counter()
            guard.run(statement)
            walls.append(time.perf_counter() - started)
    finally:
        guard.close()
    return min(walls)


def test_hostile_statements_default(tmp_path, sql_store):
    figures = run_fuzz(500, tmp_path, sql_store)
    assert figures.ran_by_family["valid"] > 50


@pytest.mark.slow
def test_hostile_statements_full(tmp_path, sql_store):
    run_fuzz(10_000, tmp_path, sql_store)


def test_the_fuzz_script_prints_one_line_of_figures(capsys):
    # Inside the full suite the script once returned 1, and capsys kept what it printed: whatever escapes is now
    # printed with the failure. Of its checks only the time one (limit + 0.5 s) can depend on the machine's load, and
    # that check is the script's benchmark, not this test's, so here its margin is wide.
    status = fuzz_main(["--n", "60", "--seed", "1", "--margin", "5"])
    out = capsys.readouterr().out.strip().splitlines()
    assert status == 0, "\n".join(out)
    assert out[-1].startswith("statements 60, refused before SQLite ") and out[-1].endswith("writes: no")
