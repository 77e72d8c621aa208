"""The dates a question names, normalised to the API's format before the program is written.

The API-generation adapter learned ISO dates ("2024-02-27"); a question says "on february 28, 2024", "feb 27th
2024", "the 4th of february 2024", "02/28/2024" or "last friday", and the model copies the words into broken
arguments ("28, 2024"). So every date the question names is found here and resolved against the query time by
the KG language's own time expressions (`timeexpr`, so "last friday" means the same day as in a program):

    question_dates("what did aapl close at on feb 27th 2024?", now)
        -> (QuestionDate(written="feb 27th 2024", iso="2024-02-27", span=TimeSpan(...)),)
    normalise_dates(text, dates) -> "what did aapl close at on 2024-02-27?"   (what the generator is given)

The same dates are what a generated date argument is checked against (`slots.py`). Spans of more than a day
that a program can name itself ("last week", "this year", "latest") are left as written: the program passes
them on and the API resolves them.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

from models.kg.language.errors import KGValueError
from models.kg.language.timeexpr import TimeSpan, resolve_time
from models.date_words import MONTH_WORD, month_number

_MONTH = rf"(?P<month>{MONTH_WORD})\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>(?:19|20)\d\d)"
_WEEKDAY = r"(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
# most specific first: a full date before the month-and-year it contains
_PATTERNS = (
    ("day", re.compile(rf"\b(?P<iso>(?:19|20)\d\d-[01]\d-[0-3]\d)\b")),
    ("day", re.compile(rf"\b{_MONTH}\s+{_DAY},?\s+{_YEAR}\b")),
    ("day", re.compile(rf"\b(?:the\s+)?{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b")),
    ("day", re.compile(r"\b(?P<us_month>[01]?\d)/(?P<us_day>[0-3]?\d)/(?P<year>(?:19|20)\d\d)\b")),
    ("relative", re.compile(rf"\b(?:the\s+)?day\s+before\s+yesterday\b|\byesterday\b|\btoday\b|"
                            rf"\b(?:last|this|next|past|previous|coming|most\s+recent)\s+{_WEEKDAY}\b")),
    ("month", re.compile(rf"\b{_MONTH}(?:\s+of)?,?\s+{_YEAR}\b")),
    ("month", re.compile(r"\b(?P<iso_month>(?:19|20)\d\d-[01]\d)\b(?!-)")),
)


@dataclass(frozen=True)
class QuestionDate:
    """A date the question names: as written, in the API's format, and as the days it covers."""

    written: str
    iso: str  # "2024-02-27", or "2024-02" for a month
    span: TimeSpan
    relative: bool = False  # "last friday", "yesterday": said without a preposition, so one is written


def question_dates(question: str, now: datetime | None) -> tuple[QuestionDate, ...]:
    """The days and months `question` names, in order of appearance; a relative one only with a query time."""
    text = question.lower()
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, QuestionDate]] = []
    for kind, pattern in _PATTERNS:
        for match in pattern.finditer(text):
            if any(a < match.end() and match.start() < b for a, b in taken):
                continue
            normalised = _normalised(kind, match, now)
            if normalised is None:
                continue
            taken.append(match.span())
            found.append((match.start(), QuestionDate(question[match.start():match.end()], *normalised,
                                                      relative=kind == "relative")))
    return tuple(d for _, d in sorted(found, key=lambda pair: pair[0]))


def normalise_dates(question: str, dates: tuple[QuestionDate, ...]) -> str:
    """`question` with each date written in the API's format (the text the program is generated from)."""
    for found in dates:
        if found.written == found.iso:
            continue
        start = question.find(found.written)
        said_on = re.search(r"\b(?:on|of|from|for|since|until|to|and)\s+$", question[:start])
        iso = found.iso if not found.relative or said_on else f"on {found.iso}"
        question = question[:start] + iso + question[start + len(found.written):]
    return question


def same_span(expression: str, wanted: QuestionDate, now: datetime | None) -> bool:
    """Whether a program's time expression means the days of `wanted` ("2024-02-27" for "feb 27th 2024")."""
    try:
        span = resolve_time(expression, now)
    except KGValueError:
        return False
    return (span.start, span.end, span.pick) == (wanted.span.start, wanted.span.end, "all")


def _normalised(kind: str, match: re.Match, now: datetime | None) -> tuple[str, TimeSpan] | None:
    groups = match.groupdict()
    try:
        if kind == "relative":
            span = resolve_time(match.group(0).replace("most recent", "recent"), now)
            day = span.single_day
            return (day.isoformat(), span) if day is not None else None
        if kind == "month":
            iso = groups.get("iso_month") or f"{groups['year']}-{month_number(groups['month']):02d}"
            return iso, resolve_time(iso, None)
        if groups.get("iso"):
            day = date.fromisoformat(groups["iso"])
        elif groups.get("us_month"):
            day = date(int(groups["year"]), int(groups["us_month"]), int(groups["us_day"]))
        else:
            day = date(int(groups["year"]), month_number(groups["month"]), int(groups["day"]))
    except (KGValueError, ValueError):  # an impossible date ("february 30, 2024") or no query time: not a date
        return None
    return day.isoformat(), TimeSpan(day, day)

