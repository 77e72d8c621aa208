"""What an executed program found, checked against what the question asks, before any of it answers.

- kind: the function cannot produce the kind of value asked (a film's budget from a stock-price function, a
  person from a function that returns only numbers and dates): the program is no evidence;
- key: the attribute that produced the program's own value is not the attribute asked (the opponent for "who
  captained"): the value is not the answer, its facts go to the answer step. The attribute phrase of the question
  (its words without the entity names, the dates and the question words) is matched to the key path (the key,
  the function's own words for it, the call's conditions) lexically, then by embedding cosine
  (`kg.key_match_threshold`, chosen by `scripts/sweep_key_match.py`);
- role: a film role the question names ("who directed the movie that won ...") that nothing in the program
  selects: the program answered a first hop only: no evidence;
- place: a "City, State" question found the state itself: no evidence;
- same-title: the program's rows are films of one title that the question's cues (a year, a person) did not tell
  apart, or that the program blended: no evidence, so the answer is "i don't know" unless another source knows.
"""
from __future__ import annotations

import os
import re
from typing import Sequence

import numpy as np

from models.kg.checks.check import NOT_FINAL, PASSED, REFUSED, Check
from models.kg.checks.places import QualifiedPlace, is_qualifier
from models.kg.apis.records import key_text
from models.kg.executor import conditions_of
from models.kg.language.ast import Call
from models.text import kg_match_key
from models.verify.question_form import WHERE_TRADED

ALL_KINDS = frozenset({"name", "date", "amount", "price", "place", "number", "text"})
_ROLES = frozenset({"name", "date", "number", "text"})
# what each function's records can answer (data: tests check every registered function has a row)
PRODUCES: dict[str, dict[str, frozenset[str]]] = {
    "movie": {**dict.fromkeys(("get_movie", "get_movie_by_id"), frozenset({"date", "amount", "number", "text",
                                                                           "name"})),
              **dict.fromkeys(("get_person", "get_person_by_id", "get_movie_person_cast", "get_movie_person_crew",
                               "get_movie_person_oscar"), _ROLES)},
    "finance": {**dict.fromkeys(("get_stock_price", "get_stock_minute_prices"), frozenset({"price", "number", "date"})),
                "get_stock_dividend": frozenset({"price", "date"}), "get_stock_market_cap": frozenset({"price"}),
                "get_stock_pe_ratio": frozenset({"number"}), "get_stock_eps": frozenset({"price", "number"}),
                "get_stock_info": ALL_KINDS, "get_company_names": frozenset({"name", "text"})},
    "music": {"get_person": frozenset({"date", "place", "name", "text", "number"}),
              "get_song": frozenset({"date", "name", "place", "text"}),
              **dict.fromkeys(("get_grammy_person", "get_grammy_song"), frozenset({"number", "date"})),
              "get_grammy_year": frozenset({"name", "text"}), "get_grammy_best_new_artists": frozenset({"name",
                                                                                                      "date"}),
              "get_billboard_rank": frozenset({"name", "text", "number", "date"}),
              "get_billboard_song": frozenset({"number", "date", "name"})},
    "sports": {**dict.fromkeys(("get_soccer_on_date", "get_soccer_last_game", "get_soccer_next_game"),
                               frozenset({"date", "number", "name", "text", "place"})),
               **dict.fromkeys(("get_nba_on_date", "get_nba_last_game", "get_nba_play_by_play"), _ROLES)},
    "open": {"get_open": ALL_KINDS},
}
_AMOUNT = re.compile(r"\b(?:budget|box office|gross|grossed|revenue|salary|net worth|cost to (?:make|produce))\b")
_PRICE = re.compile(r"\b(?:(?:stock|share|closing|opening) price|clos(?:e|ed|ing) at|open(?:ed)? at|trad(?:e|ed) at|"
                    r"dividends?|eps|earnings per share|market cap(?:italization)?)\b")
_NAME = re.compile(r"(?:who|whom|whose)\b")
_DATE = re.compile(r"(?:when\b|(?:what|which|on what) (?:date|day)\b)")
_PLACE = re.compile(r"(?:where\b|in (?:what|which) (?:country|city|state)\b)")

