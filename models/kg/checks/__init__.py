"""KG programs checked between generation and answer: what the trained generator gets wrong on
wordings it never saw, caught without retraining.

    before generation   dates.py    the question's dates in the API's format ("feb 27th 2024" -> "2024-02-27")
    before execution    slots.py    date arguments against the question's dates, values in the slots of their
                                    type, a year condition against the question's year, "City, State" kept whole
    after execution     fit.py      the function can give the kind asked; the key that gave the value is the
                                    attribute asked (else the value is not final); not the state of a "City,
                                    State"; same-title films told apart, never blended

`ProgramChecks` runs them for the KG pathway; each verdict is a `Check` in the answer's trace.
"""
from models.kg.checks.check import NOT_FINAL, PASSED, REFUSED, REPAIRED, Check
from models.kg.checks.program_checks import ProgramChecks

__all__ = ["Check", "NOT_FINAL", "PASSED", "ProgramChecks", "REFUSED", "REPAIRED"]
