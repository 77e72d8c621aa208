"""Replaying the verifier over saved traces under other thresholds (for scripts/sweep_verifier.py).

A trace keeps, for each pathway that produced a candidate answer, the verifier's scores. `replay` runs the
pipeline's rule again with `decide`: the first pathway whose candidate is accepted (and not "i don't know")
answers; otherwise the last pathway's decision does. No model is loaded: only the saved scores are read.
"""
from __future__ import annotations

import dataclasses
import itertools
from typing import Any, Iterable, Mapping, Sequence

from models.types import IDK
from models.verify.config import VerifierConfig
from models.verify.verifier import decide


def replay(record: Mapping[str, Any], config: VerifierConfig) -> str:
    """The answer `record`'s trace would have given under `config` (its saved prediction when it has no
    verifier scores, e.g. a run from before the verifier)."""
    attempts = [a for a in (record.get("trace") or {}).get("attempts") or [] if (a.get("verifier") or {}).get("scores")]
    if not attempts:
        return record.get("prediction", IDK)
    answer = IDK
    for attempt in attempts:
        decision = decide(attempt["verifier"]["scores"], config)
        answer = decision.answer
        if decision.accepted and decision.answer != IDK:
            return answer
    return answer


def grid(base: VerifierConfig, axes: Mapping[str, Sequence[Any]]) -> Iterable[VerifierConfig]:
    """Every combination of the values in `axes` (field name -> values) over `base`."""
    names = list(axes)
    for values in itertools.product(*(axes[n] for n in names)):
        yield dataclasses.replace(base, **dict(zip(names, values)))
