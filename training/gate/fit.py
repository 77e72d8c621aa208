"""Fitting the calibrated answer gate (models/verify/gate.py) from saved runs, and measuring its calibration.

    rows = labelled_candidates(["outputs/gate-task2", ...], VerifierConfig())   # every checked answer, judged
    gate = fit(rows, fitted_on={...})                                         # a logistic regression
    table = reliability([gate.probability(r.features) for r in rows], [r.label for r in rows])

A row is one answer candidate of one question as its run's trace saved it (`predictions.jsonl`, each attempt's
verifier scores): its features (`gate.features`, with the rules' verdict replayed from the saved scores under the
profile's thresholds) and its label, 1 when the package's deterministic judge (`evaluation.answer_match`) finds
the candidate equal to the gold answer or an alternative, else 0 (an undecided match counts as wrong, as the
normalized judge scores an unjudged answer). Candidates the gate cannot keep (`gate.candidate_answer` is None:
refusals, empty spans, abstentions) are not rows: no gate answers them.

Scores compared here are per candidate (+1 kept and right, -1 kept and wrong, 0 refused), the quantity the gate
decides; a question's final answer also depends on the cascade (a refused KG answer sends the question on to the
web), so the end-to-end figures come from `local_evaluation.py` runs under each gate.
"""
from __future__ import annotations

import hashlib
import json
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from evaluation.answer_match import match_answer
from evaluation.run_dir import RunDir
from evaluation.sets import GATE, SETS, fit_sets
from models.paths import REPO_ROOT
from models.verify.config import VerifierConfig
from models.verify.gate import BREAK_EVEN, CalibratedGate, candidate_answer, features
from models.verify.verifier import decide_by_rules


# The package's own sets the CPU gate is fitted on (name -> (data file, task)): the catalogue's sets fitted on by
# the gate (`evaluation.sets`, `fit_for`). None shares a question (the same entity and gold answer, in any words:
# training/gate/held_out.py) with a set the catalogue says is held out from the gate; the reported fit sets are
# marked in-sample in docs/results.md. tests/verify/test_held_out.py checks both. GATE_KG_QUESTIONS is generated into
# the collection folder first (training/gate/kg_questions.py: KG template questions, unseen wordings first);
# data/gate/ holds template questions with five pages each rendered from the bundled KG.
GATE_KG_QUESTIONS = SETS["gate_kg"].data
FIT_SUITES = {name: (s.data, s.task) for name, s in fit_sets(GATE).items()}


def fit_set_digests() -> dict[str, str]:
    """The sha256 of each fit set's file as `make gate` reads it (the KG template set as it is generated), recorded
    in the fitted gate: a gate whose digests differ from these was fitted on other data and must be refitted."""
    from training.gate.kg_questions import gate_questions, rows_text

    digests = {}
    for name, (data, _task) in FIT_SUITES.items():
        if data == GATE_KG_QUESTIONS:
            text = rows_text(gate_questions()).encode("utf-8")
        else:
            text = (REPO_ROOT / data).read_bytes()
        digests[name] = hashlib.sha256(text).hexdigest()
    return digests


def stale_gate(path: str | Path) -> str | None:
    """Why the fitted gate at `path` was not fitted on the fit sets as they are now (`fit_set_digests`), or None
    when it was. A profile that answers through it needs it refitted (`make gate`)."""
    recorded = (json.loads(Path(path).read_text(encoding="utf-8")).get("fitted_on") or {}).get("fit_sets")
    if recorded is None:
        return f"{path} records no digest of its fit sets: it was fitted before they were recorded"
    changed = sorted(name for name, digest in fit_set_digests().items() if recorded.get(name) != digest)
    return f"{path} was fitted on other data for {', '.join(changed)}" if changed else None


@dataclass(frozen=True)
class Row:
    """One judged candidate: where it came from, its features, the rules' verdict and its label."""

    run: str
    question: str  # interaction id (cross-validation folds keep a question's candidates together)
    pathway: str
    answer: str
    features: Mapping[str, float]
    rules_accepted: bool
    label: int


def judged(query: str, gold: str, alternatives: Sequence[str], answer: str) -> int:
    """1 when `answer` matches the gold or an alternative by the deterministic judge, else 0."""
    return int(any(match_answer(query, g, answer).score == 1 for g in (gold, *alternatives) if g))


def labelled_candidates(run_dirs: Iterable[str | Path], config: VerifierConfig) -> list[Row]:
    """Every candidate the gate could keep in the runs' traces, with its features and label."""
    rows = []
    for run_dir in run_dirs:
        for record in RunDir(run_dir).records():
            alternatives = record.get("alt_ans") or []
            for attempt in (record.get("trace") or {}).get("attempts", []):
                scores = (attempt.get("verifier") or {}).get("scores") or {}
                answer = candidate_answer(scores)
                if answer is None:
                    continue
                rules = decide_by_rules(scores, config)
                rows.append(Row(str(run_dir), str(record.get("interaction_id")), attempt.get("pathway", ""), answer,
                                features(scores, rules.accepted, rules.stop), rules.accepted,
                                judged(record.get("query", ""), record.get("gold", ""), alternatives, answer)))
    return rows


