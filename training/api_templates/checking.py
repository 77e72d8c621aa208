"""Scoring a program's answer against a template's expected answer, and the examples' JSONL files.

Numbers compare with a small tolerance, texts case-folded, several items as a multiset (order is not checked:
`[:n]` after a sort is checked by which items remain). The answer of a program is what its *final* statements
output: a statement whose output a following `*` consumes, or that a following `sort` replaced, is an
intermediate step (`final_answer`).
"""
from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence


@dataclass(frozen=True)
class TemplateExample:
    """One question with its target program and expected answer.

    Attributes:
        held: why it is kept out of training: "" (it is not), "phrasing" (an unseen phrasing of a trained
            template) or "template" (a template none of whose phrasings is trained).
    """

    id: str
    template: str
    query: str
    query_time: str
    domain: str
    program: str
    entities: tuple[str, ...]
    expected: tuple
    held: str = ""

    def to_json(self) -> str:
        return json.dumps({"id": self.id, "template": self.template, "query": self.query,
                           "query_time": self.query_time, "domain": self.domain, "program": self.program,
                           "entities": list(self.entities), "expected": list(self.expected), "held": self.held},
                          ensure_ascii=False)

    @classmethod
    def from_json(cls, line: str) -> "TemplateExample":
        row = json.loads(line)
        return cls(row["id"], row["template"], row["query"], row["query_time"], row["domain"], row["program"],
                   tuple(row["entities"]), tuple(row["expected"]), row.get("held", ""))


_STAR_ARGUMENT = re.compile(r"[(,]\s*\*\s*[,)]")


def final_answer(result) -> list:
    """The items an `ExecutionResult` answers with: values, count or average of its final statements."""
    statements = list(result.statements)
    answer = []
    for i, statement in enumerate(statements):
        following = statements[i + 1].statement.text if i + 1 < len(statements) else ""
        if statement.consumed or _STAR_ARGUMENT.search(following):
            continue
        if statement.kind in ("count", "average") and statement.number is not None:
            answer.append(statement.number)
        elif statement.kind == "values":
            answer.extend(v.value for v in statement.values)
    return answer


def _number(value) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    try:
        return float(str(value).replace(",", ""))
    except ValueError:
        return None


def _same(a, b) -> bool:
    x, y = _number(a), _number(b)
    if x is not None and y is not None:
        return math.isclose(x, y, rel_tol=1e-6, abs_tol=0.005)
    return str(a).strip().casefold() == str(b).strip().casefold()


def check_answer(answer: Sequence, expected: Sequence) -> bool:
    """True when `answer` holds exactly the expected items (any order, numbers with tolerance)."""
    if len(answer) != len(expected):
        return False
    remaining = list(answer)
    for item in expected:
        match = next((i for i, got in enumerate(remaining) if _same(got, item)), None)
        if match is None:
            return False
        remaining.pop(match)
    return True


def read_examples(path: str | Path) -> list[TemplateExample]:
    with open(path, encoding="utf8") as handle:
        return [TemplateExample.from_json(line) for line in handle if line.strip()]


def write_examples(examples: Iterable[TemplateExample], path: str | Path) -> int:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = [e.to_json() + "\n" for e in examples]
    path.write_text("".join(lines), encoding="utf8")
    return len(lines)
