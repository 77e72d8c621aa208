"""The web pages of the answer gate's fit questions (training/gate/web_questions.py builds the questions): a KG fact as
pages write it, and the five kinds of page that state it, compare it, ask about it or leave it out; seeded, so a
rebuild is byte-identical."""
from __future__ import annotations

import html
import random
import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Iterable, Sequence

from models.date_words import MONTHS

# Slot keys in the order a subject names them; start/end are the month's bounds, already named by "month".
_SUBJECT_KEYS = ("entity", "movie", "person", "character", "artist", "song", "company", "ticker", "team", "rank",
                 "year", "id", "month", "date")
_SITES = {
    "movie": ("filmledger.example.com", "cinemarecords.example.org", "screenfacts.example.net"),
    "music": ("chartnotes.example.com", "soundarchive.example.org", "musicfacts.example.net"),
    "finance": ("marketdesk.example.com", "tickerwatch.example.org", "stockfacts.example.net"),
    "sports": ("boxscores.example.com", "matchcentre.example.org", "scorefacts.example.net"),
    "open": ("worldalmanac.example.org", "factbook.example.com", "knowledgebase.example.net"),
}
_QA_SITE = "askanything.example.com"
# Labels the template id does not spell well; the rest are the id without its domain prefix, "_" as a space.
_LABELS = {
    "movie_year": "release year", "movie_length": "running time (minutes)", "movie_title": "exact title",
    "movie_rating": "average rating", "person_birthday": "birthday", "person_acted_count": "number of films acted in",
    "person_directed_count": "number of films directed", "person_oscar_nominations": "oscar nominations",
    "person_oscar_wins": "oscar wins", "movie_director": "director", "movie_composer": "composer",
    "crew_job": "job on the film", "director_birthday": "director's birthday", "character_actor": "played by",
    "actor_character": "character played", "cast_size": "credited cast size", "actor_movie_count": "films acted in",
    "actor_latest_movie": "most recent film", "actor_first_movie": "first film", "franchise_titles": "titles",
    "movie_by_id": "movie with this id", "person_by_id": "person with this id", "best_picture": "best picture winner",
    "movie_oscar_categories": "oscar categories won", "movie_oscar_count": "oscar nominations",
    "band_formed": "year formed", "artist_country": "country", "band_size": "number of members",
    "band_members": "members", "artist_works": "songs", "song_author": "written by",
    "song_country": "country of first release", "artist_first_song": "earliest song",
    "billboard_rank_song": "song at this rank", "billboard_rank_artist": "artist at this rank",
    "billboard_song_rank": "hot 100 rank", "billboard_song_weeks": "weeks on the hot 100",
    "billboard_song_peak": "peak position", "billboard_song_last_week": "rank the week before",
    "grammy_song_count": "grammy wins", "grammy_album_of_the_year": "album of the year",
    "grammy_best_new_artist": "best new artist", "grammy_song_of_the_year": "song of the year",
    "grammy_person_years": "years with a grammy win", "grammy_person_count": "grammy awards won",
    "best_new_artists": "best new artist winners", "best_new_artist_count": "best new artist winners (count)",
    "price_open": "opening price", "price_close": "closing price", "price_high": "day's high",
    "price_low": "day's low", "price_volume": "trading volume", "close_yesterday": "previous day's close",
    "month_average_close": "average closing price", "month_highest_close": "highest closing price",
    "market_cap": "market capitalisation", "pe_ratio": "p/e ratio", "eps": "earnings per share",
    "info_longName": "full company name", "info_previousClose": "previous close", "info_currentPrice":
    "current price", "info_volume": "volume today", "info_trailingPE": "trailing p/e", "info_trailingEps":
    "trailing eps", "info_dividendRate": "annual dividend", "info_dividendYield": "dividend yield",
    "info_fiftyTwoWeekHigh": "52-week high", "info_fiftyTwoWeekLow": "52-week low",
    "last_dividend_date": "last dividend paid on", "last_dividend_amount": "last dividend amount",
    "dividends_2023": "dividends paid in the last full year", "company_ticker": "ticker symbol",
    "company_listed_name": "listed name", "minute_bar_count": "one-minute bars recorded",
    "minute_high": "highest one-minute price", "nba_pts": "points scored", "nba_opponent": "opponent",
    "nba_opponent_pts": "points allowed", "nba_result": "result", "nba_venue": "venue",
    "nba_ast": "assists", "nba_reb": "rebounds", "nba_tov": "turnovers", "nba_fg3m": "three-pointers made",
    "nba_play_by_play_events": "play-by-play events", "nba_last_opponent": "last opponent",
    "nba_last_points": "points in the last game", "soccer_gf": "goals scored", "soccer_ga": "goals conceded",
    "soccer_venue": "venue", "soccer_last_opponent": "last opponent",
    "soccer_last_goals": "goals in the last game", "soccer_next_opponent": "next opponent",
    "soccer_next_date": "next match date", "open_area_km2": "area (square kilometres)",
    "open_born": "born", "open_grand_slam_singles_titles": "grand slam singles titles",
    "open_admitted_to_union": "admitted to the union", "open_founder_birthplace": "founder's birthplace",
    "open_founder_born": "founder's birth date", "open_capital_population": "population of the capital",
    "open_capital_country": "country of the capital", "open_largest_city_population":
    "population of the largest city", "open_population_estimate": "estimated population",
}
_PREFIXES = ("movie_", "open_", "info_", "nba_", "soccer_", "artist_", "person_", "song_", "company_")
_FILLER = (
    "Figures on this page are compiled from public listings and checked by our editors.",
    "Spotted a mistake? Use the feedback link at the bottom of the page and we will look into it.",
    "This entry is part of our reference collection and is updated when new information comes in.",
    "Related entries are linked below; values may differ slightly between sources.",
    "Our editors keep this page short: the key facts first, the background after.",
    "See the full profile for more details, sources and the edit history of this entry.",
    "Values are shown as the original source reports them; rounding may differ from other sites.",
    "Entries are reviewed regularly, but some details may lag behind the latest announcements.",
    "Readers often ask about the same facts, so the most requested ones are gathered at the top.",
    "Background, history and context for this entry can be found in the sections that follow.",
    "Where sources disagree, we list the figure most widely reported and note the alternatives.",
    "This page is maintained by volunteers; corrections with a source are always welcome.",
)
_QA_LEADS = ("Best answer:", "Top answer (voted by readers):", "Answered by a community member:")


