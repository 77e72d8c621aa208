"""Writes the answer gate's labelled web questions, `data/gate/gate_questions.jsonl`, from the bundled fixture KG.

    python scripts/make_gate_web_questions.py           # (re)writes data/gate/gate_questions.jsonl
    python scripts/make_gate_web_questions.py --check   # exit 1 if the committed file differs from a fresh build

KG template questions (held-out splits first, at most `--per-template` per template) with five pages each, rendered
from the fixture KG's records, in three cases (`gate_case`): the pages state the answer, do not state it, or state
a wrong value on an older page beside the right one. Questions of the sets the gate is reported on (the bundled
sample, `data/acceptance/kg_unseen.jsonl`) are never asked. The library is `training/gate/web_questions.py`; this is its
command line. The output is deterministic for a seed, so `--check` compares bytes.
"""
from __future__ import annotations

import argparse
import sys

from training.gate.web_questions import DEFAULT_OUT, REPO, make_gate_web_questions


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(REPO / DEFAULT_OUT))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-template", type=int, default=2, metavar="N", help="questions per template at most")
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)
    return make_gate_web_questions(args.out, args.seed, args.per_template, args.check)


if __name__ == "__main__":
    sys.exit(main())
