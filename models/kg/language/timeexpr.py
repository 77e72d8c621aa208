"""Time expressions in programs ("2024-02-27", "2024-02", "yesterday", "recent friday", "latest", "last week")
resolved to spans of days against the question's query time.

One representation serves every domain: a `TimeSpan` is a closed interval of dates (either end may be
open) plus which records of it are wanted: `all`, or only the `last`/`first` one (the most recent trading
day, the IPO). `intraday` marks "latest"/"now": the newest intraday record, not a daily one. Conditions on
date fields, stock prices and game dates all use it, so "last week" means the same everywhere.

Conventions (CRAG query times are US Pacific wall-clock; no time zones are applied):
- weeks run Monday to Sunday; "last week" is the previous full week;
- "last friday", "recent friday" = the most recent Friday strictly before the query date; "this friday" =
  the Friday of the current week; "next friday" = the first Friday after the query date;
- "last trading day" = the last record strictly before the query date;
- "past 7 days" = the 7 days before the query date plus the query date itself.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta

from models.kg.language.errors import KGValueError

_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
_ISO_DAY = re.compile(r"(\d{4})[-/](\d{1,2})[-/](\d{1,2})(?:[ t].*)?\Z")
_ISO_MONTH = re.compile(r"(\d{4})[-/](\d{1,2})\Z")
_YEAR = re.compile(r"(\d{4})\Z")
_US_DAY = re.compile(r"(\d{1,2})/(\d{1,2})/(\d{4})\Z")
_WEEKDAY = re.compile(r"(last|recent|past|previous|most recent|this|next|coming)?\s*(" + "|".join(_WEEKDAYS) + r")\Z")
_PAST_N = re.compile(r"(?:last|past|previous)\s+(\d{1,4})\s+(day|week|month|year)s?\Z")
_WORDED_FORMATS = ("%B %Y", "%b %Y", "%B %d, %Y", "%b %d, %Y", "%B %d %Y", "%b %d %Y", "%d %B %Y", "%d %b %Y")
_UNIT_DAYS = {"day": 1, "week": 7, "month": 30, "year": 365}

LATEST_WORDS = ("latest", "now", "current", "currently", "right now", "real-time", "realtime", "live",
                "most recent", "recent", "today's latest")
_LAST_RECORD_WORDS = ("last trading day", "previous trading day", "recent trading day", "most recent trading day",
                      "last business day", "previous business day", "previous day", "last day", "recent day",
                      "most recent day", "last session", "previous close")
_FIRST_RECORD_WORDS = ("ipo", "first trading day", "first day", "earliest", "first")
_ALL_WORDS = ("all", "all time", "history", "ever")


@dataclass(frozen=True)
class TimeSpan:
    """A closed interval of days (None = open end) and which of its records are wanted."""

    start: date | None
    end: date | None
    pick: str = "all"  # all | last | first
    intraday: bool = False  # the newest intraday record ("latest", "now")

    def contains(self, day: date) -> bool:
        return (self.start is None or day >= self.start) and (self.end is None or day <= self.end)

    @property
    def single_day(self) -> date | None:
        return self.start if self.start is not None and self.start == self.end else None

    def describe(self) -> str:
        """Human text for facts: "2024-02-27", "2024-02-19 to 2024-02-25", "the latest record"."""
        if self.intraday:
            return "the latest record"
        if self.pick != "all":
            bound = f" up to {self.end.isoformat()}" if self.end else ""
            return f"the {self.pick} record{bound}"
        if self.single_day:
            return self.single_day.isoformat()
        start = self.start.isoformat() if self.start else "the beginning"
        end = self.end.isoformat() if self.end else "the end"
        return f"{start} to {end}"


def parse_date(value) -> date | None:
    """A date from a date/datetime or a string starting "YYYY-MM-DD" (e.g. "2024-02-27 00:00:00 EST")."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    if isinstance(value, str):
        match = _ISO_DAY.match(value.strip().lower())
        if match:
            try:
                return date(int(match[1]), int(match[2]), int(match[3]))
            except ValueError:
                return None
    return None


def year_span(year: int) -> TimeSpan:
    return TimeSpan(date(year, 1, 1), date(year, 12, 31))


