"""Text, number and date normalisation of the normalized judge, rule by rule, with exact expectations."""
import pytest

from evaluation.normalize import (Date, contains_phrase, find_dates, find_numbers, answer_key, parse_date,
                                   parse_number, same_number, split_list)


@pytest.mark.parametrize("text,expected", [
    ("The Beatles", "beatles"),
    ("Bong Joon-ho", "bong joon ho"),
    ("Jónsi", "jonsi"),
    ("Dr. Martin Luther King Jr.", "martin luther king"),
    ("Microsoft Corporation", "microsoft"),
    ("  Canberra. ", "canberra"),
    ("Taylor Swift’s album", "taylor swift album"),
    ("The", "the"),  # nothing left after the article: keep the words
])
def test_normalize_text(text, expected):
    assert answer_key(text) == expected


def test_contains_phrase_needs_word_boundaries():
    assert contains_phrase("The capital is Canberra.", "canberra")
    assert not contains_phrase("Canberran politics", "canberra")
    assert contains_phrase("born in Pretoria, South Africa", "South Africa")


@pytest.mark.parametrize("text,value,step", [
    ("1,234", 1234.0, 1.0),
    ("$182.63", 182.63, 0.01),
    ("about 3.5 million", 3.5e6, 1e5),
    ("221k", 221000.0, 1000.0),
    ("$2.87T", 2.87e12, 1e10),
    ("twenty-four", 24.0, 1.0),
    ("four", 4.0, 1.0),
    ("75 cents", 0.75, 0.01),
    ("24 titles", 24.0, 1.0),
])
def test_parse_number_value_and_precision(text, value, step):
    number = parse_number(text)
    assert number.value == pytest.approx(value) and number.step == pytest.approx(step)


def test_percentages_are_marked():
    assert parse_number("12%").percent and parse_number("12 percent").percent and not parse_number("12").percent


def test_dates_and_times_are_not_numbers():
    assert find_numbers("The answer is 16:33:02") == []
    assert [n.value for n in find_numbers("$0.75 on March 14, 2024, and 2024-02-27")] == [0.75]
    assert [n.value for n in find_numbers("on 2024-02-27", keep_dates=True)] != []


def test_five_m_is_metres_not_million():
    assert parse_number("5 m").value == 5.0 and parse_number("$5 m").value == 5e6


@pytest.mark.parametrize("gold,prediction,expected", [
    ("182.63", "182.63", True),
    ("182.63", "182.6312", True),     # finer than the gold, rounds to it
    ("618", "618.23", True),
    ("387,758", "388 thousand", True),  # a scale word within 0.5 %
    ("101756123", "102 million", True),
    ("3,576,873", "3.3M", False),     # V3: a different figure at its own precision
    ("182.63", "183", None),          # a coarser figure that rounds to the gold: not decidable
    ("24", "23", False),
    ("0.75", "75 cents", True),
    ("$60.9 billion", "$61 billion", None),  # a scale word, but only two significant digits
])
def test_same_number(gold, prediction, expected):
    assert same_number(parse_number(gold), parse_number(prediction)) is expected


@pytest.mark.parametrize("text,expected", [
    ("2010-07-15", Date(2010, 7, 15)),
    ("July 15, 2010", Date(2010, 7, 15)),
    ("15 July 2010", Date(2010, 7, 15)),
    ("9th of November, 1989", Date(1989, 11, 9)),
    ("07/15/2010", Date(2010, 7, 15)),
    ("July 2010", Date(2010, 7)),
    ("1975", Date(1975)),
    ("the 1975 album", None),  # more than a date
])
def test_parse_date(text, expected):
    assert parse_date(text) == expected


def test_find_dates_in_reading_order():
    assert find_dates("released in 1975 and again on October 31, 1991") == [Date(1975), Date(1991, 10, 31)]


def test_split_list():
    assert split_list("france, germany, italy, austria and liechtenstein") == [
        "france", "germany", "italy", "austria", "liechtenstein"]
    assert split_list("red & blue; yellow.") == ["red", "blue", "yellow"]
    assert split_list("about 220,000") == ["about 220,000"]