def fit(rows: Sequence[Row], c: float = 1.0, fitted_on: Mapping | None = None) -> CalibratedGate:
    """A logistic regression (L2, strength 1/c) on standardised features; a constant feature gets weight 0.

    Raises:
        ValueError: no rows, or only one label (nothing to tell apart).
    """
    import numpy as np
    from sklearn.linear_model import LogisticRegression

    if not rows:
        raise ValueError("no labelled candidates to fit the gate on")
    if len({r.label for r in rows}) < 2:
        raise ValueError(f"all {len(rows)} candidates have label {rows[0].label}: nothing to calibrate")
    names = sorted({name for r in rows for name in r.features})
    x = np.array([[float(r.features.get(n, 0.0)) for n in names] for r in rows])
    y = np.array([r.label for r in rows])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    scale[scale == 0] = 1.0
    model = LogisticRegression(C=c, max_iter=5000).fit((x - mean) / scale, y)
    return CalibratedGate(tuple(names), tuple(round(float(v), 6) for v in mean), tuple(round(float(v), 6) for v in scale),
                          tuple(round(float(v), 6) for v in model.coef_[0]), round(float(model.intercept_[0]), 6),
                          dict(fitted_on or {}, candidates=len(rows), correct=int(y.sum()), c=c))


def cross_validated(rows: Sequence[Row], folds: int = 5, c: float = 1.0, seed: int = 0) -> list[float]:
    """Out-of-fold P(correct) for every row: questions are split into `folds` groups (a question's candidates
    stay together), each group predicted by a gate fitted on the others."""
    questions = sorted({(r.run, r.question) for r in rows})
    random.Random(seed).shuffle(questions)
    fold_of = {q: i % folds for i, q in enumerate(questions)}
    probabilities = [math.nan] * len(rows)
    for fold in range(folds):
        train = [r for r in rows if fold_of[(r.run, r.question)] != fold]
        test = [i for i, r in enumerate(rows) if fold_of[(r.run, r.question)] == fold]
        if not test:
            continue
        gate = fit(train, c)
        for i in test:
            probabilities[i] = gate.probability(rows[i].features)
    return probabilities


@dataclass(frozen=True)
class Reliability:
    """Calibration of predicted probabilities against labels: per bin (low, high, n, mean P, share correct), and
    the expected calibration error (the n-weighted mean gap between mean P and the share correct)."""

    bins: tuple[tuple[float, float, int, float, float], ...]
    ece: float
    n: int

    def lines(self) -> list[str]:
        out = ["| P(correct) bin | candidates | mean P | share correct |", "|---|---|---|---|"]
        for low, high, n, mean_p, share in self.bins:
            if n:
                out.append(f"| {low:.1f}–{high:.1f} | {n} | {mean_p:.2f} | {share:.2f} |")
        out.append(f"ECE {self.ece:.3f} over {self.n} candidates")
        return out


def reliability(probabilities: Sequence[float], labels: Sequence[int], bins: int = 10) -> Reliability:
    """Equal-width bins over [0, 1]; ECE = sum over bins of n/N * |mean P - share correct|."""
    rows = []
    total, gap = len(probabilities), 0.0
    for b in range(bins):
        low, high = b / bins, (b + 1) / bins
        inside = [(p, y) for p, y in zip(probabilities, labels)
                  if low <= p < high or (b == bins - 1 and p == 1.0)]
        n = len(inside)
        mean_p = sum(p for p, _ in inside) / n if n else 0.0
        share = sum(y for _, y in inside) / n if n else 0.0
        gap += n * abs(mean_p - share)
        rows.append((low, high, n, round(mean_p, 4), round(share, 4)))
    return Reliability(tuple(rows), round(gap / total, 4) if total else 0.0, total)


def candidate_score(kept: Sequence[bool], labels: Sequence[int]) -> dict:
    """Per-candidate CRAG score of a keep/refuse decision: +1 kept and right, -1 kept and wrong, 0 refused."""
    right = sum(1 for k, y in zip(kept, labels) if k and y)
    wrong = sum(1 for k, y in zip(kept, labels) if k and not y)
    n = len(labels)
    return {"n": n, "right": right, "wrong": wrong, "refused": n - right - wrong,
            "score": round((right - wrong) / n, 4) if n else 0.0}


def reader_keeps(row: Row) -> bool:
    """The reader gate's verdict on a saved candidate: the answer reader's P(right) >= 0.5 where it read it, the
    rules' verdict where it did not (`verifier.gate: reader`)."""
    return row.features.get("reader", 0.0) >= BREAK_EVEN if row.features.get("has_reader") else row.rules_accepted


def compare_gates(rows: Sequence[Row], probabilities: Sequence[float]) -> dict:
    """The rules gate, the calibrated gate (P >= 0.5) and, where the runs' traces carry the answer reader's P, the
    reader gate, side by side on the same candidates."""
    labels = [r.label for r in rows]
    compared = {"rules": candidate_score([r.rules_accepted for r in rows], labels),
                "calibrated": candidate_score([p >= BREAK_EVEN for p in probabilities], labels)}
    if any(r.features.get("has_reader") for r in rows):
        compared["reader"] = candidate_score([reader_keeps(r) for r in rows], labels)
    return compared