def resolve_time(text: str, now: datetime | None) -> TimeSpan:
    """Resolves an absolute or relative time expression.

    Args:
        text: e.g. "2024-02-27", "2024-02", "2024", "february 2024", "yesterday", "last week",
            "recent friday", "latest", "last trading day", "past 7 days", "ipo".
        now: the query time (needed by relative expressions only).

    Raises:
        KGValueError: an unknown expression, an impossible date, a date outside years 1-9999 ("past 9999
            years"), or a relative expression without a query time.
    """
    try:
        return _resolve(text, now)
    except KGValueError:
        raise
    except (OverflowError, ValueError):  # date arithmetic past year 1 or 9999
        raise KGValueError(f"the time expression {text!r} falls outside the calendar") from None


def _resolve(text: str, now: datetime | None) -> TimeSpan:
    expression = " ".join(str(text).lower().replace("_", " ").split()).removeprefix("the ")
    absolute = _absolute(expression)
    if absolute is not None:
        return absolute
    if expression in _ALL_WORDS:
        return TimeSpan(None, None)
    if expression in _FIRST_RECORD_WORDS:
        return TimeSpan(None, None, pick="first")
    if now is None:
        raise KGValueError(f"the time expression {text!r} needs a query time")
    relative = _relative(expression, now.date())
    if relative is None:
        raise KGValueError(f"unknown time expression {text!r}")
    return relative


def _absolute(expression: str) -> TimeSpan | None:
    try:
        if _ISO_DAY.match(expression):
            day = parse_date(expression)
            if day is None:
                raise ValueError
            return TimeSpan(day, day)
        if match := _US_DAY.match(expression):
            day = date(int(match[3]), int(match[1]), int(match[2]))
            return TimeSpan(day, day)
        if match := _ISO_MONTH.match(expression):
            return _month(int(match[1]), int(match[2]))
        if match := _YEAR.match(expression):
            return year_span(int(match[1]))
    except ValueError:
        raise KGValueError(f"impossible date {expression!r}") from None
    for fmt in _WORDED_FORMATS:
        try:
            parsed = datetime.strptime(expression, fmt).date()
        except ValueError:
            continue
        return _month(parsed.year, parsed.month) if "%d" not in fmt else TimeSpan(parsed, parsed)
    return None


def _month(year: int, month: int) -> TimeSpan:
    first = date(year, month, 1)
    following = date(year + month // 12, month % 12 + 1, 1)
    return TimeSpan(first, following - timedelta(days=1))


def _relative(expression: str, today: date) -> TimeSpan | None:
    monday = today - timedelta(days=today.weekday())
    fixed = {
        "today": TimeSpan(today, today),
        "yesterday": TimeSpan(today - timedelta(days=1), today - timedelta(days=1)),
        "day before yesterday": TimeSpan(today - timedelta(days=2), today - timedelta(days=2)),
        "tomorrow": TimeSpan(today + timedelta(days=1), today + timedelta(days=1)),
        "this week": TimeSpan(monday, today),
        "last week": TimeSpan(monday - timedelta(days=7), monday - timedelta(days=1)),
        "next week": TimeSpan(monday + timedelta(days=7), monday + timedelta(days=13)),
        "this month": TimeSpan(today.replace(day=1), today),
        "last month": _month(*_shift_month(today, -1)),
        "next month": _month(*_shift_month(today, 1)),
        "this year": TimeSpan(date(today.year, 1, 1), today),
        "last year": year_span(today.year - 1),
        "next year": year_span(today.year + 1),
    }
    for synonym, canonical in (("past", "last"), ("previous", "last"), ("coming", "next")):
        if expression.startswith(synonym + " ") and expression.replace(synonym, canonical, 1) in fixed:
            expression = expression.replace(synonym, canonical, 1)
    if expression in fixed:
        return fixed[expression]
    if expression in LATEST_WORDS:
        return TimeSpan(None, today, pick="last", intraday=True)
    if expression in _LAST_RECORD_WORDS:
        return TimeSpan(None, today - timedelta(days=1), pick="last")
    if match := _PAST_N.match(expression):
        return TimeSpan(today - timedelta(days=int(match[1]) * _UNIT_DAYS[match[2]]), today)
    if match := _WEEKDAY.match(expression):
        return _weekday(match[1] or "last", _WEEKDAYS.index(match[2]), today, monday)
    return None


def _weekday(which: str, weekday: int, today: date, monday: date) -> TimeSpan:
    if which == "this":
        day = monday + timedelta(days=weekday)
    elif which in ("next", "coming"):
        day = today + timedelta(days=(weekday - today.weekday() - 1) % 7 + 1)
    else:
        day = today - timedelta(days=(today.weekday() - weekday - 1) % 7 + 1)
    return TimeSpan(day, day)


def _shift_month(day: date, months: int) -> tuple[int, int]:
    index = day.year * 12 + day.month - 1 + months
    return index // 12, index % 12 + 1
