"""Fits the calibrated answer gate from saved runs, or measures a fitted gate on other runs.

    python scripts/fit_gate.py RUN_DIR [RUN_DIR ...] --output models/gates/cpu.json    # fit and write the gate
    python scripts/fit_gate.py --gate models/gates/cpu.json RUN_DIR [RUN_DIR ...]      # held-out calibration
    python scripts/fit_gate.py --collect outputs/gate-fit --output models/gates/cpu.json   # `make gate`

A run dir is what `local_evaluation.py --output-dir DIR` wrote (its predictions.jsonl holds every answer
candidate's verifier scores in the trace, and the gold answers). Fitting prints the 5-fold cross-validated
reliability table (folds by question) with its ECE and the per-candidate score of the rules gate and the
calibrated gate side by side, then fits on every candidate and writes the gate (feature names, centring, scale,
coefficients, intercept, what it was fitted on, the cross-validated figures) as JSON for `verifier.gate_path`.
`--gate` instead prints the same table for a fitted gate on runs it never saw. The rules' verdict is replayed
under the profile's `verifier` thresholds (`--profile`). `--collect DIR` first runs `local_evaluation.py` (rules
gate) on the package's own fit sets (`evaluation.gate_fit.FIT_SUITES`: 432 KG template questions generated into
DIR by `training/gate_kg_questions.py` (Task 2), the 273 web questions of `data/gate/` (Task 1), the KG wordings,
checkable and public-SQL acceptance sets; never a set the README reports on) into `DIR/<set>/`, skipping those
already finished, and fits on them. The library is `evaluation/gate_fit.py`.
"""
from __future__ import annotations

import argparse
import subprocess
import sys
from dataclasses import replace
from collections import Counter
from pathlib import Path


from evaluation.gate_fit import (FIT_SUITES, GATE_KG_QUESTIONS, compare_gates, cross_validated, fit,
                                 labelled_candidates, reliability)
from evaluation.runner import PREDICTIONS_FILE
from models.config import REPO_ROOT, load_config
from models.verify.gate import CalibratedGate


def _print_scores(title: str, figures: dict) -> None:
    print(f"{title}: per-candidate score (+1 kept and right, -1 kept and wrong, 0 refused)")
    for gate, s in figures.items():
        print(f"  {gate:10s} {s['right']:4d} right {s['wrong']:4d} wrong {s['refused']:4d} refused of {s['n']:4d}: "
              f"{s['score']:+.3f}")


def collect(root: Path, profile: str | None) -> list[str]:
    """Runs (or resumes) the rules-gate evaluation of every fit set into `root/<set>/`; returns the run dirs."""
    runs = []
    root.mkdir(parents=True, exist_ok=True)
    if not (root / GATE_KG_QUESTIONS).is_file():
        from training.gate_kg_questions import gate_questions, write_rows

        write_rows(gate_questions(), root / GATE_KG_QUESTIONS)
    for name, (data, task) in FIT_SUITES.items():
        data = str(root / data) if data == GATE_KG_QUESTIONS else data
        out = root / name
        if not (out / "summary.json").is_file():
            cmd = [sys.executable, str(REPO_ROOT / "local_evaluation.py"), "--task", str(task), "--data", data,
                   "--output-dir", str(out), "--set", "verifier.gate=rules"] + (["--profile", profile] if profile else [])
            print(f"[{name}] {' '.join(cmd)}", flush=True)
            out.mkdir(parents=True, exist_ok=True)
            with open(root / f"{name}.log", "w", encoding="utf-8") as log:
                if subprocess.run(cmd, cwd=REPO_ROOT, stdout=log, stderr=subprocess.STDOUT).returncode != 0:
                    raise SystemExit(f"[{name}] local_evaluation failed; see {root / f'{name}.log'}")
        runs.append(str(out))
    return runs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("runs", nargs="*", metavar="RUN_DIR", help="local_evaluation.py output dirs")
    parser.add_argument("--collect", metavar="DIR", help="first evaluate the package's fit sets into DIR/<set>/ and "
                                                          "fit on them (with the RUN_DIRs given)")
    parser.add_argument("--output", help="where to write the fitted gate (JSON)")
    parser.add_argument("--gate", help="measure this fitted gate on the runs instead of fitting one")
    parser.add_argument("--profile", default=None, help="whose verifier thresholds the rules gate replays "
                                                        "(default $CRAG_PROFILE or cpu)")
    parser.add_argument("--c", type=float, nargs="+", default=[0.03, 0.1, 0.3, 1.0],
                        help="inverse L2 strengths tried; the one with the best cross-validated per-candidate score "
                             "(then the lower ECE) is fitted")
    parser.add_argument("--folds", type=int, default=5)
    args = parser.parse_args(argv)
    if bool(args.output) == bool(args.gate):
        parser.error("give --output (fit) or --gate (measure), not both")
    if args.collect:
        args.runs = collect(Path(args.collect), args.profile) + list(args.runs)
    if not args.runs:
        parser.error("no run dirs (give RUN_DIRs or --collect DIR)")
    missing = [r for r in args.runs if not (Path(r) / PREDICTIONS_FILE).is_file()]
    if missing:
        parser.error(f"no {PREDICTIONS_FILE} in {missing}")
    rows = labelled_candidates(args.runs, load_config(args.profile).verifier)
    for run, n in Counter(r.run for r in rows).items():
        correct = sum(r.label for r in rows if r.run == run)
        print(f"{run}: {n} candidates, {correct} right")
    by_pathway = Counter(r.pathway for r in rows)
    print("by pathway: " + ", ".join(f"{p} {n}" for p, n in by_pathway.most_common()))
    labels = [r.label for r in rows]
    if args.gate:
        gate = CalibratedGate.load(args.gate)
        probabilities = [gate.probability(r.features) for r in rows]
        print("\n".join(reliability(probabilities, labels).lines()))
        _print_scores("held out", compare_gates(rows, probabilities))
        return 0
    tried = {}
    for c in args.c:
        probabilities = cross_validated(rows, args.folds, c)
        tried[c] = (probabilities, reliability(probabilities, labels), compare_gates(rows, probabilities))
        print(f"C={c:g}: cross-validated ECE {tried[c][1].ece:.3f}, per-candidate score "
              f"{tried[c][2]['calibrated']['score']:+.3f} (rules {tried[c][2]['rules']['score']:+.3f})")
    best = max(args.c, key=lambda c: (tried[c][2]["calibrated"]["score"], -tried[c][1].ece))
    probabilities, table, figures = tried[best]
    print(f"{args.folds}-fold cross-validated (folds by question), C={best:g}:")
    print("\n".join(table.lines()))
    _print_scores("cross-validated", figures)
    gate = fit(rows, best, {"runs": [str(r) for r in args.runs], "by_pathway": dict(by_pathway)})
    gate = replace(gate, metrics={"cv_folds": args.folds, "cv_ece": table.ece, "cv_scores": figures})
    gate.save(args.output)
    heaviest = sorted(zip(gate.names, gate.coef), key=lambda p: -abs(p[1]))[:10]
    print("largest coefficients (standardised): " + ", ".join(f"{n} {c:+.2f}" for n, c in heaviest))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
