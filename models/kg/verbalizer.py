"""Execution results as short English facts for the KG-answer prompt (db3 §3: "converted to natural language
so that even if irrelevant information is extracted, the LLM may be aware of that and refuse to answer").

Every fact names its entity and attribute, and the filter it was computed under, so the model can tell
relevant from irrelevant and a count is never mistaken for an unfiltered one:

    The release_date of Inception is 2010-07-15.
    The members of Coldplay are Chris Martin, Jonny Buckland, Guy Berryman and Will Champion.
    The number of cast members of Inception is 7.
    The number of Oscar nominations of 'X' whose winner is true is 1.
    The number of crew members of Y whose job is not Director is 7.
    The average close of daily prices of AAPL for 2024-02-01 to 2024-02-29 is 183.2 (over 20 values).
    Inception: title: Inception; release_date: 2010-07-15; budget: 160,000,000 (about 160 million); ...
    No dividends of BLFN were found in the knowledge graph.
    No movie matching 'incepshun' was found.

Numbers are written by `models.kg.format.format_number` (separators, rounding, magnitude in words), verbs
agree with their nouns, long lists are summarised with their count, and the whole list of facts is cut
to `max_chars`.

Emptiness: a program whose last statement found its entity but no rows under its call and filter ("no
dividends", "no game on that date") is evidence, and yields the fact saying so. A program that found
nothing because its entity was not found or the attribute asked for is not recorded, that failed, or that
was stopped by the budget, yields no facts at all, so the pipeline goes to the web.
"""
from __future__ import annotations

from datetime import date
from itertools import groupby
from typing import Any

from models.kg.executor import ExecutionResult, StatementResult
from models.kg.format import format_number, verb
from models.kg.language.ast import Sort

_DATA_KINDS = ("rows", "values", "count", "average")
_CONDITION_WORDS = {"eq": "is", "neq": "is not", "ge": "is at least", "le": "is at most"}
_MAX_VALUE_CHARS = 600
_MAX_ROW_CHARS = 900


def verbalize(result: ExecutionResult, max_chars: int = 6000, max_items: int = 20) -> list[str]:
    """Facts for every statement not replaced by a following sort.

    Args:
        result: from `execute`.
        max_chars: total characters of all facts (the last fact that fits is cut, later ones dropped).
        max_items: values listed per attribute, and value groups per statement.

    Returns:
        The facts; [] when no statement found anything.
    """
    statements = [s for s in result.statements if not s.consumed]
    if not any(s.kind in _DATA_KINDS for s in statements) and not is_absence_evidence(result):
        return []
    facts = [fact for s in statements for fact in _statement_facts(s, max_items)]
    return _within(facts, max_chars)


def is_absence_evidence(result: ExecutionResult) -> bool:
    """Whether the program ran to its end and its last statement found its entity but no rows under its
    call and filter (an empty answer the KG vouches for, unlike a name it could not find or an attribute it
    does not record)."""
    statements = [s for s in result.statements if not s.consumed]
    if not statements or result.stopped:
        return False
    last = statements[-1]
    return last.kind == "empty" and last.found and last.total == 0


def _statement_facts(result: StatementResult, max_items: int) -> list[str]:
    header = [_sort_header(result)] if isinstance(result.statement.head, Sort) and result.kind != "empty" else []
    facts = {
        "values": _value_facts,
        "count": _count_facts,
        "average": _average_facts,
        "rows": _row_facts,
        "empty": _empty_facts,
    }.get(result.kind, lambda r, _: [])(result, max_items)
    return header + facts + list(result.notes)


def filter_phrase(conditions) -> str:
    """Conditions as a relative clause: "whose job is not Director and year is at least 2000"."""
    return "whose " + " and ".join(f"{c.key} {_CONDITION_WORDS[c.op]} {format_value(c.value.value)}"
                                   for c in conditions)


def _filtered(what: str, result: StatementResult) -> str:
    """The table's noun phrase with the filter its rows were computed under (a sort states its own)."""
    if not result.conditions or isinstance(result.statement.head, Sort):
        return what
    return f"{what} {filter_phrase(result.conditions)}"


def _empty_facts(result: StatementResult, _: int) -> list[str]:
    if not result.what:
        return []
    if not result.found:
        return [f"No {result.what} was found."]
    key = result.statement.key
    if key is not None and result.total:  # the rows exist, the attribute asked for is empty
        return [f"The {key} of the {_filtered(result.what, result)} {verb(key)} not recorded in the knowledge "
                f"graph."]
    what = _filtered(result.what, result)
    return [f"No {what} {verb(what, singular='was', plural='were')} found in the knowledge graph."]


