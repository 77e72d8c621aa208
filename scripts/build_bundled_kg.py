"""Builds the bundled fixture KG (`data/kg_fixture/`) into the official `cragkg/` layout.

    python scripts/build_bundled_kg.py --out DIR [--source data/kg_fixture]

The server builds it into `.cache/bundled_kg/` by itself when needed; this command writes a copy anywhere,
e.g. to serve with the official `mock_api/server.py` (`KG_BASE_DIRECTORY=DIR`).
"""
from __future__ import annotations

import argparse

from mock_api.bundled_kg import SOURCE_DIR, build


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="output directory (created if missing)")
    parser.add_argument("--source", default=str(SOURCE_DIR), help="fixture sources (default: %(default)s)")
    args = parser.parse_args(argv)
    print(f"fixture KG written to {build(args.out, args.source)}")


if __name__ == "__main__":
    main()
