"""KG values as short answers in CRAG's gold style: "182.63", "1,234,567", "2010-07-15", "a, b and c".

The verbaliser writes facts for the model to read ("160,000,000 (about 160 million)"); an answer returned
without the model needs the bare value, so numbers get separators and at most two decimals, dates stay
ISO (the gold style of most CRAG date answers), lists are joined.
"""
from __future__ import annotations

from datetime import date, datetime
from typing import Any


def format_answer_value(value: Any) -> str:
    """One value as answer text ("" for None or empty)."""
    if value is None or value == "":
        return ""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            value = int(value)
        else:
            return f"{value:,.2f}".rstrip("0").rstrip(".") if abs(value) >= 1000 else \
                f"{value:.2f}".rstrip("0").rstrip(".")
    if isinstance(value, int):
        return f"{value:,}" if abs(value) >= 10000 else str(value)
    if isinstance(value, datetime):
        return value.date().isoformat()
    if isinstance(value, date):
        return value.isoformat()
    if isinstance(value, (list, tuple)):
        return join_answers([format_answer_value(v) for v in value])
    if isinstance(value, dict):
        return ""
    return " ".join(str(value).split())


def join_answers(items) -> str:
    items = [i for i in items if i]
    if len(items) <= 1:
        return "".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]
