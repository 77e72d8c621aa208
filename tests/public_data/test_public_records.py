"""The "The [attribute] is [value]." serialisation and the name normalisation everything links by."""
import pytest

from models.public_data.records import format_money, join_names, ordinal, serialize
from models.text import name_key


@pytest.mark.parametrize("attributes, expected", [
    ([("title", "Rain Man"), ("director", "Barry Levinson")], "The title is Rain Man. The director is Barry Levinson."),
    ([("lead actors", ["Dustin Hoffman", "Tom Cruise"])], "The lead actors are Dustin Hoffman and Tom Cruise."),
    ([("genres", ["Drama"])], "The genres is Drama."),
    ([("title", "Up"), ("budget", ""), ("cast", []), ("tagline", None)], "The title is Up."),
    ([("film", "Once upon a Time...in Hollywood.")], "The film is Once upon a Time...in Hollywood."),
    ([("release year", 1988)], "The release year is 1988."),
    ([], ""),
])
def test_serialize(attributes, expected):
    assert serialize(attributes) == expected


def test_join_names():
    assert [join_names(x) for x in (["a"], ["a", "b"], ["a", "b", "c"])] == ["a", "a and b", "a, b and c"]


@pytest.mark.parametrize("raw, expected", [
    ("The King's Speech", "the kings speech"),
    ("  THE MATRIX!! ", "the matrix"),
    ("Renée Zellweger", "renee zellweger"),
    ("Tank & The Bangas", "tank and the bangas"),
    ("Once upon a Time...in Hollywood", "once upon a time in hollywood"),
    ("AT&T Inc.", "at and t inc"),
    ("", ""),
])
def test_normalize_name(raw, expected):
    assert name_key(raw) == expected


def test_money_and_ordinals():
    assert format_money(3.06e12) == "$3.06 trillion"
    assert format_money(1.6e8) == "$160 million"
    assert format_money(825532764) == "$826 million"
    assert format_money(1234.5) == "$1,234.50"
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 62, 84, 92, 101)] == \
        ["1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "62nd", "84th", "92nd", "101st"]
