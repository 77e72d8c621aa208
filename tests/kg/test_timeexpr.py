"""Time expressions resolved against the query time (2024-02-28, a Wednesday)."""
from __future__ import annotations

from datetime import date

import pytest

from models.kg.language.errors import KGValueError
from models.kg.language.timeexpr import TimeSpan, parse_date, resolve_time

D = date


@pytest.mark.parametrize("text, start, end", [
    ("2024-02-27", D(2024, 2, 27), D(2024, 2, 27)),
    ("2024/2/7", D(2024, 2, 7), D(2024, 2, 7)),
    ("02/27/2024", D(2024, 2, 27), D(2024, 2, 27)),
    ("2024-02-27 00:00:00 EST", D(2024, 2, 27), D(2024, 2, 27)),
    ("2024-02", D(2024, 2, 1), D(2024, 2, 29)),
    ("2023-12", D(2023, 12, 1), D(2023, 12, 31)),
    ("2023", D(2023, 1, 1), D(2023, 12, 31)),
    ("February 2024", D(2024, 2, 1), D(2024, 2, 29)),
    ("feb 27, 2024", D(2024, 2, 27), D(2024, 2, 27)),
    ("today", D(2024, 2, 28), D(2024, 2, 28)),
    ("Yesterday", D(2024, 2, 27), D(2024, 2, 27)),
    ("the day before yesterday", D(2024, 2, 26), D(2024, 2, 26)),
    ("this week", D(2024, 2, 26), D(2024, 2, 28)),
    ("last week", D(2024, 2, 19), D(2024, 2, 25)),
    ("previous week", D(2024, 2, 19), D(2024, 2, 25)),
    ("next week", D(2024, 3, 4), D(2024, 3, 10)),
    ("this month", D(2024, 2, 1), D(2024, 2, 28)),
    ("last month", D(2024, 1, 1), D(2024, 1, 31)),
    ("last year", D(2023, 1, 1), D(2023, 12, 31)),
    ("this year", D(2024, 1, 1), D(2024, 2, 28)),
    ("recent friday", D(2024, 2, 23), D(2024, 2, 23)),
    ("last wednesday", D(2024, 2, 21), D(2024, 2, 21)),  # strictly before the query date
    ("monday", D(2024, 2, 26), D(2024, 2, 26)),
    ("this friday", D(2024, 3, 1), D(2024, 3, 1)),
    ("next wednesday", D(2024, 3, 6), D(2024, 3, 6)),
    ("past 7 days", D(2024, 2, 21), D(2024, 2, 28)),
    ("last 2 weeks", D(2024, 2, 14), D(2024, 2, 28)),
])
def test_spans(text, start, end, now):
    span = resolve_time(text, now)
    assert (span.start, span.end, span.pick, span.intraday) == (start, end, "all", False)


def test_latest_last_and_first_records(now):
    assert resolve_time("latest", now) == TimeSpan(None, D(2024, 2, 28), pick="last", intraday=True)
    assert resolve_time("now", now).intraday
    assert resolve_time("last trading day", now) == TimeSpan(None, D(2024, 2, 27), pick="last")
    assert resolve_time("IPO", None) == TimeSpan(None, None, pick="first")
    assert resolve_time("all time", None) == TimeSpan(None, None)


@pytest.mark.parametrize("text, message", [
    ("next blue moon", "unknown time expression 'next blue moon'"),
    ("2024-02-30", "impossible date '2024-02-30'"),
    ("2024-13", "impossible date '2024-13'"),
])
def test_bad_expressions(text, message, now):
    with pytest.raises(KGValueError) as caught:
        resolve_time(text, now)
    assert str(caught.value) == message


def test_relative_expressions_need_a_query_time():
    with pytest.raises(KGValueError, match="needs a query time"):
        resolve_time("yesterday", None)
    assert resolve_time("2024-02-27", None).single_day == D(2024, 2, 27)  # absolute ones do not


def test_describe_and_contains(now):
    assert resolve_time("2024-02-27", now).describe() == "2024-02-27"
    assert resolve_time("last week", now).describe() == "2024-02-19 to 2024-02-25"
    assert resolve_time("latest", now).describe() == "the latest record"
    assert resolve_time("last trading day", now).describe() == "the last record up to 2024-02-27"
    span = resolve_time("2024-02", now)
    assert span.contains(D(2024, 2, 29)) and not span.contains(D(2024, 3, 1))


def test_parse_date():
    assert parse_date("2024-02-27 00:00:00 EST") == D(2024, 2, 27)
    assert parse_date("1999-02-31") is None
    assert parse_date("yesterday") is None and parse_date(None) is None
