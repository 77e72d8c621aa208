"""Chooses `kg.key_match_threshold`: how close a question's attribute phrase must be to the key path of the value.

    python scripts/sweep_key_match.py                    # the CPU profile's embedder, 4 examples per template
    python scripts/sweep_key_match.py --per-template 8 --profile g4dn

Pairs come from the API-generation templates (`training/api_templates/`: every question wording the adapter
was trained on, filled from the bundled fixture KG), never from the evaluation sets. Each template's program is
run against the bundled mock API (started in-process); its final value's key path is a positive pair with the
question's attribute phrase, and the path of every other field of the same rows (the attributes the function
could have answered instead) a negative one. For each threshold the script prints the share of right keys kept
and of wrong keys caught, and picks the lowest threshold whose balanced accuracy is within 0.01 of the best (a
flat top: the lower threshold keeps more right values final). A pair matched lexically (a shared stem) scores 1.0 whatever the threshold.
The library is `training/key_match_sweep.py`.
"""
from __future__ import annotations

import argparse
import sys

from training.key_match_sweep import sweep_key_match


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--per-template", type=int, default=4)
    args = parser.parse_args(argv)
    return sweep_key_match(args.per_template, args.profile)


if __name__ == "__main__":
    sys.exit(main())
