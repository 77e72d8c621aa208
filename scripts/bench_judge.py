"""How far the evaluation judge agrees with hand labels, on `data/judge/labels.jsonl`.

    python scripts/bench_judge.py [--judge normalized|rules] [--labels data/judge/labels.jsonl] [--all]

Scores every labelled (question, gold, prediction) as `local_evaluation.py` does (V3 exact and invalid
rules, then the judge; no LLM) and prints: agreement on the decided rows, the undecided (unjudged) share,
the confusion matrix, the same per source (sample, dev, task2, task3, hard) and for the held-out rows
(written after the judge's rules were frozen), all and per batch, every disagreement, and every
row labelled incorrect that the judge called correct. With --all it also lists the undecided rows.
Exit status 0 when the bars hold (agreement >= 95 % on decided rows, undecided <= 10 %, no hard row
called correct when labelled incorrect), 1 otherwise, so CI can run it.
"""
from __future__ import annotations

import argparse
import sys


from evaluation.judge import RulesJudge
from evaluation.judge_agreement import (LABELS, LABELS_PATH, MAX_UNDECIDED, MIN_AGREEMENT, UNJUDGED,
                                         Agreement, load_labels, measure)
from evaluation.normalized_judge import NormalizedJudge

JUDGES = {"normalized": NormalizedJudge, "rules": RulesJudge}


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--judge", choices=tuple(JUDGES), default="normalized")
    parser.add_argument("--labels", default=str(LABELS_PATH), help="labelled rows (JSONL)")
    parser.add_argument("--all", action="store_true", help="also list the undecided rows")
    return parser.parse_args(argv)


def summary_line(name: str, result: Agreement) -> str:
    n = len(result.rows)
    return (f"{name:<8} rows {n:>4}  decided {result.n_decided:>4}  agreement {result.agreement:6.1%}  "
            f"undecided {result.undecided:6.1%}  false passes {len(result.false_passes())}")


def confusion_table(result: Agreement) -> list[str]:
    said = (*LABELS, UNJUDGED)
    corner = "label \\ judge"
    lines = [f"{corner:<16}" + "".join(f"{s:>12}" for s in said)]
    for label in LABELS:
        lines.append(f"{label:<16}" + "".join(f"{result.confusion[(label, s)]:>12}" for s in said))
    return lines


def row_line(row, verdict) -> str:
    return (f"  [{row.source}/{row.origin}] q={row.query!r} gold={row.gold!r} pred={row.prediction!r}\n"
            f"      label {row.label} ({row.reason}); judge {verdict.outcome} by {verdict.decided_by}: "
            f"{verdict.explanation}")


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    result = measure(load_labels(args.labels), JUDGES[args.judge]())
    print(f"judge {args.judge} on {args.labels}")
    print(summary_line("all", result))
    print()
    print("\n".join(confusion_table(result)))
    print("\nper source:")
    for source, part in result.by_source().items():
        print(summary_line(source, part))
    if result.heldout().rows:
        print(summary_line("heldout", result.heldout()))
        for batch in result.heldout_batches():  # each batch was measured before any rule changed for it
            print(summary_line(f"  {batch}", result.heldout(batch)))
    false_passes = result.false_passes()
    print(f"\nlabelled incorrect, judged correct ({len(false_passes)}; hard rows must be 0):")
    print("\n".join(row_line(*pair) for pair in false_passes) or "  none")
    disagreements = [pair for pair in result.disagreements() if pair not in false_passes]
    print(f"\nother disagreements ({len(disagreements)}):")
    print("\n".join(row_line(*pair) for pair in disagreements) or "  none")
    if args.all:
        undecided = [(row, v) for row, v in zip(result.rows, result.verdicts) if v.unjudged]
        print(f"\nundecided ({len(undecided)}):")
        print("\n".join(row_line(*pair) for pair in undecided) or "  none")
    ok = result.passes()
    print(f"\nbars (agreement >= {MIN_AGREEMENT:.0%}, undecided <= {MAX_UNDECIDED:.0%}, no hard false pass): "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
