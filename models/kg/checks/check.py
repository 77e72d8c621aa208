"""One check's verdict on a generated KG program, as it goes into the answer's trace."""
from __future__ import annotations

from dataclasses import dataclass

PASSED, REPAIRED, REFUSED, NOT_FINAL = "passed", "repaired", "refused", "not final"


@dataclass(frozen=True)
class Check:
    """Attributes:
        name: date | slot | place | kind | key | role | same-title.
        verdict: passed | repaired (the program was changed and runs) | refused (the program is no evidence) |
            not final (its facts are evidence for the answer step, its value is not the answer).
        why: what the check saw, in words (`local_evaluation.py --explain` prints it).
    """

    name: str
    verdict: str
    why: str = ""

    def as_trace(self) -> dict:
        return {"check": self.name, "verdict": self.verdict, "why": self.why}
