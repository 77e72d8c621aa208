"""One public-data record and its "The [attribute] is [value]." serialisation (db3 paper, section 2.3).

A record is one row of a public table (an Oscar nomination, a Grammy nomination, a movie, a company)
turned into a short paragraph once, at build time, so lookups only read text. It is stored with the
names it can be found by (film, person, title, company, ticker) and, for awards, the ceremony year and
category that the year lookup filters on.

Serialisation rules: one sentence per non-empty attribute, in a fixed order; lists become "are"
sentences ("The lead actors are A, B and C."); values are never invented, so an empty attribute simply
has no sentence.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence


@dataclass(frozen=True)
class Record:
    """A serialised row of a public table.

    Attributes:
        source: oscar | grammy | movie | finance.
        domain: the query domain that reads it (movie, music, finance).
        text: the "The [attribute] is [value]." paragraph.
        names: the entity names it is linked by.
        year: the ceremony year for awards, else None.
        category: the award category (lower case) for awards, else "".
        winner: for award nominations, whether it won; else None.
        rows: the same CSV row as typed SQL rows, `(table, values in column order)` (models/public_data/tables.py).
    """

    source: str
    domain: str
    text: str
    names: tuple[str, ...]
    year: int | None = None
    category: str = ""
    winner: bool | None = None
    rows: tuple[tuple[str, tuple], ...] = ()


def serialize(attributes: Iterable[tuple[str, object]]) -> str:
    """One sentence per attribute: `[("title", "Up"), ("lead actors", ["A", "B"])]` ->
    'The title is Up. The lead actors are A and B.'

    Empty values (None, "", []) are skipped; a value that already ends a sentence gets no second period.
    """
    sentences = []
    for attribute, value in attributes:
        if isinstance(value, (list, tuple)):
            items = [str(v).strip() for v in value if str(v).strip()]
            if not items:
                continue
            text, verb = join_names(items), "are" if len(items) > 1 else "is"
        else:
            text, verb = ("" if value is None else str(value)).strip(), "is"
        if text:
            sentences.append(f"The {attribute} {verb} {text}{'' if text.endswith(('.', '!', '?')) else '.'}")
    return " ".join(sentences)


def join_names(items: Sequence[str]) -> str:
    """'A', 'A and B', 'A, B and C'."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def format_money(value: float) -> str:
    """1.6e8 -> '$160 million'; 3.06e12 -> '$3.06 trillion'; small amounts keep their digits."""
    for scale, word in ((1e12, "trillion"), (1e9, "billion"), (1e6, "million")):
        if abs(value) >= scale:
            return f"${value / scale:,.3g} {word}"
    return f"${value:,.2f}".replace(".00", "")


def ordinal(n: int) -> str:
    """1 -> '1st', 12 -> '12th', 92 -> '92nd'."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
