"""Running hostile SQL through the read-only guard and auditing what came back (the statements: evaluation/acceptance/hostile_sql.py):
`run_statements` returns `FuzzFigures`, `store_state` is what must not change, `fuzz_guard` a whole fuzz run over a fresh
store (the library of scripts/fuzz_sql_guard.py)."""
from __future__ import annotations

import hashlib
import sqlite3
import tempfile
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from evaluation.acceptance.hostile_sql import hostile_cases
from models.paths import resolve_repo_path
from models.public_data import build_database
from models.public_data.sql.guard import ReadOnlySQL
from models.public_data.tables import TABLE_NAMES


@dataclass
class FuzzFigures:
    """What `run_statements` saw.

    A refusal before SQLite is a result with an error and `seconds == 0` (the guard's own checks return before
    it starts its clock); `refused:` errors come from the authorizer, `interrupted` ones from the time limit;
    `errors` is every other error (syntax, SQLite limits, "string or blob too big").
    """

    statements: int = 0
    refused_before: int = 0
    refused_by_authorizer: int = 0
    errors: int = 0
    ran: int = 0
    interrupted: int = 0
    max_seconds: float = 0.0  # the largest `SQLResult.seconds`
    max_wall: float = 0.0  # the largest wall time around `run`, measured here
    slowest: str = ""  # the statement of `max_wall`
    escapes: list[tuple[str, str]] = field(default_factory=list)  # (statement, the exception that got out)
    bad_results: list[tuple[str, str]] = field(default_factory=list)  # (statement, what is wrong with its result)
    leaks: list[tuple[str, str]] = field(default_factory=list)  # (statement, the secret a cell of it held)
    ran_by_family: Counter = field(default_factory=Counter)

    def line(self, writes: str = "") -> str:
        tail = f", writes: {writes}" if writes else ""
        return (f"statements {self.statements}, refused before SQLite {self.refused_before}, refused by the "
                f"authorizer {self.refused_by_authorizer}, errors {self.errors}, ran {self.ran}, interrupted "
                f"{self.interrupted}, max seconds {self.max_seconds:.3f} (wall {self.max_wall:.3f}), escapes "
                f"{len(self.escapes)}{tail}")


def run_statements(guard, cases: list[tuple[str, str]], secret_texts: list[str] = ()) -> FuzzFigures:
    """Runs every statement through `guard.run`; nothing it raises gets out of here (it is counted instead).

    `secret_texts` (see `secrets`): a result cell containing one is a leak."""
    figures = FuzzFigures()
    for family, statement in cases:
        figures.statements += 1
        started = time.perf_counter()
        try:
            result = guard.run(statement)
        except Exception as exc:  # noqa: BLE001 - the point: count what escapes
            figures.escapes.append((statement, f"{type(exc).__name__}: {exc}"))
            continue
        finally:
            wall = time.perf_counter() - started
            if wall > figures.max_wall:
                figures.max_wall, figures.slowest = wall, statement
        figures.max_seconds = max(figures.max_seconds, result.seconds)
        if result.ok:
            figures.ran += 1
            figures.ran_by_family[family] += 1
            figures.leaks.extend(_leaks(result, secret_texts))
            if len(result.rows) > guard.row_limit:
                figures.bad_results.append((statement, f"{len(result.rows)} rows"))
            if not set(result.tables) <= guard.tables:
                figures.bad_results.append((statement, f"read {result.tables}"))
            continue
        if result.rows:
            figures.bad_results.append((statement, f"refused ({result.error}) with rows"))
        if result.error.startswith("refused:"):
            figures.refused_by_authorizer += 1
        elif result.error.startswith("interrupted"):
            figures.interrupted += 1
        elif result.seconds == 0.0:
            figures.refused_before += 1
        else:
            figures.errors += 1
    return figures


def store_state(path: str | Path) -> tuple[str, tuple]:
    """The store's sha256 and its `sqlite_master` (read on a read-only connection of its own)."""
    digest = hashlib.sha256(Path(path).read_bytes()).hexdigest()
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        master = tuple(db.execute("SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name"))
    finally:
        db.close()
    return digest, master


def secrets(path: str | Path) -> list[str]:
    """Text only the internal tables and the schema hold: no result of the guard may contain any of it."""
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        found = [row[0] for query in ("SELECT value FROM meta", "SELECT text FROM records",
                                      "SELECT holds FROM sql_tables", "SELECT sql FROM sqlite_master")
                 for row in db.execute(query) if isinstance(row[0], str) and len(row[0]) > 20]
    finally:
        db.close()
    return found


def _leaks(result, secret_texts) -> list[tuple[str, str]]:
    cells = {cell for row in result.rows for cell in row if isinstance(cell, str) and len(cell) > 20}
    return [(result.statement, secret[:60]) for cell in cells for secret in secret_texts if secret in cell]


def fuzz_guard(n: int = 10_000, seed: int = 0, time_limit: float = 0.05, margin: float = 0.5) -> int:
    """Builds a store from data/public in a temporary directory, runs `n` statements of `hostile_cases` through one
    `ReadOnlySQL` with time limit `time_limit`, and prints what escaped (an exception out of `run`, a write, a result
    over the time limit plus `margin`, a refused result with rows, text of the internal tables in a result), one
    line each, then the figures. Returns the exit status: 1 when anything escaped, else 0."""
    with tempfile.TemporaryDirectory(prefix="fuzz_sql_guard_") as tmp:
        scratch = Path(tmp)
        store = scratch / "pd.sqlite"
        build_database(resolve_repo_path("data/public"), store)
        (digest, master), secret_texts = store_state(store), secrets(store)
        guard = ReadOnlySQL(store, TABLE_NAMES, time_limit_s=time_limit)
        started = time.perf_counter()
        try:
            figures = run_statements(guard, hostile_cases(n, seed, scratch), secret_texts)
        finally:
            guard.close()
        elapsed = time.perf_counter() - started
        new_digest, new_master = store_state(store)
        extra = sorted(p.name for p in scratch.iterdir() if p != store)
    writes = new_digest != digest or new_master != master or bool(extra)
    limit = time_limit + margin
    problems = [f"escaped: {exc} <- {statement[:200]!r}" for statement, exc in figures.escapes]
    problems += [f"bad result: {what} <- {statement[:200]!r}" for statement, what in figures.bad_results]
    problems += [f"leak: {secret!r} <- {statement[:200]!r}" for statement, secret in figures.leaks]
    if max(figures.max_seconds, figures.max_wall) > limit:
        problems.append(f"over the time limit: {figures.max_wall:.3f} s <- {figures.slowest[:200]!r}")
    if writes:
        problems.append(f"the store changed (sha256 {new_digest != digest}, sqlite_master {new_master != master})"
                        f" or files appeared: {extra}")
    for problem in problems:
        print(problem)
    print(f"# {elapsed:.1f} s for {figures.statements} statements, time limit {time_limit:g} s, seed {seed}; "
          f"slowest: {figures.slowest[:100]!r}")
    print(figures.line(writes="yes" if writes else "no"))
    return 1 if problems else 0
