"""Writes the answer gate's labelled web questions, `data/gate/gate_questions.jsonl`, from the bundled fixture KG.

    python scripts/make_gate_web_questions.py           # (re)writes data/gate/gate_questions.jsonl
    python scripts/make_gate_web_questions.py --check   # exit 1 if the committed file differs from a fresh build

KG template questions (held-out splits first, at most `--per-template` per template) with five pages each, rendered
from the fixture KG's records, in three cases (`gate_case`): the pages state the answer, do not state it, or state
a wrong value on an older page beside the right one. Questions of the sets the gate is reported on (the bundled
sample, `data/acceptance/kg_unseen.jsonl`) are never asked. The library is `training/gate_web_questions.py`; this is its
command line. The output is deterministic for a seed, so `--check` compares bytes.
"""
from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path


from training.api_templates import FixtureKG
from training.gate_web_questions import DEFAULT_OUT, gate_questions, reported_questions, to_jsonl

REPO = Path(__file__).resolve().parents[1]
REPORTED = ("data/sample/crag_sample.jsonl", "data/sample/crag_sample_task3.jsonl",
            "data/acceptance/kg_unseen.jsonl")  # the gate is reported on these: never fitted on their questions


def build(seed: int = 0, per_template: int = 2) -> str:
    """The JSONL text of the gate's questions (what `--check` compares with the committed file)."""
    return to_jsonl(gate_questions(FixtureKG.load(), seed=seed, per_template=per_template,
                                   exclude=reported_questions(REPO / p for p in REPORTED)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", default=str(REPO / DEFAULT_OUT))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--per-template", type=int, default=2, metavar="N", help="questions per template at most")
    parser.add_argument("--check", action="store_true", help="compare with --out instead of writing it")
    args = parser.parse_args(argv)

    text = build(args.seed, args.per_template)
    out = Path(args.out)
    if args.check:
        same = out.exists() and out.read_bytes() == text.encode("utf-8")
        print(f"{out}: {'up to date' if same else 'differs from a fresh build (run scripts/make_gate_web_questions.py)'}")
        return 0 if same else 1
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(text, encoding="utf-8")
    records = [json.loads(line) for line in text.splitlines()]
    cases = Counter((r["gate_case"], r["domain"]) for r in records)
    print(f"{len(records)} questions, {len(text.encode('utf-8'))} bytes written to {out}")
    for case in ("stated", "absent", "conflict"):
        print(f"  {case}: " + ", ".join(f"{d} {n}" for (c, d), n in sorted(cases.items()) if c == case))
    return 0


if __name__ == "__main__":
    sys.exit(main())
