"""Trains the GPU profile's three LoRA adapters (web_answer, kg_answer, api_generation) in one resumable command.

    make adapters DATA=crag_task_1_and_2_dev_v4.jsonl.bz2 BASE=models/meta-llama/Meta-Llama-3-8B-Instruct
    python scripts/make_adapters.py --data FILE --base FOLDER [--server-url http://localhost:8001/v1 --server-model M]

First a check, with no model, that the KG it labels on serves the data's entities: on one that does not (the
bundled fixture KG against CRAG's questions) `kg_answer` would get empty contexts and no training record, so it
stops there naming the fix ($CRAG_MOCK_API_URL set to a mock API serving CRAG's KG), or with --without-kg-answer
says up front that it trains web_answer and api_generation only. Then labels (db3 §2.4), API-generation data
(bundled-KG templates + bootstrapped CRAG questions, checked on the mock API), then LoRA training into the folders
the profile's llm.adapters name; a rerun skips every finished step. It ends with a summary: each adapter trained,
kept or skipped, and why. The steps and their outputs: `training/make_adapters.py`. This is its command line; it
exits with status 1 and the reason when it stops.
"""
from __future__ import annotations

import argparse
import logging

from models.config import parse_override
from training.make_adapters import MakeAdaptersError, Settings, make_adapters


def parse_args(argv: list[str] | None = None) -> Settings:
    defaults = Settings(data="", base="")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="CRAG file (.jsonl, .jsonl.bz2, Task-3 tar or directory)")
    parser.add_argument("--base", required=True, help="the base model: a HF folder (Llama-3-8B-Instruct)")
    parser.add_argument("--profile", default=defaults.profile, help="the profile whose adapters to train")
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE", type=parse_override,
                        help="overrides one profile key, the value read as YAML (repeatable)")
    parser.add_argument("--work", default=defaults.work, help="each step's output (resumable)")
    parser.add_argument("--adapters-dir", default=None,
                        help="write DIR/<name> (default: where the profile's llm.adapters point)")
    parser.add_argument("--limit", type=int, default=None, help="first N CRAG questions of the split")
    parser.add_argument("--split", choices=("all", "0", "1"), default=defaults.split)
    parser.add_argument("--judge", choices=("llm", "rules"), default=defaults.judge,
                        help="llm: p_check_gt / p_context asked of the labelling model (db3); rules: no LLM")
    parser.add_argument("--server-url", default=None,
                        help="an OpenAI-compatible server of BASE (e.g. vllm serve): labelling model and judge")
    parser.add_argument("--server-model", default=None, help="its served model name")
    parser.add_argument("--device", default=None, help="labelling device (default: cuda when available, else cpu)")
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size, help="questions per labelling batch")
    parser.add_argument("--max-per-template", type=int, default=defaults.max_per_template,
                        help="template examples per API template (seeded sample)")
    parser.add_argument("--max-templates", type=int, default=None, help="first N API templates only (tests)")
    parser.add_argument("--extra", nargs="*", default=list(defaults.extra), metavar="JSONL",
                        help="hand-written API examples added to the api_generation data (parsed, not executed)")
    parser.add_argument("--max-steps", type=int, default=defaults.max_steps,
                        help="optimiser steps per adapter (0: train_lora's 2 epochs)")
    parser.add_argument("--max-length", type=int, default=defaults.max_length, help="tokens per training example")
    parser.add_argument("--qlora", choices=("on", "off"), default=defaults.qlora, help="4-bit base (CUDA only)")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--without-kg-answer", action="store_true",
                        help="train web_answer and api_generation only (e.g. no mock API serving CRAG's KG)")
    args = parser.parse_args(argv)
    return Settings(data=args.data, base=args.base, profile=args.profile, overrides=dict(args.set), work=args.work,
                    adapters_dir=args.adapters_dir, limit=args.limit, split=args.split, judge=args.judge,
                    server_url=args.server_url, server_model=args.server_model, device=args.device,
                    batch_size=args.batch_size, max_per_template=args.max_per_template,
                    max_templates=args.max_templates, extra=tuple(args.extra), max_steps=args.max_steps,
                    max_length=args.max_length, qlora=args.qlora, seed=args.seed,
                    without_kg_answer=args.without_kg_answer)


def main(argv: list[str] | None = None) -> dict:
    settings = parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    for noisy in ("httpx", "urllib3", "filelock"):
        logging.getLogger(noisy).setLevel(logging.WARNING)
    try:
        return make_adapters(settings)
    except MakeAdaptersError as error:  # a reason, not a bug: the message, no traceback
        raise SystemExit(f"make adapters stopped: {error}") from None


if __name__ == "__main__":
    main()
