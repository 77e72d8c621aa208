"""Execution results as short English facts for the KG-answer prompt (db3 §3: "converted to natural language
so that even if irrelevant information is extracted, the LLM may be aware of that and refuse to answer").

Every fact names its entity and attribute, so the model can tell relevant from irrelevant:

    The release_date of Inception is 2010-07-15.
    The members of Coldplay are Chris Martin, Jonny Buckland, Guy Berryman and Will Champion.
    The number of cast members of Inception is 7.
    The average close of daily prices of AAPL for 2024-02-01 to 2024-02-29 is 183.2 (over 20 values).
    Inception: title: Inception; release_date: 2010-07-15; budget: 160,000,000 (about 160 million); ...
    No movie matching 'incepshun' was found.

Long lists are summarised with their count ("The works of Coldplay (42 in total) include ..."), big numbers
get a readable magnitude, and the whole list of facts is cut to `max_chars`. A program whose statements all
came back empty yields no facts at all, so the pipeline skips the KG answer step and goes to the web.
"""
from __future__ import annotations

from datetime import date
from itertools import groupby
from typing import Any

from models.kg.executor import ExecutionResult, StatementResult
from models.kg.language.ast import Sort

_DATA_KINDS = ("rows", "values", "count", "average")
_MAGNITUDES = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"))
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
    if not any(s.kind in _DATA_KINDS for s in statements):
        return []
    facts = [fact for s in statements for fact in _statement_facts(s, max_items)]
    return _within(facts, max_chars)


def _statement_facts(result: StatementResult, max_items: int) -> list[str]:
    header = [_sort_header(result)] if isinstance(result.statement.head, Sort) and result.kind != "empty" else []
    facts = {
        "values": _value_facts,
        "count": _count_facts,
        "average": _average_facts,
        "rows": _row_facts,
        "empty": lambda r, _: [f"No {r.what} was found."] if r.what else [],
    }.get(result.kind, lambda r, _: [])(result, max_items)
    return header + facts + list(result.notes)


def _sort_header(result: StatementResult) -> str:
    """What a sort line did, so "the first" in the facts that follow has a meaning."""
    sort = result.statement.head
    kept = f" keeping those with {format_conditions(sort.conditions)}," if sort.conditions else ""
    order = "descending" if sort.descending else "ascending"
    return f"The {result.what} were sorted by {sort.key} ({order}),{kept} giving:"


def format_conditions(conditions) -> str:
    words = {"eq": "=", "neq": "!=", "ge": ">=", "le": "<="}
    return " and ".join(f"{c.key} {words[c.op]} {format_value(c.value.value)}" for c in conditions)


def _value_facts(result: StatementResult, max_items: int) -> list[str]:
    groups = [(entity, key, [v.value for v in items])
              for (entity, key), items in groupby(result.values, key=lambda v: (v.entity, v.key))]
    if len(groups) > 1 and all(len(values) == 1 for _, _, values in groups) and len({k for _, k, _ in groups}) == 1:
        return [_value_list(result, groups, max_items)]
    facts = []
    for entity, key, values in groups[:max_items]:
        shown = [format_value(v) for v in values[:max_items]]
        if len(values) == 1:
            facts.append(f"The {key} of {entity} is {shown[0]}." if shown[0] != entity else f"The {key} is {entity}.")
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
    return f"The {groups[0][1]} of the {result.what}, in order: {'; '.join(items)}{more}."


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
    return [f"The number of {subject} is {format_value(result.number)}."]


def _average_facts(result: StatementResult, _: int) -> list[str]:
    key = result.values[0].key if result.values else "value"
    return [f"The average {key} of {result.what} is {format_value(result.number)} "
            f"(over {len(result.values)} values)."]


def _row_facts(result: StatementResult, max_items: int) -> list[str]:
    facts = []
    shown = result.rows[:max_items]
    if result.total > len(shown):
        facts.append(f"There are {result.total} {result.what}; the first {len(shown)} are listed.")
    for entity, fields in shown:
        parts = [f"{k}: {format_value(v)}" for k, v in fields.items()
                 if v not in (None, "", [], {}) and format_value(v) != entity]
        text = f"{entity}: " + "; ".join(parts) + "."
        facts.append(text if len(text) <= _MAX_ROW_CHARS else text[:_MAX_ROW_CHARS - 3] + "...")
    return facts


def format_value(value: Any) -> str:
    """A value as text: whole floats without ".0", big numbers with their magnitude, lists joined."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        value = int(value)
    if isinstance(value, int):
        for size, word in _MAGNITUDES:
            if abs(value) >= size:
                return f"{value:,} (about {value / size:.3g} {word})"
        return str(value)
    if isinstance(value, float):
        return f"{value:.4f}".rstrip("0").rstrip(".")
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
