"""Fuzzes the read-only SQL guard (models/public_data/sql/guard.py) with generated hostile statements.

    python scripts/fuzz_sql_guard.py [--n 10000] [--seed 0] [--time-limit 0.05] [--margin 0.5]

Builds a store from data/public in a temporary directory, runs `--n` statements of the generator in
evaluation/acceptance/hostile_sql.py (writes, ATTACH, PRAGMA, several statements, recursive CTEs, cross joins,
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

from evaluation.acceptance.hostile_sql_run import fuzz_guard


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10_000, help="statements to run")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=0.05, help="the guard's time limit, seconds")
    parser.add_argument("--margin", type=float, default=0.5, help="seconds a result may take beyond the limit")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    return fuzz_guard(args.n, args.seed, args.time_limit, args.margin)


if __name__ == "__main__":
    sys.exit(main())
