"""The checks a KG program passes, in the order the pathway meets them (see the package docstring)."""
from __future__ import annotations

from typing import Sequence

from models.kg.checks.check import NOT_FINAL, REFUSED, Check
from models.kg.checks.dates import normalise_dates, question_dates
from models.kg.checks.fit import (KeyMatcher, attribute_phrase, difference_check, key_path, kind_check, place_check,
                                  role_check, same_title_check)
from models.kg.checks.places import qualified_places
from models.kg.checks.slots import ArgumentChecks
from models.kg.language.ast import Call, Condition, Length, ListArg, Literal, Program
from models.kg.language.signature import Signature
from models.types import Query


class ProgramChecks:
    """Args:
        embedder: for the key check's cosine (None: lexical only).
        key_threshold: the cosine a key path needs to the question's attribute phrase (`kg.key_match_threshold`).
        enabled: False = no check runs and the question goes to the generator as written (`kg.program_checks`).
    """

    def __init__(self, embedder=None, key_threshold: float = 0.4, enabled: bool = True):
        self.keys = KeyMatcher(embedder, key_threshold)
        self.enabled = enabled

    def question_for_generation(self, query: Query) -> str:
        """The question as the generator gets it: its dates in the API's format."""
        if not self.enabled:
            return query.text
        return normalise_dates(query.text, question_dates(query.text, query.time))

    def before(self, program: Program, query: Query, signatures: dict[str, Signature]) -> tuple[Program, list[Check]]:
        """The program with its arguments repaired, and the checks' verdicts (a refusal: do not run it)."""
        if not self.enabled:
            return program, []
        arguments = ArgumentChecks(query.text, question_dates(query.text, query.time), qualified_places(query.text),
                                   query.time)
        program, checks = arguments.check(program, signatures)
        calls = [s.head.name for s in program.statements if isinstance(s.head, Call)]
        return program, checks + [kind_check(query.text, program.domain or "", calls)]  # the function alone decides

    def after(self, program: Program, result, query: Query, direct: str) -> list[Check]:
        """Verdicts on what the program found: place and same-title refuse it, key makes its value not final."""
        if not self.enabled:
            return []
        calls = [s.head for s in program.statements if isinstance(s.head, Call)]
        final = [s for s in result.statements if not s.consumed]
        checks = [difference_check(query.text, direct)]
        tables = [s.table for s in final if s.table is not None]
        entities = [row.entity for table in tables for row in table.rows[:20]]
        checks.append(place_check(qualified_places(query.text), entities))
        last = final[-1] if final else None
        counting = last is not None and any(isinstance(s, Length) for s in last.statement.selectors)
        checks.append(same_title_check([t.ambiguous for t in tables if t.ambiguous],
                                       [row.entity for row in (last.table.rows if last and last.table else ())],
                                       counting))
        keys = list(dict.fromkeys(v.key for v in last.values)) if last is not None else []
        keys = keys or [k for k in [last.statement.key if last is not None else None] if k]
        if direct and last is not None and (keys or not counting):  # a count of rows answers "how many" itself
            head = last.statement.head if isinstance(last.statement.head, Call) else (calls[-1] if calls else None)
            aliases = last.table.aliases if last.table is not None else {}
            dates = [d.written for d in question_dates(query.text, query.time)]
            phrase = attribute_phrase(query.text, program_names(program), dates)
            path = key_path(keys, aliases, head)
            checks.append(self.keys.check(phrase, path))
            checks.append(role_check(phrase, program.domain or "", path, [c.name for c in calls]))
        return checks


def refused(checks: Sequence[Check]) -> Check | None:
    return next((c for c in checks if c.verdict == REFUSED), None)


def not_final(checks: Sequence[Check]) -> Check | None:
    return next((c for c in checks if c.verdict == NOT_FINAL), None)


def program_names(program: Program) -> list[str]:
    """The program's entity names (the attribute phrase leaves their words out)."""
    out = []

    def visit(arg):
        if isinstance(arg, Literal) and arg.kind == "string":
            out.append(str(arg.value))
        elif isinstance(arg, ListArg):
            for item in arg.items:
                visit(item)
        elif isinstance(arg, Condition) and isinstance(arg.value.value, str) and arg.key.lower() not in (
                "category", "job", "character"):
            out.append(str(arg.value.value))  # an entity filter ("eq(team, arsenal)"), not the attribute asked

    for statement in program.statements:
        if isinstance(statement.head, Call):
            for arg in statement.head.args:
                visit(arg)
    return out
