"""Builds the shipped sample dataset `data/sample/*.jsonl` from the hand-written sources in `data/sample/source/`.

    python scripts/make_sample.py           # (re)writes crag_sample.jsonl and crag_sample_task3.jsonl
    python scripts/make_sample.py --check   # exit 1 if the committed files differ from a fresh build

How the pages are assembled (and why a rebuild is byte-identical): `evaluation/acceptance/sample_data.py`. Exit status 2
on a malformed source.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from evaluation.acceptance.sample_data import OUT_DIR, SOURCE_DIR, make_sample


def main(argv: list[str] | None = None) -> int:
    """CLI entry point; returns the process exit code."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the files on disk instead of writing")
    parser.add_argument("--source", type=Path, default=SOURCE_DIR, help="folder with <domain>.yaml and sites/")
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR, help="where the JSONL files live")
    args = parser.parse_args(argv)
    return make_sample(args.source, args.out_dir, args.check)


if __name__ == "__main__":
    sys.exit(main())
