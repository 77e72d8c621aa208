"""The answer gate: answer only when right is likelier than wrong.

CRAG scores +1 / 0 / -1, so an answer pays exactly when its chance of being right is above one half. Three gates
decide, over the same verifier scores (`verifier.gate`):

- `rules`: the hand thresholds of `verifier.decide` (every check must pass);
- `reader`: the answer reader (verify/reader.py, a cross-encoder trained by `make verifier`) reads the question,
  the candidate and its evidence passage, and the answer is kept iff its P(right) >= 0.5; a candidate it did not
  read (a pathway it does not read, no time left) keeps the rules' decision;
- `calibrated`: a logistic regression turns the candidate's trace features (below) into P(correct), fitted on
  labelled runs by `python scripts/fit_gate.py`, and the answer is kept iff P >= 0.5, the metric's break-even
  point (not a tuned threshold). The fitted model is a small JSON file the profile names (`verifier.gate_path`):
  feature names, their centring and scale, one coefficient each, an intercept, and what it was fitted on.

The calibrated gate only chooses between the candidate the checks produced (the span the question asks for, a
value computed from the evidence, a KG or SQL value) and "i don't know". It never answers where the checks found
no answer of the asked kind: a refusal, an empty span, a comparison that could not be computed, an answer with
nothing checkable, a model that abstained, or "invalid question" (those keep the rules' decision).

Features (`features`): the rules' own verdict and the check that stopped it, the verifier's scores (lexical,
chunk and sentence support, the whole sentence's support, question overlap, similarity), the answer's mean and
minimum token log-probability and the KG program's, the share of sampled answers that agree, the source
(pathway), the answer kind, whether it was computed in code, how many evidence texts state it, the domain, the
KG outcome, static/dynamic when ElectricSheep's attribute predictor ran, and the answer reader's P(right) where it
read the candidate. A missing score is 0 with a
`has_<name>` indicator, so "not measured" is never read as "measured low".
"""
from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

from models.pathways import KGOutcome, declared, named
from models.types import DOMAINS, IDK, INVALID
from models.verify.decision import Stop
from models.verify.span import KINDS as ANSWER_KINDS

GATES = ("rules", "calibrated", "reader")
BREAK_EVEN = 0.5  # +1 right, -1 wrong: an answer pays iff P(correct) > 1/2

KINDS = tuple(kind.name for kind in ANSWER_KINDS)
KG_OUTCOMES = KGOutcome.RAN  # a program that ran: what it found (or that it found nothing) is evidence
SCORES = ("lexical", "chunk", "sentence", "full_chunk", "overlap", "similarity")
# the rules' checks that stop an answer at a threshold (the candidate exists; the gate may still keep it)
THRESHOLD_STOPS = (Stop.LEXICAL, Stop.ALONE, Stop.SENTENCE, Stop.OVERLAP, Stop.SIMILARITY, Stop.RESTATEMENT,
                   Stop.CHOICE)
PATHWAY_FEATURE = "source="  # the one-hot features of the answer's pathway, by its declared name
LOGPROB_FLOOR = -10.0  # a token log-probability below this says no more than "very unlikely"


def candidate_answer(scores: Mapping[str, Any]) -> str | None:
    """The answer the gate may keep for these scores, or None where the checks found none to keep."""
    answer = (scores.get("candidate") or "").strip()
    computed = scores.get("computed")
    if computed is not None:
        return computed.get("answer") or None
    if not answer or answer in (IDK, INVALID) or scores.get("refusal"):
        return None
    if "span" in scores and not scores["span"]:
        return None
    if not scores.get("claims"):
        return None
    return answer


def _logprob(value) -> float:
    return max(LOGPROB_FLOOR, min(0.0, float(value))) / -LOGPROB_FLOOR + 1.0  # -10..0 -> 0..1


def _one_hot(out: dict, name: str, value, values: Sequence[str]) -> None:
    for v in values:
        out[f"{name}={v}"] = float((value or "") == v)


def _measured(out: dict, name: str, value, scale=float) -> None:
    """`name` (0 when not measured) and `has_<name>`, so a missing score never reads as a low one."""
    out[f"has_{name}"] = float(value is not None)
    out[name] = scale(value) if value is not None else 0.0


def _capped(value, cap: float) -> float:
    return min(float(value or 0), cap) / cap


