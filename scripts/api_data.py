"""API-generation training data (db3 §3.2 "Fine-tuning for API Generation"): format, validation, SFT records.

    python scripts/api_data.py validate data/kg/api_train_seed.jsonl [--execute --write FILE]
    python scripts/api_data.py to-sft data/kg/api_train_seed.jsonl outputs/api_boot.jsonl --out outputs/sft/api.jsonl

`validate`: every target must compile for its domain (an error names the example, line and the parser's caret);
`--execute` also runs each program against the configured mock API (`kg.api_url` or `$CRAG_MOCK_API_URL`) and
stores its facts; `--write` writes the canonical (and executed) examples. `to-sft`: the chat records of the
api_generation adapter (the pipeline's own request, with the program as the answer). The format and the design:
`training/api_data.py`.
"""
from __future__ import annotations

import argparse
import logging
from typing import Sequence

from training.api_data import to_sft_file, validate_files


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    commands = parser.add_subparsers(dest="command", required=True)
    check = commands.add_parser("validate", help="check every target compiles (and optionally run it)")
    check.add_argument("files", nargs="+")
    check.add_argument("--execute", action="store_true", help="run each program against the mock API")
    check.add_argument("--write", default=None, help="write the canonical (and executed) examples here")
    sft = commands.add_parser("to-sft", help="chat records for the api_generation adapter")
    sft.add_argument("files", nargs="+")
    sft.add_argument("--out", required=True)
    for command in (check, sft):
        command.add_argument("--profile", default=None, help="default $CRAG_PROFILE (cpu)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    if args.command == "validate":
        validate_files(args.files, args.execute, args.write, args.profile)
    else:
        to_sft_file(args.files, args.out, args.profile)


if __name__ == "__main__":
    main()