@dataclass(frozen=True)
class Fact:
    """One template filling: who it is about, which attribute, and the value as a page writes it."""

    template: str
    domain: str
    subject_key: tuple  # the filling's slots, sorted: fillings sharing it are about the same thing
    subject: str  # as a page names it ("Inception", "AAPL on 2024-01-10")
    label: str
    value: str  # display text, original case
    expected: tuple


def _number_text(value) -> str:
    if isinstance(value, float):
        rounded = round(value, 2) if abs(value) >= 1 else round(value, 4)
        return str(int(rounded)) if rounded == int(rounded) and abs(rounded) >= 1000 else str(rounded)
    return str(value)


def value_text(expected: Sequence) -> str:
    """The expected items as one display string (numbers rounded as a page would print them)."""
    return ", ".join(_number_text(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else str(v)
                     for v in expected)


_ISO = re.compile(r"^(\d{4})-(\d{2})-(\d{2})$")


def gold_answer(expected: Sequence) -> tuple[str, list[str]]:
    """(answer, alt_ans) for an expected answer: lower-case text, and other spellings of the same value."""
    answer = value_text(expected).lower()
    alts = []
    if len(expected) == 1:
        item = expected[0]
        iso = _ISO.match(str(item))
        if iso:
            alts.append(f"{MONTHS[int(iso[2]) - 1]} {int(iso[3])}, {iso[1]}")
        if isinstance(item, int) and not isinstance(item, bool) and abs(item) >= 10000:
            alts.append(f"{item:,}")
    elif len(expected) > 1:
        items = [value_text([v]).lower() for v in expected]
        alts.append(", ".join(items[:-1]) + " and " + items[-1])
    return answer, [a for a in alts if a != answer]


def label_of(template_id: str) -> str:
    if template_id in _LABELS:
        return _LABELS[template_id]
    name = template_id
    for prefix in _PREFIXES:
        if name.startswith(prefix):
            name = name[len(prefix):]
            break
    return name.replace("_", " ")


def _title(text: str) -> str:
    return " ".join(w if any(c.isupper() for c in w) else w[:1].upper() + w[1:] for w in str(text).split())


def subject_of(slots: dict, entities: Sequence[str]) -> str:
    """How a page names what a filling is about: the entity, then its person or character, then the date."""
    names = []
    for key in _SUBJECT_KEYS:
        if key not in slots:
            continue
        value = str(slots[key])
        if key == "ticker":  # some price templates name the company instead of the ticker
            names.append(value.upper() if len(value) <= 5 else _title(value))
        elif key == "date":
            names.append(f"on {value}")
        elif key == "month":
            names.append(f"in {value}")
        elif key == "rank":
            names.append(f"Hot 100 No. {value}")
        elif key == "id":
            names.append(f"id {value}")
        elif key == "year":
            names.append(f"({value})")
        else:
            names.append(_title(value))
    if not slots or set(slots) == {"year"}:  # "oscars 2011", "grammy best new artists": the entity names it
        names = [_title(entities[0]) if entities else ""]
    return " ".join(n for n in names if n).strip()


def _norm(text: str) -> str:
    # The comparison of tests/test_no_crag_data.py: lower case, runs of non-alphanumerics as one space.
    return " " + " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split()) + " "


def states(text: str, answers: Iterable[str]) -> bool:
    """True when `text` holds any of `answers` as whole words (case and punctuation ignored)."""
    haystack = _norm(text)
    return any(_norm(a).strip() and _norm(a) in haystack for a in answers)


def _modified(query_time: str, days_before: int, rng: random.Random) -> str:
    when = datetime.strptime(query_time, "%m/%d/%Y, %H:%M:%S PT") - timedelta(days=days_before,
                                                                              minutes=rng.randrange(0, 1440))
    days, months = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"), ("Jan", "Feb", "Mar", "Apr", "May", "Jun",
                                                                     "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
    return (f"{days[when.weekday()]}, {when.day:02d} {months[when.month - 1]} {when.year} "
            f"{when:%H:%M:%S} GMT")


def max_page_age(fact: Fact, query_time: str, default: int = 2500) -> int:
    """Days a page about `fact` may be older than the question: none is written before the day it reports
    (a game's score, a day's price), so the cap is the days since the subject's date (at least 1)."""
    slots = dict(fact.subject_key)
    day = slots.get("date") or slots.get("end")
    if not day or not _ISO.match(day):
        return default
    asked = datetime.strptime(query_time, "%m/%d/%Y, %H:%M:%S PT").date()
    return max(1, min(default, (asked - datetime.strptime(day, "%Y-%m-%d").date()).days - 1))


def is_future(fact: Fact, query_time: str) -> bool:
    """True when `fact` reports a day less than three days before the question (or after it): a near miss or an
    unrelated page about it could not yet be written well before the question, so none is shown."""
    day = dict(fact.subject_key).get("date") or dict(fact.subject_key).get("end")
    if not day or not _ISO.match(day):
        return False
    asked = datetime.strptime(query_time, "%m/%d/%Y, %H:%M:%S PT").date()
    return (asked - datetime.strptime(day, "%Y-%m-%d").date()).days < 3


def page_age(fact: Fact, query_time: str, low: int, high: int, rng: random.Random) -> int:
    cap = max_page_age(fact, query_time)
    return rng.randint(min(low, cap), min(high, cap))


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "page"


def _esc(text: str) -> str:
    return html.escape(str(text), quote=False)


def _page(site: str, title: str, body: list[str], rng: random.Random) -> str:
    # Padding sentences carry no facts and no digits: they make pages a realistic ~1-1.5 kB to chunk.
    filler = rng.sample(_FILLER, 5)
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{_esc(title)} - {site}</title></head><body>\n"
            f"<nav class=\"top\"><a href=\"/\">{site}</a> <a href=\"/browse\">Browse</a> "
            "<a href=\"/search\">Search</a></nav>\n"
            f"<main><h1>{_esc(title)}</h1>\n<p class=\"intro\">{filler[0]}</p>\n" + "\n".join(body) +
            f"\n<p class=\"note\">{' '.join(filler[1:])}</p></main>\n"
            f"<footer><a href=\"/privacy\">Privacy</a> | <a href=\"/terms\">Terms</a></footer>\n"
            "</body></html>")


