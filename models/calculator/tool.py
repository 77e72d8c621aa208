"""The calculator as a pipeline stage: the LLM writes expressions, the safe interpreter evaluates them,
the majority value wins (ElectricSheep §4.3, where the expressions went to Python's `eval`).

Several samples per question vote: `samples` completions drawn at `temperature` from one prompt
(`GenerationRequest.n`, the mechanism every sampled stage uses), not one prompt variant per vote.
Each sample fails alone (an unparsable expression is a rejected vote, not an error), and a question
without any valid expression gets no calculation: the reasoning step then simply has no calculator line.
"""
from __future__ import annotations

import logging
import re
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

from models.calculator.config import CalculatorConfig
from models.calculator.errors import CalculatorError
from models.calculator.interpreter import Limits, evaluate, format_number
from models.deadline import Deadline
from models.llm.generator import GenerationRequest, Generator, completions_of
from models.llm.prompts import PromptLibrary

log = logging.getLogger(__name__)

_FENCE = re.compile(r"```(?:python|py)?", re.IGNORECASE)
_LABEL = re.compile(r"^\s*(?:expression|answer|calculation)\s*:\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Calculation:
    """The winning value of one question's expressions.

    Attributes:
        expression: the first expression that produced the winning value.
        value: the value, formatted (`format_number`).
        votes: how many samples produced that value.
        samples: how many samples were generated.
        rejected: the calculator's error for every sample that did not evaluate.
    """

    expression: str
    value: str
    votes: int
    samples: int
    rejected: tuple[str, ...] = ()

    def as_trace(self) -> dict:
        return {"expression": self.expression, "value": self.value, "votes": self.votes, "samples": self.samples,
                "rejected": list(self.rejected)}

    def as_reference(self) -> str:
        """The line the reasoning prompt shows."""
        return f"{self.expression} = {self.value} ({self.votes} of {self.samples} samples agree)"


def extract_expression(completion: str) -> str:
    """The expression in a completion: code fences and an "Expression:" label removed, the first
    non-empty line, and anything after an `=` (a result the model computed itself) dropped."""
    text = _FENCE.sub("\n", completion or "")
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    line = _LABEL.sub("", line).strip().strip("`").strip()
    return line.split("=", 1)[0].strip()


def majority(expressions: Sequence[str], limits: Limits) -> tuple[str, str, int, tuple[str, ...]] | None:
    """(expression, value, votes, rejections) of the most frequent value; ties go to the earliest sample.
    None when no expression evaluates."""
    values: list[tuple[str, str]] = []
    rejected: list[str] = []
    for expression in expressions:
        if not expression:
            continue
        try:
            values.append((expression, format_number(evaluate(expression, limits))))
        except CalculatorError as error:
            rejected.append(error.reason)
    if not values:
        return None
    counts = Counter(value for _, value in values)
    best = max(counts.values())
    expression, value = next((e, v) for e, v in values if counts[v] == best)
    return expression, value, best, tuple(rejected)


class NumericalCalculator:
    """Writes and evaluates expressions for a batch of questions."""

    def __init__(self, config: CalculatorConfig, generator: Generator, prompts: PromptLibrary | None = None):
        if config.samples < 1:
            raise ValueError(f"calculator.samples must be at least 1, got {config.samples}")
        self.config = config
        self.generator = generator
        self.template = (prompts or PromptLibrary()).get(config.prompt)
        self.limits = Limits(max_chars=config.max_chars, max_depth=config.max_depth,
                             max_exponent=config.max_exponent, max_magnitude=config.max_magnitude)

    def _references(self, references: Sequence[str]) -> str:
        if not references:
            return "References: none"
        text = "References:\n" + "\n".join(f"- {r.strip()}" for r in references if r.strip())
        return text[:self.config.max_reference_chars]

    def calculate(self, queries: Sequence[str], query_times: Sequence[str], references: Sequence[Sequence[str]],
                  deadline: Deadline | None = None) -> list[Calculation | None]:
        """One `Calculation` (or None) per question.

        Args:
            queries, query_times: the questions and their times.
            references: per question, the reference texts (chunks, Markdown tables, facts).
            deadline: the batch deadline; nothing is generated with less than `min_remaining_s` left.
        """
        results: list[Calculation | None] = [None] * len(queries)
        if not queries or (deadline is not None and deadline.remaining() < self.config.min_remaining_s):
            return results
        n = self.config.samples
        requests = [GenerationRequest(self.template.render(references=self._references(refs), query=query,
                                                           query_time=time),
                                      max_new_tokens=self.config.max_new_tokens, stop=("\n\n",), n=n,
                                      temperature=self.config.temperature if n > 1 else None)
                    for query, time, refs in zip(queries, query_times, references)]
        try:
            completions = self.generator.generate(requests, deadline=deadline)
        except Exception:  # the calculator is optional: a failing backend costs its lines, not the batch
            log.exception("calculator generation failed; no calculations for this batch")
            return results
        for index in range(len(queries)):
            expressions = [extract_expression(c.text) for c in completions_of(completions, index)]
            winner = majority(expressions, self.limits)
            if winner is not None:
                expression, value, votes, rejected = winner
                results[index] = Calculation(expression, value, votes, len(expressions), rejected)
        return results
