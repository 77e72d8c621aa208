"""Writes `data/acceptance/public_sql.jsonl`, the acceptance set of the SQL source.

    python scripts/make_sql_acceptance.py                 # (re)writes data/acceptance/public_sql.jsonl
    python scripts/make_sql_acceptance.py --out /tmp/x.jsonl --src /path/to/csvs

Aggregation, comparison and count questions over the public-data store (the fixture CSVs in data/public/), each
gold computed from the CSV rows, independent of the SQL the system writes: `evaluation/acceptance/sql_acceptance.py`. The
output is deterministic (fixed key order, UTF-8, no timestamps): the same bytes on every run.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.acceptance.sql_acceptance import DEFAULT_OUT, DEFAULT_SRC, make_sql_acceptance


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=DEFAULT_OUT, help="output JSONL (relative paths: from the repo root)")
    parser.add_argument("--src", default=DEFAULT_SRC, help="folder of the public CSVs (relative: from the repo root)")
    args = parser.parse_args(argv)
    make_sql_acceptance(args.src, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
