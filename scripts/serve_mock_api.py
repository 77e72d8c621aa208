"""Serves the CRAG mock KG API locally (the library is `mock_api/`; this is its command line).

    python scripts/serve_mock_api.py --kg-dir DIR --port 8000   # serve a real cragkg/ copy
    python scripts/serve_mock_api.py                             # serve the bundled fixture KG

Without `--kg-dir` (and without $KG_BASE_DIRECTORY) it serves the fixture KG built from `data/kg_fixture/`
into `.cache/bundled_kg/` on first use. Point the KG pathway at it with `CRAG_MOCK_API_URL=http://HOST:PORT`.
"""
from __future__ import annotations

import argparse
import logging
import os

from mock_api.server import serve


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kg-dir", default=os.environ.get("KG_BASE_DIRECTORY") or None,
                        help="a directory in the official cragkg/ layout (default: $KG_BASE_DIRECTORY, "
                             "else the bundled fixture KG)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)
    parser.add_argument("--log-level", default="info")
    args = parser.parse_args(argv)
    logging.basicConfig(level=args.log_level.upper(), format="%(asctime)s %(name)s: %(message)s")
    serve(args.kg_dir, args.host, args.port, args.log_level)


if __name__ == "__main__":
    main()