def _sort_header(result: StatementResult) -> str:
    """What a sort line did, so "the first" in the facts that follow has a meaning."""
    sort = result.statement.head
    kept = f" keeping those {filter_phrase(sort.conditions)}," if sort.conditions else ""
    order = "descending" if sort.descending else "ascending"
    return (f"The {result.what} {verb(result.what, singular='was', plural='were')} sorted by {sort.key} "
            f"({order}),{kept} giving:")


def _value_facts(result: StatementResult, max_items: int) -> list[str]:
    groups = [(entity, key, [v.value for v in items])
              for (entity, key), items in groupby(result.values, key=lambda v: (v.entity, v.key))]
    if len(groups) > 1 and all(len(values) == 1 for _, _, values in groups) and len({k for _, k, _ in groups}) == 1:
        return [_value_list(result, groups, max_items)]
    facts = []
    for entity, key, values in groups[:max_items]:
        shown = [format_value(v) for v in values[:max_items]]
        if len(values) == 1:
            facts.append(f"The {key} of {entity} {verb(key)} {shown[0]}." if shown[0] != entity
                         else f"The {key} {verb(key)} {entity}.")
        elif len(values) <= max_items:
            facts.append(f"The {key} of {entity} are {_join(shown)}.")
        else:
            facts.append(f"The {key} of {entity} ({len(values)} in total) include {', '.join(shown)}, ...")
    if len(groups) > max_items:
        facts.append(f"({len(groups) - max_items} more values of {result.what} are not listed.)")
    return facts


def _value_list(result: StatementResult, groups: list, max_items: int) -> str:
    """One attribute of many rows, in order: "The pts of NBA games of ...: 120 (A vs B on ...); 98 (...)."."""
    items = []
    for entity, _, (value,) in groups[:max_items]:
        text = format_value(value)
        items.append(text if text in entity else f"{text} ({entity})")
    more = f"; and {len(groups) - max_items} more" if len(groups) > max_items else ""
    return f"The {groups[0][1]} of the {_filtered(result.what, result)}, in order: {'; '.join(items)}{more}."


def _count_facts(result: StatementResult, _: int) -> list[str]:
    pairs = {(v.entity, v.key) for v in result.values}
    keys = {v.key for v in result.values}
    if len(pairs) == 1:
        entity, key = pairs.pop()
        subject = f"{key} of {entity}"
    elif len(keys) == 1:
        subject = f"{keys.pop()} values of {result.what}"
    else:
        subject = result.what
    if result.conditions and not isinstance(result.statement.head, Sort):
        subject = f"{subject} {filter_phrase(result.conditions)}"
    return [f"The number of {subject} is {format_value(result.number)}."]


def _average_facts(result: StatementResult, _: int) -> list[str]:
    key = result.values[0].key if result.values else "value"
    return [f"The average {key} of {_filtered(result.what, result)} is {format_value(result.number)} "
            f"(over {len(result.values)} value{'s' if len(result.values) != 1 else ''})."]


def _row_facts(result: StatementResult, max_items: int) -> list[str]:
    facts = []
    shown = result.rows[:max_items]
    if result.total > len(shown):
        facts.append(f"There are {result.total} {_filtered(result.what, result)}; the first {len(shown)} are listed.")
    for entity, fields in shown:
        parts = [f"{k}: {format_value(v)}" for k, v in fields.items()
                 if v not in (None, "", [], {}) and format_value(v) != entity]
        text = f"{entity}: " + "; ".join(parts) + "."
        facts.append(text if len(text) <= _MAX_ROW_CHARS else text[:_MAX_ROW_CHARS - 3] + "...")
    return facts


def format_value(value: Any) -> str:
    """A value as text: numbers by `format_number`, dates in ISO form, lists joined, long text cut."""
    if isinstance(value, (bool, int, float)):
        return format_number(value)
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return _join([format_value(v) for v in value if v not in (None, "")])
    if isinstance(value, dict):
        return "; ".join(f"{k}: {format_value(v)}" for k, v in value.items() if v not in (None, ""))
    text = " ".join(str(value).split())
    return text if len(text) <= _MAX_VALUE_CHARS else text[:_MAX_VALUE_CHARS - 3] + "..."


def _join(items: list[str]) -> str:
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _within(facts: list[str], max_chars: int) -> list[str]:
    kept, used = [], 0
    for fact in facts:
        room = max_chars - used
        if room <= 3:
            break
        kept.append(fact if len(fact) <= room else fact[:room - 3] + "...")
        used += len(kept[-1]) + 1  # +1: the facts are joined by line breaks
    return kept
