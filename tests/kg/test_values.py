"""Typed condition semantics (db3's string comparisons made "false" true and "9" > "10")."""
from __future__ import annotations

from datetime import date

from models.kg.language.ast import Literal
from models.kg.language.values import condition_value, satisfies, sort_value, typed
from models.text import kg_match_key


def holds(op, field, literal: Literal, now=None, equals=None):
    return satisfies(op, typed(field), condition_value(literal, now), equals, field, literal.value)


S = lambda v: Literal("string", v)  # noqa: E731
N = lambda v: Literal("number", v)  # noqa: E731
B = lambda v: Literal("bool", v)  # noqa: E731


def test_typing():
    assert typed("False") is False and typed(True) is True
    assert typed("1,234.5") == 1234.5 and typed("$0.75") == 0.75 and typed(3) == 3.0
    assert typed("2024-02-27 00:00:00 EST") == date(2024, 2, 27)
    assert typed(float("nan")) is None and typed("null") is None
    assert typed("Bong Joon-ho") == "bong joon ho"
    assert typed(["A", "2"]) == ["a", 2.0]


def test_booleans_are_booleans():
    assert holds("eq", False, B(False)) and not holds("eq", False, B(True))
    assert holds("eq", "False", S("false")) and not holds("eq", "False", S("true"))
    assert holds("neq", True, B(False))
    assert not holds("ge", True, B(False))


def test_numbers_are_numbers():
    assert holds("ge", "10", N(9)) and not holds("le", "10", N(9))
    assert holds("eq", 182.63, S("182.63")) and holds("le", 0.68, N(0.75))
    assert not holds("eq", 4, N(5)) and holds("neq", 4, N(5))


def test_dates_compare_as_spans(now):
    assert holds("eq", "2010-07-15", N(2010))
    assert holds("ge", "2024-02-14", S("2024-02-01")) and holds("le", "2024-02-14", S("2024-02-29"))
    assert not holds("ge", "2024-01-31", S("2024-02"))
    assert holds("eq", "2024-02-23", S("recent friday"), now)
    assert holds("eq", "2024-02-20", S("last week"), now) and not holds("eq", "2024-02-26", S("last week"), now)
    assert holds("eq", "1987", S("1987-05-01"))  # a year field against a day of that year


def test_strings_lists_and_missing_values():
    assert holds("eq", "Director", S("director")) and not holds("eq", "Director of Photography", S("director"))
    assert holds("eq", ["Action", "Drama"], S("drama")) and holds("neq", ["Action"], S("drama"))
    assert not holds("neq", ["Action", "Drama"], S("drama"))
    assert not holds("eq", None, S("x")) and not holds("neq", None, S("x"))  # SQL NULL
    assert not holds("ge", "abc", N(3))
    assert holds("eq", "live", S("live"))  # a word that is also a time expression stays a word for text fields


def test_custom_string_equality():
    contains = lambda field, wanted: wanted.lower() in field.lower()  # noqa: E731
    assert holds("eq", "Bruce Wayne / Batman", S("batman"), equals=contains)
    assert holds("eq", ["Bruce Wayne / Batman", "X"], S("batman"), equals=contains)


def test_sort_values_order_mixed_types():
    values = ["b", 10, "2", date(2020, 1, 1), True]
    assert sorted(values, key=sort_value) == ["2", 10, date(2020, 1, 1), True, "b"]


def test_normalize_text():
    assert kg_match_key("Amélie_(2001)!") == "amelie 2001"
    assert kg_match_key("  Bong   Joon-ho ") == "bong joon ho"
