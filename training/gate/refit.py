"""The gate's fit from end to end, as `make gate` and scripts/fit_gate.py run it (the fitting itself is
`training/gate/fit.py`).

`collect` runs (or resumes) the rules-gate evaluation of every fit set (`training.gate.fit.FIT_SUITES`) into
`DIR/<set>/`; `fit_gate` reads the runs' answer candidates and either measures a fitted gate on them (the
reliability table and the per-candidate scores of the rules and calibrated gates) or fits one: every inverse L2
strength cross-validated, the best one's table printed, the gate fitted on every candidate and written as JSON.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import replace
from pathlib import Path

from evaluation.cli import UsageError
from training.gate.fit import (FIT_SUITES, GATE_KG_QUESTIONS, compare_gates, cross_validated, fit, fit_set_digests,
                               labelled_candidates, reliability)
from evaluation.experiments.grid import Outcome, run_cell
from evaluation.sets import Suite
from evaluation.run_dir import RunDir
from models.config import load_config
from models.verify.gate import CalibratedGate


def _print_scores(title: str, figures: dict) -> None:
    print(f"{title}: per-candidate score (+1 kept and right, -1 kept and wrong, 0 refused)")
    for gate, s in figures.items():
        print(f"  {gate:10s} {s['right']:4d} right {s['wrong']:4d} wrong {s['refused']:4d} refused of {s['n']:4d}: "
              f"{s['score']:+.3f}")


def collect(root: Path, profile: str | None, reader: str = "") -> list[str]:
    """Runs (or resumes) the rules-gate evaluation of every fit set into `root/<set>/` as grid cells
    (`evaluation.experiments.grid.run_cell`: a finished set is read, not run again); returns the run dirs.
    `reader` (a trained answer reader's folder, "" = the profile's) puts its P(right) into the candidates' scores, so
    that one collection fits a gate with the reader's feature and one without (`without`).

    Raises:
        SystemExit: a set's evaluation failed (its log is named).
    """
    runs = []
    root.mkdir(parents=True, exist_ok=True)
    if not (root / GATE_KG_QUESTIONS).is_file():
        from training.gate.kg_questions import gate_questions, write_rows

        write_rows(gate_questions(), root / GATE_KG_QUESTIONS)
    for name, (data, task) in FIT_SUITES.items():
        suite = Suite(str(root / data) if data == GATE_KG_QUESTIONS else data, task)
        out = root / name
        overrides = {"verifier.gate": "rules", **({"verifier.reader": reader} if reader else {})}
        if run_cell(name, suite, profile, out, overrides=overrides) is Outcome.FAILED:
            raise SystemExit(f"[{name}] local_evaluation failed; see {root / f'{name}.log'}")
        runs.append(str(out))
    return runs


def fit_gate(runs: list[str], *, collect_dir: str | None = None, output: str | None = None,
             gate_path: str | None = None, profile: str | None = None, strengths: list[float] = (0.03, 0.1, 0.3, 1.0),
             folds: int = 5, without: tuple[str, ...] = (), reader: str = "") -> int:
    """Fits a gate on `runs` (after collecting the fit sets into `collect_dir`, when given), choosing among the
    inverse L2 `strengths` by `folds`-fold cross-validation, and writes it to `output`; or measures the fitted gate
    at `gate_path` on them. `without` names scores the gate must not read (e.g. "reader": the answer reader's
    P(right) and its `has_reader` indicator are left out of every row); `reader` is the answer reader the
    collection reads with (`collect`). Prints the tables and returns 0.

    Raises:
        UsageError: not exactly one of `output` and `gate_path`, no run dir, or a run dir without predictions.
    """
    if bool(output) == bool(gate_path):
        raise UsageError("give --output (fit) or --gate (measure), not both")
    if collect_dir:
        runs = collect(Path(collect_dir), profile, reader) + list(runs)
    if not runs:
        raise UsageError("no run dirs (give RUN_DIRs or --collect DIR)")
    missing = [r for r in runs if not RunDir(r).has_predictions()]
    if missing:
        raise UsageError(f"no {RunDir.PREDICTIONS} in {missing}")
    rows = labelled_candidates(runs, load_config(profile).verifier)
    if without:
        dropped = set(without) | {f"has_{name}" for name in without}
        rows = [replace(r, features={k: v for k, v in r.features.items() if k not in dropped}) for r in rows]
    for run, n in Counter(r.run for r in rows).items():
        correct = sum(r.label for r in rows if r.run == run)
        print(f"{run}: {n} candidates, {correct} right")
    by_pathway = Counter(r.pathway for r in rows)
    print("by pathway: " + ", ".join(f"{p} {n}" for p, n in by_pathway.most_common()))
    labels = [r.label for r in rows]
    if gate_path:
        gate = CalibratedGate.load(gate_path)
        probabilities = [gate.probability(r.features) for r in rows]
        print("\n".join(reliability(probabilities, labels).lines()))
        _print_scores("held out", compare_gates(rows, probabilities))
        return 0
    tried = {}
    for c in strengths:
        probabilities = cross_validated(rows, folds, c)
        tried[c] = (probabilities, reliability(probabilities, labels), compare_gates(rows, probabilities))
        print(f"C={c:g}: cross-validated ECE {tried[c][1].ece:.3f}, per-candidate score "
              f"{tried[c][2]['calibrated']['score']:+.3f} (rules {tried[c][2]['rules']['score']:+.3f})")
    best = max(strengths, key=lambda c: (tried[c][2]["calibrated"]["score"], -tried[c][1].ece))
    probabilities, table, figures = tried[best]
    print(f"{folds}-fold cross-validated (folds by question), C={best:g}:")
    print("\n".join(table.lines()))
    _print_scores("cross-validated", figures)
    gate = fit(rows, best, {"runs": [str(r) for r in runs], "by_pathway": dict(by_pathway),
                            "fit_sets": fit_set_digests(), "without": list(without)})
    gate = replace(gate, metrics={"cv_folds": folds, "cv_ece": table.ece, "cv_scores": figures})
    gate.save(output)
    heaviest = sorted(zip(gate.names, gate.coef), key=lambda p: -abs(p[1]))[:10]
    print("largest coefficients (standardised): " + ", ".join(f"{n} {c:+.2f}" for n, c in heaviest))
    print(f"wrote {output}")
    return 0
