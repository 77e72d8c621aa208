"""Fuzzes the read-only SQL guard (models/public_data/sql/guard.py) with generated hostile statements.

    python scripts/fuzz_sql_guard.py [--n 10000] [--seed 0] [--time-limit 0.05] [--margin 0.5]

Builds a store from data/public in a temporary directory, runs `--n` statements of the generator in
tests/public_data/hostile_sql.py (writes, ATTACH, PRAGMA, several statements, recursive CTEs, cross joins,
forbidden functions, internal tables, huge or malformed text, mutations of valid statements, ~20 % valid ones)
through one `ReadOnlySQL` with time limit `--time-limit`, and prints one line of figures: statements, refused
before SQLite, refused by the authorizer, errors, ran, interrupted, max seconds, escapes, writes (the store's
sha256 or `sqlite_master` changed, or a file appeared beside it: yes/no). Exit status 1 when anything escaped
(an exception out of `run`, a write, a result over the time limit plus `--margin`, a refused result with rows,
text of the internal tables in a result), each printed above the line; 0 otherwise.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path


from models.paths import resolve_repo_path
from models.public_data import build_database
from models.public_data.sql.guard import ReadOnlySQL
from models.public_data.tables import TABLE_NAMES
from tests.public_data.hostile_sql import hostile_cases, run_statements, secrets, store_state


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="statements to run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=0.05, help="the guard's time limit, seconds")
    parser.add_argument("--margin", type=float, default=0.5, help="seconds a result may take beyond the limit")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="fuzz_sql_guard_") as tmp:
        scratch = Path(tmp)
        store = scratch / "pd.sqlite"
        build_database(resolve_repo_path("data/public"), store)
        (digest, master), secret_texts = store_state(store), secrets(store)
        guard = ReadOnlySQL(store, TABLE_NAMES, time_limit_s=args.time_limit)
        started = time.perf_counter()
        try:
            figures = run_statements(guard, hostile_cases(args.n, args.seed, scratch), secret_texts)
        finally:
            guard.close()
        elapsed = time.perf_counter() - started
        new_digest, new_master = store_state(store)
        extra = sorted(p.name for p in scratch.iterdir() if p != store)
    writes = new_digest != digest or new_master != master or bool(extra)
    limit = args.time_limit + args.margin
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
    print(f"# {elapsed:.1f} s for {figures.statements} statements, time limit {args.time_limit:g} s, seed {args.seed}; "
          f"slowest: {figures.slowest[:100]!r}")
    print(figures.line(writes="yes" if writes else "no"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
