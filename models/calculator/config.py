"""Settings of the numerical calculator (one profile section, `calculator`). Off by default."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class CalculatorConfig:
    enabled: bool = False
    tasks: tuple[int, ...] = (1, 2, 3)  # tasks in which it runs when enabled
    samples: int = 5  # expressions sampled per question from one prompt; the majority value wins (ElectricSheep: 5)
    temperature: float = 0.7  # their sampling temperature
    prompt: str = "calc_expression"  # prompts/<name>.txt
    max_new_tokens: int = 64
    max_reference_chars: int = 6000  # references shown to the expression writer (ElectricSheep: 6000)
    min_remaining_s: float = 2.0  # not started with less time than this left in the batch
    # Limits of the expression language (models.calculator.interpreter.Limits).
    max_chars: int = 500
    max_depth: int = 40
    max_exponent: float = 100.0
    max_magnitude: float = 1e100
