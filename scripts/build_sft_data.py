"""Builds the SFT dataset of an answer adapter from a CRAG file (db3 §2.4; rules in `training/labels.py`).

    python scripts/build_sft_data.py --data data/sample/crag_sample.jsonl --out outputs/sft/web_answer.jsonl
    python scripts/build_sft_data.py --data crag_task_1_and_2_dev_v4.jsonl.bz2 --split 0 --adapter kg_answer \
        --out outputs/sft/kg_answer.jsonl --judge llm --judge-url http://localhost:8001/v1 --judge-model llama-3-70b

Pieces, all from the profile (`--profile`, default `$CRAG_PROFILE`): the generator answers with p_basic
and, with `--judge llm` and no `--judge-url`, also judges; the context comes from the web pathway
(`--adapter web_answer`) or the KG pathway (`--adapter kg_answer`, needs the mock API: `CRAG_MOCK_API_URL`
or `kg.api_url`). `--judge rules` needs no LLM (see `training/judges.py` for what it decides and why it
is safe); `--judge llm --judge-url URL` sends p_check_gt and p_context to an OpenAI-compatible endpoint.

Output: the chat-format JSONL (`training/sft_data.py`), its `.skipped.jsonl` sidecar, and
`<name>.summary.json` with the label counts by reason, also printed as a table. Rerunning the same command
resumes: ids already labelled (or skipped for good) are not asked again. The library is
`training/build_sft_data.py`.
"""
from __future__ import annotations

import argparse
import logging
from typing import Sequence

from training.build_sft_data import ADAPTERS, LabelSettings, label_file


def main(argv: Sequence[str] | None = None) -> dict:
    defaults = LabelSettings(data="", out="")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, help="CRAG file: .jsonl, .jsonl.bz2, Task-3 tar or directory")
    parser.add_argument("--out", required=True, help="SFT .jsonl to write (appended; resumable)")
    parser.add_argument("--adapter", choices=ADAPTERS, default=defaults.adapter, help="whose context and prompt")
    parser.add_argument("--split", choices=("all", "0", "1"), default=defaults.split)
    parser.add_argument("--limit", type=int, default=defaults.limit, help="first N examples of the split only")
    parser.add_argument("--profile", default=defaults.profile, help="default $CRAG_PROFILE (cpu)")
    parser.add_argument("--judge", choices=("rules", "llm"), default=defaults.judge)
    parser.add_argument("--judge-url", default=defaults.judge_url, help="OpenAI-compatible base URL for --judge llm")
    parser.add_argument("--judge-model", default=defaults.judge_model)
    parser.add_argument("--retries", type=int, default=defaults.retries,
                        help="extra attempts for a judge reply without a verdict")
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
    parser.add_argument("--context-max-tokens", type=int, default=defaults.context_max_tokens,
                        help="context budget in tokens (default: the profile's web.context_max_tokens)")
    parser.add_argument("--predict-prompt", default=defaults.predict_prompt, help="p_basic: the prompt that is judged")
    parser.add_argument("--train-prompt", default=defaults.train_prompt,
                        help="prompt of the records (default: the profile's answer prompt for the adapter)")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    return label_file(LabelSettings(**vars(args)))


if __name__ == "__main__":
    main()