_STOP = frozenset("""a an the of in on at for to from by with and or is was are were be been do does did done has have
had what which who whom whose when where how why many much it its this that these those there their his her they
he she me my i you your we our as than then about into onto up down out over per vs versus yet still ever just
movie film song track album band artist stock share company team game match player person""".split())
_WORD = re.compile(r"[a-z]+")
_NAME_KEYS = frozenset({"name", "title", "film", "movie name", "player", "artist", "song"})


def asked_kind(question: str) -> str:
    """The kind of value the question asks for, where words say it plainly; "" when they do not."""
    q = " ".join(question.lower().split())
    if WHERE_TRADED.match(q):  # "where did msft close yesterday?": a price, not a place
        return "price"
    for kind, pattern in (("name", _NAME), ("date", _DATE), ("place", _PLACE)):
        if pattern.match(q):
            return kind
    if _AMOUNT.search(q):
        return "amount"
    if _PRICE.search(q):
        return "price"
    return ""


def kind_check(question: str, domain: str, functions: Sequence[str]) -> Check:
    """The last call's function must be able to produce the kind asked (`PRODUCES`)."""
    kind = asked_kind(question)
    if not kind or not functions:
        return Check("kind", PASSED)
    produced = PRODUCES.get(domain, {}).get(functions[-1], ALL_KINDS)
    if kind in produced:
        return Check("kind", PASSED, f"{functions[-1]}() gives {kind} values")
    return Check("kind", REFUSED, f"the question asks for a {kind}; {functions[-1]}() gives only "
                                  f"{', '.join(sorted(produced))} values")


_DIFFERENCE = re.compile(r"^by how (?:many|much)\b|\bdifference (?:between|in)\b|\bhow (?:many|much) (?:more|fewer|less|"
                         r"higher|lower|bigger|smaller|longer|shorter|older|younger)\b|\bmargin\b")


def difference_check(question: str, direct: str) -> Check:
    """A difference asked ("by how many points did they win?") is no single value the program selected: the
    value is not final (its facts still reach the answer step, where a difference is computed from both values)."""
    if direct and _DIFFERENCE.search(" ".join(question.lower().split())):
        return Check("kind", NOT_FINAL, f"the question asks for a difference; {direct!r} is one value")
    return Check("kind", PASSED)


def attribute_phrase(question: str, arguments: Sequence[str], dates: Sequence[str] = ()) -> str:
    """The question's words about the attribute: without the entity names the program passed, the dates as the
    question wrote them, numbers, and the words every question has."""
    named = {w for a in arguments for w in _WORD.findall(kg_match_key(a))}
    text = question.lower()
    for written in dates:
        text = text.replace(written.lower(), " ")
    return " ".join(w for w in _WORD.findall(kg_match_key(text)) if w not in _STOP and w not in named)


def key_path(keys: Sequence[str], aliases: dict, call: Call | None) -> str:
    """The key that produced a value and the function's words for it (its aliases), then after " | " the call's
    own name and conditions: the text the attribute phrase is compared with. The key part alone is matched
    lexically, except for a row's own name ("name", "title"): then the conditions say which one was asked
    (`eq(job, "original music composer")["name"]` answers "who wrote the music")."""
    words, context = [], []
    for key in keys:
        words.append(key_text(key))
        words += [alias for alias, target in (aliases or {}).items() if kg_match_key(target) == kg_match_key(key)]
    if call is not None:
        context.append(call.name.removeprefix("get_").replace("_", " "))
        for arg in call.args:
            for condition in conditions_of(arg):
                context.append(key_text(condition.key))
                if isinstance(condition.value.value, str):
                    (words if _NAME_KEYS & set(map(kg_match_key, keys)) else context).append(condition.value.value)
    return " ".join(words) + (" | " + " ".join(context) if context else "")


