"""Which questions read the public data, which ceremony an award question means, which are shortcuts."""
import pytest

from models.public_data.triggers import (
    AwardLookup, asks_about_nominations, award_lookup, is_shortcut_question, matching_categories, public_domain,
)


@pytest.mark.parametrize("text, expected", [
    ("who won the oscar for best actor in 2012?", AwardLookup("oscar", 2012)),
    ("who directed the movie that won best picture at the 2020 oscars?", AwardLookup("oscar", 2020)),
    ("who hosted the 92nd academy awards?", AwardLookup("oscar", 2020)),
    ("which artist won the grammy for best new artist in 2020?", AwardLookup("grammy", 2020)),
    ("what won album of the year at the 62nd grammys?", AwardLookup("grammy", 2020)),
    ("how many oscars has meryl streep won?", None),  # no year: linked by entity instead
    ("what was the best movie of 2012?", None),  # no award named
])
def test_award_lookup(text, expected):
    assert award_lookup(text) == expected


@pytest.mark.parametrize("text, domain, expected", [
    ("when was the movie inception released?", "movie", "movie"),
    ("who won the oscar for best actor in 2012?", "open", "movie"),  # "oscar" overrides a wrong route
    ("which artist won the grammy for best new artist in 2020?", "music", "music"),
    ("did adele win album of the year?", "music", "music"),
    ("how many members are in the band coldplay?", "music", None),
    ("which company has a larger market cap, msft or aapl?", "finance", "finance"),
    ("what is the p/e ratio of nvda?", "finance", "finance"),
    ("what is the eps of walmart?", "finance", "finance"),
    ("what was the closing price of aapl on 2024-02-27?", "finance", None),
    ("which stock opened higher, people's bank or speech inc?", "finance", None),  # db3's 'pe' substring bug
    ("how many points did the warriors score?", "sports", None),
    ("what is the capital of australia?", "open", None),
])
def test_public_domain(text, domain, expected):
    assert public_domain(text, domain) == expected


def test_shortcut_questions():
    assert is_shortcut_question("who won the oscar for best actor in 2012?", "movie")
    assert is_shortcut_question("which company has a larger market cap, msft or aapl?", "finance")
    assert not is_shortcut_question("when was the movie inception released?", "movie")
    assert not is_shortcut_question("what was the closing price of aapl on 2024-02-27?", "finance")


def test_categories_by_name_or_alias():
    oscar = {"actor in a leading role", "actor in a supporting role", "best picture", "directing", "film editing"}
    assert matching_categories("who won the oscar for best actor in 2012?", oscar) == {"actor in a leading role"}
    assert matching_categories("best supporting actor oscar 2012", oscar) == {"actor in a supporting role"}
    assert matching_categories("who directed the movie that won best picture at the 2020 oscars?", oscar) == \
        {"best picture", "directing"}
    assert matching_categories("what won the 2000 oscar for film editing?", oscar) == {"film editing"}
    assert matching_categories("what did parasite win at the 2020 oscars?", oscar) == set()
    grammy = {"best new artist", "album of the year", "record of the year"}
    assert matching_categories("which artist won the grammy for best new artist in 2020?", grammy) == \
        {"best new artist"}


def test_nomination_questions():
    assert asks_about_nominations("who was nominated for best actor in 2012?")
    assert asks_about_nominations("list the nominees for best picture at the 2020 oscars")
    assert not asks_about_nominations("who won the oscar for best actor in 2012?")
