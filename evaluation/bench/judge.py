"""How far an evaluation judge agrees with hand labels, printed as scripts/bench_judge.py reports it (the measures
are `evaluation/experiments/judge_agreement.py`).

`bench_judge` scores every labelled row with the judge named (`JUDGES`), then prints the agreement on decided rows
and the undecided share (`summary_line`), the confusion matrix (`confusion_table`), the same per source and for the
held-out batches, every false pass and disagreement (`row_line`), and whether the thresholds hold; it returns the exit
status, 0 when they do.
"""
from __future__ import annotations

from evaluation.judge import RulesJudge
from evaluation.experiments.judge_agreement import (LABELS, LABELS_PATH, MAX_UNDECIDED, MIN_AGREEMENT, UNJUDGED,
                                         Agreement, load_labels, measure)
from evaluation.normalized_judge import NormalizedJudge

JUDGES = {"normalized": NormalizedJudge, "rules": RulesJudge}


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


def bench_judge(judge: str = "normalized", labels: str = str(LABELS_PATH), show_undecided: bool = False) -> int:
    """Measures judge `judge` on the labelled rows of `labels` and prints the report; 0 when the thresholds hold, else 1.
    `show_undecided` also lists the undecided rows."""
    result = measure(load_labels(labels), JUDGES[judge]())
    print(f"judge {judge} on {labels}")
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
    if show_undecided:
        undecided = [(row, v) for row, v in zip(result.rows, result.verdicts) if v.unjudged]
        print(f"\nundecided ({len(undecided)}):")
        print("\n".join(row_line(*pair) for pair in undecided) or "  none")
    ok = result.passes()
    print(f"\nbars (agreement >= {MIN_AGREEMENT:.0%}, undecided <= {MAX_UNDECIDED:.0%}, no hard false pass): "
          f"{'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1
