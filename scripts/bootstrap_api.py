"""Bootstraps API-generation targets for CRAG questions with a strong model behind an OpenAI-compatible endpoint.

    python scripts/bootstrap_api.py --data crag_task_1_and_2_dev_v4.jsonl.bz2 --split 0 \
        --out outputs/api/bootstrap.jsonl --url https://api.openai.com/v1 --model gpt-4o [--execute]

The strong model gets exactly the request the pipeline builds for each question of the split, under its gold
domain; a reply is kept only when it compiles for that domain (canonical form, `source: "bootstrap:<model>"`), else
it goes to `<name>.rejected.jsonl` with the parser's message. `--execute` also runs each kept program against the
mock API. Rerunning resumes. The library is `training/bootstrap_api.py`.
"""
from __future__ import annotations

import argparse
import logging
from typing import Sequence

from training.bootstrap_api import bootstrap_file


def main(argv: Sequence[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="CRAG file (any format evaluation.data reads)")
    parser.add_argument("--out", required=True, help="API-data .jsonl (appended; resumable)")
    parser.add_argument("--url", required=True, help="OpenAI-compatible base URL, e.g. http://localhost:8001/v1")
    parser.add_argument("--model", required=True, help="the endpoint's model name")
    parser.add_argument("--split", choices=("all", "0", "1"), default="all")
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument("--execute", action="store_true", help="run kept programs against the mock API")
    parser.add_argument("--profile", default=None, help="default $CRAG_PROFILE (cpu)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return bootstrap_file(args.data, args.out, args.url, args.model, args.split, args.limit, args.execute,
                          args.profile)


if __name__ == "__main__":
    main()