def features(scores: Mapping[str, Any], rules_accepted: bool, rules_stop: Stop | str | None = None
             ) -> dict[str, float]:
    """The gate's inputs for one candidate: its verifier scores (as saved in the trace), the rules' verdict and the
    check that decided it (`Stop`)."""
    out: dict[str, float] = {"rules_accepted": float(bool(rules_accepted))}
    for stop in THRESHOLD_STOPS:
        out[f"stop_{stop.value}"] = float(not rules_accepted and rules_stop == stop)
    _one_hot(out, "source", scores.get("source"), [p.name for p in declared()])  # the pathway (models/pathways.py)
    _one_hot(out, "kind", scores.get("kind"), KINDS)
    _one_hot(out, "domain", scores.get("domain"), DOMAINS)
    _one_hot(out, "kg_outcome", scores.get("kg_outcome"), KG_OUTCOMES)
    out["computed"] = float(scores.get("computed") is not None)
    for name in SCORES:
        _measured(out, name, scores.get(name))
    for name in ("mean_logprob", "min_logprob", "query_logprob"):
        _measured(out, name, scores.get(name), _logprob)
    _measured(out, "agreement", scores.get("agreement"))
    _measured(out, "reader", scores.get("reader"))  # the answer reader's P(right) (verify/reader.py)
    attribute = scores.get("attribute")
    _measured(out, "dynamic", None if attribute is None else attribute == "dynamic")
    out["novel"] = _capped(scores.get("novel"), 5)
    out["claims"] = _capped(scores.get("claims"), 5)
    out["stated_by"] = _capped(scores.get("stated_by"), 5)
    out["answer_words"] = _capped(len(str(candidate_answer(scores) or "").split()), 10)
    out["not_alone"] = float(scores.get("alone") is False)
    out["choice"] = float(bool(scores.get("choice")))
    out["kg_repaired"] = float(bool(scores.get("kg_repaired")))  # a program check changed the program
    return out


@dataclass(frozen=True)
class CalibratedGate:
    """A fitted logistic regression over `features`: P(correct) = sigmoid(intercept + sum coef * (x - mean) / scale).

    Attributes:
        names: the feature names, in coefficient order (a feature the model lacks counts as 0; one it does not
            know is ignored, so an older gate file keeps working when a feature is added).
        mean, scale: each feature's centring and scale on the fitting data.
        coef, intercept: the fitted model.
        fitted_on: what it was fitted on (run directories, counts), for the reader.
        metrics: the fit's held-out figures (ECE, scores), for the reader.
    """

    names: tuple[str, ...]
    mean: tuple[float, ...]
    scale: tuple[float, ...]
    coef: tuple[float, ...]
    intercept: float
    fitted_on: Mapping[str, Any] = field(default_factory=dict)
    metrics: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        if not (len(self.names) == len(self.mean) == len(self.scale) == len(self.coef)):
            raise ValueError("a gate needs one mean, scale and coefficient per feature name")
        for name in self.names:  # a pathway renamed or never loaded would silently weigh 0: refuse it by name
            if name.startswith(PATHWAY_FEATURE):
                named(name[len(PATHWAY_FEATURE):])

    def probability(self, feature_values: Mapping[str, float]) -> float:
        z = self.intercept
        for name, mean, scale, coef in zip(self.names, self.mean, self.scale, self.coef):
            z += coef * (float(feature_values.get(name, 0.0)) - mean) / (scale or 1.0)
        return 1.0 / (1.0 + math.exp(-max(-60.0, min(60.0, z))))

    def answers(self, probability: float) -> bool:
        return probability >= BREAK_EVEN

    def contributions(self, feature_values: Mapping[str, float], top: int = 4) -> list[tuple[str, float]]:
        """The features that moved P most for one candidate (name, log-odds), for the trace."""
        parts = [(name, coef * (float(feature_values.get(name, 0.0)) - mean) / (scale or 1.0))
                 for name, mean, scale, coef in zip(self.names, self.mean, self.scale, self.coef)]
        return sorted(parts, key=lambda p: -abs(p[1]))[:top]

    def to_dict(self) -> dict:
        return {"kind": "logistic_regression", "break_even": BREAK_EVEN, "intercept": self.intercept,
                "features": [{"name": n, "mean": m, "scale": s, "coef": c}
                             for n, m, s, c in zip(self.names, self.mean, self.scale, self.coef)],
                "fitted_on": dict(self.fitted_on), "metrics": dict(self.metrics)}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "CalibratedGate":
        rows: Sequence[Mapping] = data["features"]
        return cls(tuple(r["name"] for r in rows), tuple(float(r["mean"]) for r in rows),
                   tuple(float(r["scale"]) for r in rows), tuple(float(r["coef"]) for r in rows),
                   float(data["intercept"]), data.get("fitted_on", {}), data.get("metrics", {}))

    def save(self, path: str | Path) -> None:
        Path(path).parent.mkdir(parents=True, exist_ok=True)
        Path(path).write_text(json.dumps(self.to_dict(), indent=1) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: str | Path) -> "CalibratedGate":
        """The gate saved at `path`; a missing or malformed file is a ValueError naming it and the refit command."""
        try:
            return cls.from_dict(json.loads(Path(path).read_text(encoding="utf-8")))
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"verifier.gate_path {str(path)!r} is not a fitted gate ({type(exc).__name__}: {exc}); "
                             "fit one with `python scripts/fit_gate.py RUN_DIR ... --output PATH`, or set "
                             "verifier.gate: rules") from exc
