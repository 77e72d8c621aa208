"""One answer before it is checked: the query's state, the model's raw output, the answer, its evidence."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from models.run import QueryState
from models.types import Chunk


@dataclass(frozen=True)
class Attempt:
    """An answer a pathway produced for one query, with the chunks it was generated from.

    `raw` is what the answer was read from: the model's output, a KG program's direct value, or None when there
    was no context to ask the model about (the verify step says so instead of "the model abstained"). `error`
    is why the model's output is missing, when the backend said (the request failed alone, or the deadline
    stopped its retry). `signals` is what the answer step measured about its output: `mean_logprob`,
    `min_logprob`, and `samples` (the sampled answers, cleaned), for the verifier's calibrated gate.
    """

    state: QueryState
    raw: str | None
    answer: str
    chunks: tuple[Chunk, ...] = ()
    error: str | None = None
    signals: Mapping[str, Any] = field(default_factory=dict)
