"""Generates the API-generation data from the bundled fixture KG, validated by execution, in three splits.

    python scripts/make_api_data.py --out outputs/api_data            # train / heldout_entities / heldout_templates
    python scripts/make_api_data.py --out outputs/api_data --sft --icl-k 0   # + train.sft.jsonl (no ICL)

Every template of `training/api_templates/` (one table per domain) is filled with every entity it fits, once
per phrasing; each target program is compiled and executed against the bundled mock API (started in-process,
as `local_evaluation.py --task 2` does) and kept only when it yields the answer read from the KG sources. A
template whose examples fail is a bug in the template or in the KG pathway: the script names each failure and
exits with status 1 unless `--allow-failures`. The in-context pool's entities (`kg.icl_pool` of the profile) are
never held out, and train examples asking a pool question are left out. `--sft` also writes the chat records the
trainer reads (`training/api_data.to_sft_records`: the pipeline's own request, with the program as the answer).
The output is generated, not committed: the same seed gives the same files. The library is
`training/template_data.py`; this is its command line.
"""
from __future__ import annotations

import argparse
import logging
import sys

from training.template_data import make_api_data


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", required=True, help="folder for train/heldout_*.jsonl")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--profile", default=None, help="default $CRAG_PROFILE (cpu)")
    parser.add_argument("--sft", action="store_true", help="also write train.sft.jsonl for training/train_lora.py")
    parser.add_argument("--icl-k", type=int, default=None,
                        help="in-context examples in the SFT requests (default: the profile's kg.icl_k)")
    parser.add_argument("--api-prompt", default=None,
                        help='kg.api_prompt of the SFT requests (default: the profile\'s; the CPU adapter: '
                             'kg_api_adapter, the short request)')
    parser.add_argument("--extra", nargs="*", default=[], metavar="JSONL",
                        help="hand-written examples in real CRAG wording (query, query_time, domain, program; e.g. "
                             "data/kg/icl_pool.jsonl data/kg/api_train_seed.jsonl) added to train.sft.jsonl only: "
                             "their programs are parsed, not executed (their entities need not be in the fixture)")
    parser.add_argument("--max-per-template", type=int, default=None, metavar="N",
                        help="train.sft.jsonl takes at most N examples of each template (seeded sample; the "
                             "split files keep them all)")
    parser.add_argument("--allow-failures", action="store_true", help="drop failing examples instead of failing")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    return make_api_data(args.out, args.seed, args.profile, args.sft, args.icl_k, args.api_prompt, args.extra,
                         args.max_per_template, args.allow_failures)


if __name__ == "__main__":
    sys.exit(main())