def _sentence(fact: Fact, rng: random.Random) -> str:
    forms = ("The {label} of {subject} is {value}.", "For {subject}, the {label} is listed as {value}.",
             "{Subject}: {label} {value}.", "Records give {value} as the {label} of {subject}.")
    form = rng.choice(forms)
    return form.format(label=fact.label, subject=fact.subject, value=fact.value,
                       Subject=fact.subject[:1].upper() + fact.subject[1:])


def record_page(subject: str, facts: Sequence[Fact], domain: str, query_time: str, days_before: int,
                rng: random.Random, shape: str | None = None) -> dict:
    """A page about one subject listing `facts` (its attributes) as prose, a table, a list or sections."""
    shape = shape or rng.choice(("prose", "table", "list", "sections"))
    site = rng.choice(_SITES[domain])
    if shape == "prose":
        body = [f"<p>{_esc(' '.join(_sentence(f, rng) for f in facts))}</p>"]
    elif shape == "table":
        rows = "".join(f"<tr><th>{_esc(f.label)}</th><td>{_esc(f.value)}</td></tr>" for f in facts)
        body = [f"<table class=\"infobox\"><caption>{_esc(subject)}</caption>{rows}</table>"]
    elif shape == "list":
        items = "".join(f"<li><b>{_esc(f.label[:1].upper() + f.label[1:])}</b>: {_esc(f.value)}</li>"
                        for f in facts)
        body = [f"<h2>Key facts</h2><ul>{items}</ul>"]
    else:
        body = [f"<h2>{_esc(f.label[:1].upper() + f.label[1:])}</h2><p>{_esc(_sentence(f, rng))}</p>" for f in facts]
    title = f"{subject}: " + ", ".join(f.label for f in facts[:2]) if len(facts) <= 2 else f"{subject} - profile"
    snippet = _sentence(facts[0], rng) if facts else f"About {subject}."
    return _result(title, f"https://{site}/{_slug(domain)}/{_slug(subject)}", snippet,
                   _page(site, title, body, rng), query_time, days_before, rng)


