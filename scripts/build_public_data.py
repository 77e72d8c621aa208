"""Builds the public-data SQLite store from the published CSVs.

    python scripts/build_public_data.py --src DIR --out FILE

DIR holds any of `the_oscar_award.csv`, `the_grammy_awards.csv`, `movies_metadata.csv` (+ `credits.csv`),
`finance_stats.csv` (data/public/README.md says where to download each; `importers` lists the columns).
Point the profile's `public_data.database` at FILE (and set `build_from: ""` or to DIR).
"""
from __future__ import annotations

import argparse
import logging

from models.public_data.database import build_database


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--src", required=True, help="folder with the public CSV files")
    parser.add_argument("--out", required=True, help="SQLite file to write")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    counts = build_database(args.src, args.out)
    print(f"wrote {args.out}: {counts['records']} records, {counts['entities']} entity names, "
          f"by source {counts['by_source']}")


if __name__ == "__main__":
    main()
