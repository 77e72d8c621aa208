"""What form of answer a question asks for, read from its wording alone: the predicates the span finder
(`span.KINDS`) and the code checks (`checkable`) share.

Each `asks_*` takes the question lower-cased with its spaces folded (`fold`); `options_of` and `asks_arithmetic`
fold it themselves. No evidence, no model: a question's form is a property of its text.
"""
from __future__ import annotations

import re


def fold(question: str) -> str:
    """The question lower-cased with runs of whitespace folded to one space (what every predicate reads)."""
    return " ".join((question or "").lower().split())


PLACE_WORDS = ("country", "countries", "city", "cities", "state", "states", "nation", "capital", "continent",
                "province", "town", "region")


NUMBER_WORDS = re.compile(r"\bhow (?:many|much|long|old|tall|big|far|high)\b|\bnumber of\b|\bprice\b|\bmarket cap|"
                           r"\bpercentage\b|\bbudget\b|\brevenue\b|\bsalary\b|\bnet worth\b|\bgross\b|"
                           r"\bpopulation\b|\bvolume\b|\bratio\b|\bdividend\b|\beps\b|\baverage\b|\btotal\b")


def asks_choice(q):
    return bool(options_of(q))


def asks_yes_no(q):
    return bool(re.match(r"(?:is|are|was|were|do|does|did|can|could|has|have|had|will|would|should|shall)\b", q))


def asks_score(q):
    return bool(re.search(r"\bscore\b", q)) and not re.search(r"\bhow many\b", q)


def asks_year(q):
    return bool(re.search(r"\b(?:what|which) year\b|\byear (?:was|did|were)\b", q))


def asks_date(q):
    return q.startswith("when") or bool(re.search(r"\b(?:what|which|on what) (?:date|day)\b", q))


def asks_names(q):
    return bool(re.match(r"(?:name|list) (?:two|three|four|five|some|all|the)\b", q)) or asks_plural(q)


def asks_count(q):
    return bool(re.search(r"\bhow many\b", q))


def asks_number(q):
    return bool(NUMBER_WORDS.search(q))


# "where did msft close yesterday?" asks a price: a trading verb after "where did ..." is no place
WHERE_TRADED = re.compile(r"where (?:did|does|do|will|was|is)\b.*\b(?:close|closed|end|ended|finish|finished|trade|"
                          r"traded|open|opened|settle|settled)\b")


def asks_place(q):
    if WHERE_TRADED.match(q):
        return False
    return bool(re.match(r"where\b", q) or re.search(rf"\b(?:which|what) (?:{'|'.join(PLACE_WORDS)})\b", q))


def asks_name(q):
    return bool(re.match(r"(?:who|whom|whose)\b|what (?:is|was|are|were) the (?:name|title)s? of\b", q) or
                re.match(r"(?:which|what) \w+", q) and not re.match(r"what (?:is|was|are|were|does|did|do)\b", q))


def options_of(question: str) -> list[str]:
    """The two options of an "A or B?" question (lower case), or []. B runs to the question mark; A has as
    many words as B (at most 5), cut at a comma, "between", "by", "than" or the question's verb."""
    q = fold(question)
    m = re.search(r"\s+or\s+([^?,]+?)\s*\??$", q)
    if not m:
        return []
    right = m.group(1).strip()
    before = re.split(r",|\bbetween\b|\bby\b|\bthan\b|\bis\b|\bare\b|\bwas\b", q[: m.start()])[-1].split()
    n = max(1, min(5, len(right.split())))
    left = " ".join(before[-n:]).strip()
    return [left, right] if left and right else []


def asks_plural(q: str) -> bool:
    """ "which countries ...", "what companies ...", "which european countries ...": a plural noun right
    after which/what (or after one adjective) asks for a list."""
    words = q.split()
    if len(words) < 2 or words[0] not in ("which", "what"):
        return False
    for word in words[1:3]:
        if word in _VERBS:
            return False
        if re.fullmatch(r"[a-z]+(?:ies|[^s\W]s)", word):
            return True
    return False


_VERBS = frozenset("is was are were does did do has have had can could will would should gives makes".split())


DIFFERENCE = re.compile(r"\bdifference (?:in (?P<attr1>.+?) )?between (?P<a>.+?) and (?P<b>.+?)(?:'s?)?\s*\??$|"
                         r"\bhow much (?:more|less|higher|lower|bigger|larger|smaller|greater|taller|longer|heavier) "
                         r"(?:is |was |were |are )?"
                         r"(?:the (?P<attr2>.+?) of )?(?P<c>.+?) than (?:that of |the (?:one )?of )?(?P<d>.+?)\s*\??$")
SUM = re.compile(r"\b(?:combined|total|sum of the) (?P<attr>.+?) of (?P<a>.+?) and (?P<b>.+?)\s*\??$")


def asks_arithmetic(question: str) -> bool:
    q = fold(question)
    return bool(DIFFERENCE.search(q) or SUM.search(q))