def comparison_page(label: str, facts: Sequence[Fact], domain: str, query_time: str, days_before: int,
                    rng: random.Random) -> dict:
    """A table of one attribute across several subjects (one template's fillings)."""
    site = rng.choice(_SITES[domain])
    rows = "".join(f"<tr><td>{_esc(f.subject)}</td><td>{_esc(f.value)}</td></tr>" for f in facts)
    title = f"{label[:1].upper() + label[1:]}: comparison"
    body = [f"<table class=\"data\"><thead><tr><th>Name</th><th>{_esc(label)}</th></tr></thead>"
            f"<tbody>{rows}</tbody></table>"]
    return _result(title, f"https://{site}/compare/{_slug(label)}", _sentence(facts[0], rng),
                   _page(site, title, body, rng), query_time, days_before, rng)


def qa_page(question: str, fact: Fact, query_time: str, days_before: int, rng: random.Random) -> dict:
    """A question-and-answer post whose accepted answer states `fact` (the question in another phrasing)."""
    body = [f"<h2>{_esc(question)}</h2>",
            f"<div class=\"answer\"><p><b>{rng.choice(_QA_LEADS)}</b> {_esc(_sentence(fact, rng))}</p></div>"]
    return _result(question, f"https://{_QA_SITE}/questions/{_slug(question)}", _sentence(fact, rng),
                   _page(_QA_SITE, question, body, rng), query_time, days_before, rng)


def _result(name: str, url: str, snippet: str, page: str, query_time: str, days_before: int,
            rng: random.Random) -> dict:
    return {"page_name": name, "page_url": url, "page_snippet": snippet[:200], "page_result": page,
            "page_last_modified": _modified(query_time, days_before, rng)}


def page_text(result: dict) -> str:
    return " ".join((result["page_name"], result["page_snippet"], result["page_result"]))
