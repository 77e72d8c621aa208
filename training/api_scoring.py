"""Scores one API program for one template example: does it compile, run without error, and give the answer?

Used twice, the same way: by `scripts/make_api_data.py` on each target program (an example is kept only when its
own program scores correct) and by `scripts/eval_api_generation.py` on each generated program. The program is
cleaned, compiled and executed exactly as `KGPathway.evidence` does (same client, limits and entity matcher),
but the stages are kept apart so that the three rates can be counted.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

from models.kg.apis import compile_program
from models.kg.executor import execute
from models.kg.language.errors import KGError
from models.kg.pathway import clean_program
from models.types import parse_query_time
from training.api_templates import TemplateExample, check_answer, final_answer

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ProgramScore:
    compiled: bool
    executed: bool  # ran to the end with no API error and no statement error
    correct: bool
    answer: tuple = ()
    error: str = ""


def score_program(kg, example: TemplateExample, program_text: str) -> ProgramScore:
    """Args:
        kg: a `KGPathway` (its client, limits and matcher are used).
        example: the question and its expected answer.
        program_text: the program to run (generated or the target).
    """
    text = clean_program(program_text)
    try:
        program = compile_program(text, example.domain)
    except KGError as exc:
        return ProgramScore(False, False, False, error=f"compile: {exc}")
    if not program.statements:
        return ProgramScore(True, False, False, error="empty program (None)")
    try:
        result = execute(program, kg.client, now=parse_query_time(example.query_time), limits=kg.limits,
                         matcher=kg.matcher)
    except KGError as exc:
        return ProgramScore(True, False, False, error=f"execute: {exc}")
    errors = [s.error for s in result.statements if s.kind == "error"]
    if result.stopped or errors:
        return ProgramScore(True, False, False, error=result.stopped or "; ".join(errors))
    answer = tuple(final_answer(result))
    return ProgramScore(True, True, check_answer(answer, example.expected), answer)