class KeyMatcher:
    """Lexical match (shared stems) of the attribute phrase and the key path, else embedding cosine >= threshold.

    Args:
        embedder: `encode(texts, is_query=...)` of unit rows; None = lexical only (no match = cannot judge: pass).
        threshold: the cosine needed (`kg.key_match_threshold`).
    """

    def __init__(self, embedder=None, threshold: float = 0.4):
        self.embedder, self.threshold = embedder, threshold

    def score(self, phrase: str, path: str) -> float | None:
        """1.0 for shared stems, else the cosine (None without an embedder)."""
        if lexical_match(phrase, path.split(" | ")[0]):
            return 1.0
        if self.embedder is None:
            return None
        vectors = np.asarray(self.embedder.encode([phrase, path.replace(" | ", " ")], is_query=True))
        return round(float(vectors[0] @ vectors[1]), 4)

    def check(self, phrase: str, path: str) -> Check:
        if not phrase.strip():
            return Check("key", PASSED, "the question names no attribute beyond the entity")
        score = self.score(phrase, path)
        if score is None:
            return Check("key", PASSED, f"no embedder to compare {phrase!r} with {path!r}")
        if score >= self.threshold:
            return Check("key", PASSED, f"{phrase!r} ~ {path!r} ({score:.2f})")
        return Check("key", NOT_FINAL, f"the value comes from {path!r}, the question asks {phrase!r} "
                                       f"({score:.2f} < {self.threshold:.2f})")


# A film role the question asks about (trigger stems) and the program words that select it (cover stems):
# "who directed the movie that won best picture" answered by the Oscar table's film misses its second hop.
_MOVIE_ROLES = (
    (("direct",), ("direct",)),
    (("compos",), ("compos", "music", "score")),
    (("wrote", "writ", "penned"), ("writ", "wrote", "author", "screenplay", "compos", "music", "lyric")),
    (("produced", "producer"), ("produc",)),  # not "production budget"
    (("starr", "acted", "actor", "actress", "portray", "played", "plays"), ("cast", "actor", "actress", "character",
                                                                          "acted")),
)


def role_check(phrase: str, domain: str, path: str, functions: Sequence[str]) -> Check:
    """A film role the question names ("directed", "composer", "starred") that no function, key or condition of
    the program selects: the program answered a first hop only, so it is no evidence (its facts name the film, and
    the small answer model reads them as the answer: "Parasite" for "who directed"). Movies only: elsewhere "play"
    is a game, not a role."""
    if domain != "movie":
        return Check("role", PASSED)
    asked = _WORD.findall(phrase.lower())
    program = _WORD.findall(kg_match_key(path + " " + " ".join(f.replace("_", " ") for f in functions)))
    for triggers, covers in _MOVIE_ROLES:
        named = next((w for w in asked if w.startswith(triggers)), None)
        if named and not any(w.startswith(covers) for w in program):
            return Check("role", REFUSED, f"the question asks about {named!r}; nothing in the program selects it")
    return Check("role", PASSED)


def lexical_match(phrase: str, path: str) -> bool:
    """A word of the phrase and one of the path share a stem (>= 5 letters in common, or equal words)."""
    ours = set(_WORD.findall(phrase.lower())) - _STOP
    theirs = set(_WORD.findall(kg_match_key(path))) - _STOP - {"get"}
    return any(a == b or (len(a) >= 5 and len(b) >= 5 and len(os.path.commonprefix((a, b))) >= 5) for a in ours for b in theirs)


def place_check(places: tuple[QualifiedPlace, ...], entities: Sequence[str]) -> Check:
    for entity in entities:
        place = is_qualifier(entity, places)
        if place is not None:
            return Check("place", REFUSED, f"the program found {entity!r}, the state of the question's "
                                           f"{place.whole!r}, not the place itself")
    return Check("place", PASSED)


def same_title_check(ambiguous: Sequence[str], row_entities: Sequence[str], counting: bool) -> Check:
    """Films of one title not told apart (the API's note), or the rows of two same-title films blended."""
    if ambiguous:
        return Check("same-title", REFUSED, ambiguous[0])
    if not counting:
        seen = [kg_match_key(e) for e in row_entities]
        twins = sorted({e for e in seen if seen.count(e) > 1 and e})
        if twins:
            return Check("same-title", REFUSED, f"the program's rows blend {seen.count(twins[0])} records titled "
                                                f"{twins[0]!r}")
    return Check("same-title", PASSED)
