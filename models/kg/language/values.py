"""Typed comparison of record fields with condition values, and typed sort keys.

db3 compared lower-cased strings, so "false" was true and "9" > "10"; here every value is typed first:
- booleans stay booleans ("False"/"false" strings become False), numbers become floats ("$1,234" too),
  "YYYY-MM-DD..." strings become dates, lists stay lists (a condition holds if it holds for any item;
  `neq` if it holds for none), other strings are compared normalised (case, accents, punctuation);
- a condition value that reads as a time expression ("2024-02", "last week") becomes a `TimeSpan`, and a
  four-digit number compared with a date is that year; dates compare as intervals of days: `eq` = the
  intervals overlap, `ge` = the field reaches the span's start or later, `le` = the field starts by its end;
- a missing field satisfies no condition (SQL's NULL), `neq` included;
- values that cannot be compared (a string `ge` a number) satisfy nothing but `neq`.
"""
from __future__ import annotations

import math
import re
from datetime import date, datetime
from typing import Any, Callable

from models.kg.language.ast import Literal
from models.kg.language.errors import KGValueError
from models.kg.language.timeexpr import TimeSpan, parse_date, resolve_time, year_span
from models.text import kg_match_key  # the KG's string form (models/text.py)

_NUMBER = re.compile(r"[-+]?\$?\d[\d,]*(\.\d+)?\Z|[-+]?\$?\d*\.\d+\Z")
_DATE_PREFIX = re.compile(r"\d{4}-\d{2}-\d{2}")

StringEquals = Callable[[str, str], bool]  # a field's own notion of string equality (aliases, containment)


def typed(value: Any) -> Any:
    """A record value as bool | float | date | normalised str | list | None."""
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, (int, float)):
        return None if isinstance(value, float) and math.isnan(value) else float(value)
    if isinstance(value, (date, datetime)):
        return parse_date(value)
    if isinstance(value, (list, tuple, set)):
        return [typed(v) for v in value]
    text = str(value).strip()
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if _DATE_PREFIX.match(text):
        day = parse_date(text)
        if day is not None:
            return day
    if _NUMBER.match(text):
        return float(text.replace("$", "").replace(",", ""))
    if lowered in ("", "none", "null", "nan"):
        return None
    return kg_match_key(text)


def condition_value(literal: Literal, now: datetime | None) -> Any:
    """A condition's value, typed; strings that read as time expressions become TimeSpans."""
    if literal.kind in ("bool", "none"):
        return literal.value
    if literal.kind == "number":
        return float(literal.value)
    value = typed(literal.value)
    if isinstance(value, str) and value:
        try:
            return resolve_time(literal.value, now)
        except KGValueError:
            return value
    return TimeSpan(value, value) if isinstance(value, date) else value


def satisfies(op: str, field_value: Any, wanted: Any, equals: StringEquals | None = None,
              raw_field: Any = None, raw_wanted: Any = None) -> bool:
    """Whether a field value satisfies `op(key, wanted)`.

    Args:
        op: eq | neq | ge | le.
        field_value: the field, already `typed`.
        wanted: the condition value from `condition_value`.
        equals: the field's own string equality (called with the raw texts), else normalised equality.
        raw_field, raw_wanted: untyped texts passed to `equals`.
    """
    if field_value is None:
        return False
    if isinstance(field_value, list):
        raws = raw_field if isinstance(raw_field, (list, tuple)) and len(raw_field) == len(field_value) else None
        hits = [satisfies("eq" if op == "neq" else op, item, wanted, equals, raws[i] if raws else item, raw_wanted)
                for i, item in enumerate(field_value)]
        return not any(hits) if op == "neq" else any(hits)
    if op == "neq":
        return not satisfies("eq", field_value, wanted, equals, raw_field, raw_wanted)
    if wanted is None:
        return False
    if isinstance(field_value, float) and isinstance(wanted, float):
        return {"eq": math.isclose(field_value, wanted, rel_tol=1e-9, abs_tol=1e-9),
                "ge": field_value >= wanted, "le": field_value <= wanted}[op]
    span = _as_span(wanted)
    field_span = _as_span(field_value) if span is not None else None
    if span is not None and field_span is not None:
        return _compare_spans(op, field_span, span)
    if isinstance(field_value, bool) or isinstance(wanted, bool):
        return op == "eq" and isinstance(field_value, bool) and field_value == bool(wanted)
    # text: a value that also reads as a time ("live", "current") is compared as the text it was written as
    text = wanted if isinstance(wanted, str) else kg_match_key(raw_wanted) if isinstance(raw_wanted, str) else None
    if op != "eq" or text is None or not isinstance(field_value, str):
        return False
    if equals is not None and isinstance(raw_field, str):
        return equals(raw_field, str(raw_wanted if raw_wanted is not None else wanted))
    return field_value == text


def _as_span(value: Any) -> TimeSpan | None:
    if isinstance(value, TimeSpan):
        return value
    if isinstance(value, date):
        return TimeSpan(value, value)
    if isinstance(value, float) and value.is_integer() and 1000 <= value <= 2999:
        return year_span(int(value))  # a year compared with a date
    return None


def _compare_spans(op: str, field: TimeSpan, wanted: TimeSpan) -> bool:
    starts_before_end = wanted.end is None or field.start is None or field.start <= wanted.end
    ends_after_start = wanted.start is None or field.end is None or field.end >= wanted.start
    return {"eq": starts_before_end and ends_after_start, "ge": ends_after_start, "le": starts_before_end}[op]


def sort_value(value: Any) -> tuple:
    """An ordering key for mixed typed values: numbers, then dates, booleans, strings; None never sorts."""
    value = typed(value)
    if isinstance(value, list):
        value = value[0] if value else None
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, float):
        return (0, value)
    if isinstance(value, date):
        return (1, value.toordinal())
    return (3, str(value))
