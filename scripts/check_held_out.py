"""Checks by content that what the package fits or trains on shares no question with a set held out from it.

    python scripts/check_held_out.py                      # every pair found, and the ones no list explains
    python scripts/check_held_out.py --write-in-sample    # rewrites data/gate/in_sample_pairs.json

The answer gate's fit sets and the KG adapter's training split are compared with every reported set of the
catalogue (`evaluation/sets.py`), the real dev questions included where `$CRAG_DATA` holds them, by the rule of
`training/gate/held_out.py` (the same entity and the same fact in the golds, in any words). A pair on a set the
catalogue says is in-sample for its owner is listed in `data/gate/in_sample_pairs.json` with its reason; any other
pair is a leak: exit status 1, and `--write-in-sample` refuses to list it (remove the question from the fit or
training set, or set it apart by hand in `NOT_SAME` with what differs).
"""
from __future__ import annotations

import argparse
import json
import sys

from evaluation.sets import FITTED
from models import crag_data
from models.paths import REPO_ROOT
from training.gate.compared import fitted_by, reported_by_set, runs_in
from training.gate.held_out import IN_SAMPLE_FILE, allow_list, found_pairs, unexplained


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--write-in-sample", action="store_true", help=f"rewrite {IN_SAMPLE_FILE}")
    args = parser.parse_args(argv)
    dev = crag_data.crag_path(crag_data.DEV_FILE)
    if not dev.exists():
        print(f"dev set not compared: {crag_data.missing_message(crag_data.DEV_FILE, dev)}")
    reported = reported_by_set(dev if dev.exists() else None)
    found, leaks = {}, 0
    for owner in FITTED:
        fitted, sets = fitted_by(owner), runs_in(owner, reported)
        found[owner] = found_pairs(owner, fitted, sets)
        left = unexplained(owner, fitted, sets)
        print(f"{owner}: {len(found[owner])} shared pairs, {len(left)} not in {IN_SAMPLE_FILE}")
        for pair in left:
            print(f"  {pair}")
        leaks += len(left)
    if args.write_in_sample:
        try:
            listed = allow_list(found)
        except ValueError as exc:
            print(f"not written: {exc}")
            return 1
        (REPO_ROOT / IN_SAMPLE_FILE).write_text(json.dumps(listed, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {len(listed)} pairs to {IN_SAMPLE_FILE}")
        return 0
    return 1 if leaks else 0


if __name__ == "__main__":
    sys.exit(main())
