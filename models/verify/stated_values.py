"""Dates and quantities as a text states them (models/verify/checkable.py computes answers from them; the SQL checks of
models/public_data read quantities too): "March 5, 2010" and "5 March 2010" as dates, "$1.2 billion" and "12,000"
as numbers, each with the words that stated it."""
from __future__ import annotations

import re
from datetime import date
from typing import Sequence

from models.date_words import MONTH_START, month_number
from models.text import ISO_DATE

_MDY = re.compile(rf"\b{MONTH_START}[a-z]*\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+"
                  r"(\d{4})\b", re.IGNORECASE)
_DMY = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{MONTH_START}[a-z]*"
                  r"\.?,?\s+(\d{4})\b", re.IGNORECASE)
YEAR = re.compile(r"(?<![\d.,$])\b(1[5-9]\d\d|20\d\d)\b(?![\d.,%])")
SCALE_WORDS = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "billion": 1e9, "b": 1e9, "bn": 1e9,
               "trillion": 1e12, "t": 1e12}
_QUANTITY = re.compile(r"(?<![\w.-])([$\u20ac\u00a3])?\s?(\d+(?:,\d{3})*(?:\.\d+)?)\s?(thousand|million|billion|"
                       r"trillion|bn|mn|[kmbt])?(?![\w-])(?!\.\d)", re.IGNORECASE)


def dates_in(text: str) -> list[tuple[date, str]]:
    """Full dates (and, only when there is none, bare years as 1 January) in `text`, as written."""
    found = []
    for m in ISO_DATE.finditer(text):
        found.append((_safe_date(int(m.group(1)), int(m.group(2)), int(m.group(3))), m.group(0)))
    for m in _MDY.finditer(text):
        found.append((_safe_date(int(m.group(3)), month_number(m.group(1).lower()), int(m.group(2))),
                      m.group(0)))
    for m in _DMY.finditer(text):
        found.append((_safe_date(int(m.group(3)), month_number(m.group(2).lower()), int(m.group(1))),
                      m.group(0)))
    found = [(d, s) for d, s in found if d is not None]
    if not found:
        found = [(date(int(m.group(1)), 1, 1), m.group(1)) for m in YEAR.finditer(text)]
    return found


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def quantities_in(text: str, skip: Sequence[str] = ()) -> list[tuple[float, str]]:
    """Numbers with their scale ("$3.06 trillion", "330 m", "2.81T") in `text`, as written; years, dates and the
    numbers in `skip` (the options' own, "iPhone 15") left out."""
    dated = [m.span() for pattern in (ISO_DATE, _MDY, _DMY) for m in pattern.finditer(text)]
    out = []
    for m in _QUANTITY.finditer(text):
        if any(a <= m.start() < b for a, b in dated):
            continue
        digits = m.group(2).replace(",", "")
        if m.group(2) in skip or digits in skip:
            continue
        if YEAR.fullmatch(m.group(2)) and not m.group(1) and not m.group(3):
            continue  # a bare year is not a quantity
        scale = SCALE_WORDS.get((m.group(3) or "").lower(), 1.0)
        if m.group(3) and len(m.group(3)) == 1 and m.group(3).lower() == "m" and not m.group(1):
            scale = 1.0  # "330 m" is metres, not millions
        out.append((float(digits) * scale, m.group(0).strip()))
    return out


def format_quantity(value: float) -> str:
    """A computed number as an answer: thousands separated, at most 2 decimals, large ones in words
    ("250 billion")."""
    for word, scale in (("trillion", 1e12), ("billion", 1e9)):
        if abs(value) >= scale:
            return f"{value / scale:,.3f}".rstrip("0").rstrip(".") + f" {word}"
    text = f"{value:,.2f}".rstrip("0").rstrip(".")
    return text
