"""Which questions the public data can serve, decided from the query text and the routed domain.

- Movie questions always read the store (movie metadata and Oscars answer many of them).
- Music questions read it only when they are about awards: the store holds Grammy nominations, which
  are noise for "how many members are in coldplay?".
- Finance questions read it only when they ask for the statistics the table holds (market cap, EPS,
  P/E). db3 tested the substring 'pe', which fires on "open", "people", "speech"...; here every
  keyword is a whole word.
- An Oscar or Grammy question with a year ("best actor in 2012", "the 92nd academy awards") is also
  answered by that ceremony's records, found by year instead of by entity: such questions often name
  no entity at all. It is read whatever the router said ("oscar" settles the domain), and it is what
  db3's public shortcut answered alone (`is_shortcut_question`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from models.text import name_key

_OSCAR = re.compile(r"\b(oscars?|academy awards?)\b")
_GRAMMY = re.compile(r"\bgrammys?\b")
_MUSIC_AWARD = re.compile(r"\b(grammys?|awards?|nominat\w*|won|win|wins|best new artist|"
                          r"(album|record|song) of the year)\b")
_FINANCE_STATS = re.compile(r"\b(market cap\w*|capitali[sz]ation|market value|eps|earnings per share|"
                            r"p ?e|pe ratio|price to earnings|price earnings)\b")
_NOMINATION = re.compile(r"\b(nominat\w*|nominees?|shortlisted|contenders?)\b")
_YEAR = re.compile(r"\b(19[2-9]\d|20\d\d)\b")
_ORDINAL = re.compile(r"\b(\d{1,3})(?:st|nd|rd|th)\b")
# The Nth ceremony's year: Oscars 1929 + N - 1, Grammys 1959 + N - 1.
_FIRST_CEREMONY = {"oscar": 1929, "grammy": 1959}

# How people name Oscar categories -> words of the official (lower-cased) category.
OSCAR_CATEGORY_ALIASES = {
    "best actor": "actor in a leading role", "leading actor": "actor in a leading role",
    "best actress": "actress in a leading role", "leading actress": "actress in a leading role",
    "supporting actor": "actor in a supporting role", "supporting actress": "actress in a supporting role",
    "best picture": "best picture", "best film": "best picture", "best movie": "best picture",
    "best director": "directing", "directed": "directing", "director": "directing",
    "foreign": "international feature", "international": "international feature",
    "screenplay": "writing", "animated": "animated feature",
}


@dataclass(frozen=True)
class AwardLookup:
    source: str  # oscar | grammy
    year: int  # ceremony year


def award_lookup(text: str) -> AwardLookup | None:
    """The ceremony an Oscar/Grammy question asks about, if it names the award and a year or ordinal."""
    norm = name_key(text)
    source = "oscar" if _OSCAR.search(norm) else "grammy" if _GRAMMY.search(norm) else None
    if source is None:
        return None
    year = _YEAR.search(norm)
    if year:
        return AwardLookup(source, int(year.group(1)))
    number = _ORDINAL.search(text.lower())
    if number and 0 < int(number.group(1)) < 150:
        return AwardLookup(source, _FIRST_CEREMONY[source] + int(number.group(1)) - 1)
    return None


def asks_about_nominations(text: str) -> bool:
    """"who was nominated for ..." needs the losing nominees too; "who won ..." does not."""
    return bool(_NOMINATION.search(name_key(text)))


def matching_categories(text: str, categories: set[str]) -> set[str]:
    """The categories of `categories` a question names, directly ("best new artist") or by alias."""
    norm = f" {name_key(text)} "
    wanted = {target for alias, target in OSCAR_CATEGORY_ALIASES.items() if f" {alias} " in norm}
    found = set()
    for category in categories:
        plain = name_key(category)
        core = plain[5:] if plain.startswith("best ") else plain
        if f" {core} " in norm or any(target in plain for target in wanted):
            found.add(category)
    return found


def public_domain(text: str, domain: str) -> str | None:
    """The store domain a question reads (movie | music | finance), or None when it has no public data."""
    norm = name_key(text)
    if _OSCAR.search(norm) or domain == "movie":
        return "movie"
    if _GRAMMY.search(norm) or (domain == "music" and _MUSIC_AWARD.search(norm)):
        return "music"
    if domain == "finance" and _FINANCE_STATS.search(norm):
        return "finance"
    return None


def is_shortcut_question(text: str, domain: str) -> bool:
    """Whether db3's public shortcut applies: an Oscar/Grammy question with a year, or a finance
    statistics question. Their public facts usually hold the whole answer."""
    return award_lookup(text) is not None or public_domain(text, domain) == "finance"
