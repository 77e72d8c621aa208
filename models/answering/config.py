"""Settings of the answer step's confidence signals (one section of a profile: `answering:`)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AnsweringConfig:
    """What the answer step measures about its own answers, for the verifier's calibrated gate (verify/gate.py).

    The greedy answer is what is returned; these only add evidence about it.
    """

    logprobs: bool = True  # the answer's (and each native query's) token log-probabilities go into the scores
    samples: int = 0  # k answers sampled beside the greedy one (one more batched request each); 0 = none
    sample_temperature: float = 0.7  # their temperature

    def __post_init__(self):
        if self.samples < 0:
            raise ValueError(f"answering.samples must be >= 0, got {self.samples}")
        if self.sample_temperature <= 0 and self.samples:
            raise ValueError("answering.samples needs answering.sample_temperature > 0 (greedy samples all agree)")
