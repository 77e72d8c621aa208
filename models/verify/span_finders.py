"""Where an answer sentence gives what its question asks (models/verify/span.py picks the finder by the question's kind):
one finder per kind of answer (a choice, yes/no, a score, a year, a date, a number, names, a place, a name, a
phrase), each returning the span of the sentence that gives it, and the patterns and helpers they share."""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from models.date_words import MONTH_WORD, month_number
from models.verify.lexical import normalize, stem
from models.verify.question_form import options_of

_STOP_CAPS = frozenset("the a an in on at of for and or to by with from it its this that these those there "
                       "he she they his her their we our i yes no".split())
_MONTH = MONTH_WORD + r"\.?"
_YEAR = r"(?:1[5-9]\d\d|20\d\d)"
DATE_FULL = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{_YEAR}\b|"
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)
_DATE_MONTH = re.compile(rf"\b{_MONTH}\s+{_YEAR}\b", re.IGNORECASE)
YEAR_RE = re.compile(rf"\b{_YEAR}\b")
SCORE = re.compile(r"(?<![\d:.-])\d{1,3}\s*[-\u2013]\s*\d{1,3}(?![\d:.-])")
_NUMBER = re.compile(
    r"(?:[$\u20ac\u00a3]\s?)?(?<![\w.:])\d+(?:,\d{3})*(?:\.\d+)?(?![\w:-])"
    r"(?:\s?%|\s+(?:percent|thousand|million|billion|trillion)\b)?", re.IGNORECASE)
_COPULA = re.compile(r"\b(?:is|was|are|were)\b", re.IGNORECASE)
# A capitalised name: words that start upper-case (initials, hyphens, apostrophes inside), joined by a few
# lower-case particles ("Bank of America", "Leonardo da Vinci").
_NAME = re.compile(r"(?:[A-Z][\w'\u2019.-]*|\d+)(?:\s+(?:(?:of|de|da|del|der|van|von|la|le|and|the|&)\s+)?"
                   r"[A-Z][\w'\u2019.-]*)*")
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201d]{2,80})[\"\u201d]")
HEADING = re.compile(r"\s[|\u2022\u00bb]\s")


@dataclass(frozen=True)
class Span:
    """What the question asks for and the part of the answer that gives it."""

    kind: str  # choice | yes/no | score | year | date | number | names | place | name | phrase
    text: str  # the span; "" when the answer holds none of that kind
    refusal: str = ""  # why the sentence cannot answer at all (a heading, a count of something else)


def find_choice(question, text, q_stems, evidence) -> str:
    said = normalize(text)
    best, where = "", len(said) + 1
    for option in options_of(question):
        words = normalize(option)
        at = said.find(words) if words else -1
        if at >= 0 and at < where:
            best, where = option, at
    return best


def find_yes_no(question, text, q_stems, evidence) -> str:
    m = re.search(r"\b(yes|no)\b", text.lower())
    return m.group(1) if m else ""


def find_score(question, text, q_stems, evidence) -> str:
    m = SCORE.search(text)
    return re.sub(r"\s*[-\u2013]\s*", "-", m.group(0)) if m else ""


def find_year(question, text, q_stems, evidence) -> str:
    for m in YEAR_RE.finditer(text):
        if m.group(0) not in q_stems:
            return m.group(0)
    return ""


def find_date(question, text, q_stems, evidence, facts) -> Span:
    for pattern in (DATE_FULL, _DATE_MONTH):
        for m in pattern.finditer(text):
            if not set(normalize(m.group(0)).split()) <= q_stems:
                return Span("date", m.group(0))
    year = find_year(question, text, q_stems, evidence)
    if not year:
        return Span("date", "")
    structured, other = (_dates_of(year, question, texts) for texts in (evidence[:facts], evidence[facts:]))
    if structured:
        return Span("date", structured[0])
    if len(other) > 1:
        return Span("date", "", f"the evidence gives several dates in {year} ({', '.join(other[:3])}): "
                                f"the answer's bare year cannot say which")
    return Span("date", other[0] if other else year)


def find_number(question, text, q_stems, evidence) -> str:
    dates = [m.span() for m in DATE_FULL.finditer(text)] + [m.span() for m in _DATE_MONTH.finditer(text)]
    for m in _NUMBER.finditer(text):
        if any(a <= m.start() < b for a, b in dates):
            continue
        value = m.group(0).strip()
        digits = normalize(value).split()
        if digits and digits[0] in q_stems and not re.search(r"[$%]|illion|percent", value):
            continue  # a number the question itself names ("in 2023", "top 10")
        return value
    return ""


def find_names(question, text, q_stems, evidence) -> str:
    names = _new_names(_tail(text, q_stems), q_stems)
    if not names:
        return ""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def find_place(question, text, q_stems, evidence) -> str:
    tail = _tail(text, q_stems)
    after = re.search(r"\b(?:in|from|at|near)\s+([A-Z].*)", tail)
    if after:
        # "in Pretoria, South Africa, on 28 June": the places are the comma chain of names after "in";
        # the country (state, region) is its last link, a city its first
        chain = re.match(rf"{_NAME.pattern}(?:,\s*{_NAME.pattern})*", after.group(1)).group(0)
        names = _new_names(chain, q_stems)
        if names and re.search(r"\b(?:country|countries|nation|state|province|region|continent)\b",
                               question.lower()):
            return names[-1]
        if names:
            return names[0]
    names = _new_names(tail, q_stems)
    return names[0] if names else ""


def find_name(question, text, q_stems, evidence) -> str:
    tail = _tail(text, q_stems)
    quoted = _quoted(tail, q_stems)
    if quoted:
        return quoted
    names = _new_names(tail, q_stems)
    return names[0] if names else ""


def find_phrase(question, text, q_stems, evidence) -> str:
    tail = _tail(text, q_stems).strip(" .;:")
    quoted = _quoted(tail, q_stems)
    if quoted:
        return quoted
    return tail if tail and not _only_question_words(tail, q_stems) else ""


def _tail(text: str, q_stems: set[str]) -> str:
    """The part after a restated question: "The capital of Australia is Canberra" -> "Canberra" (when the
    words before the last copula are mostly the question's); else the whole text."""
    matches = list(_COPULA.finditer(text))
    for m in reversed(matches):
        head = [w for w in normalize(text[: m.start()]).split() if w not in _STOP_CAPS]
        if head and sum(stem(w) in q_stems for w in head) / len(head) >= 0.5:
            return text[m.end():].strip()
    return text


def _new_names(text: str, q_stems: set[str]) -> list[str]:
    """Capitalised names in `text` that are not made only of the question's words or stop words."""
    names = []
    for m in _NAME.finditer(text):
        name = m.group(0).strip(" .,'")
        words = name.split()
        while words and words[0].lower() in _STOP_CAPS:
            words = words[1:]
        name = " ".join(words).strip(" .,")
        if name and not name.isdigit() and not _only_question_words(name, q_stems) and name not in names:
            names.append(name)
    return names


def _quoted(text: str, q_stems: set[str]) -> str:
    """The first quoted title in `text` that is not made only of the question's words ("" if none)."""
    return next((q for q in _QUOTED.findall(text) if not _only_question_words(q, q_stems)), "")


def _only_question_words(text: str, q_stems: set[str]) -> bool:
    words = [w for w in normalize(text).split() if w not in _STOP_CAPS]
    return all(stem(w) in q_stems for w in words)


def counts_something_else(text: str, number: str, q_stems: set[str]) -> str:
    """ "10 Ballon d'Or awards" for "how many NBA MVP awards": a capitalised word right after the number that
    the question does not name means the sentence counts something else."""
    at = text.find(number)
    following = text[at + len(number):].split()[:3] if at >= 0 else []
    for word in following:
        if word[:1].isupper() and word.lower().strip(".,;:") not in _STOP_CAPS and \
                not all(stem(w) in q_stems for w in normalize(word).split()):
            return f"the answer counts something the question does not ask about ({' '.join(following)})"
        if not word[:1].isalpha():
            break
    return ""


def _dates_of(year: str, question: str, texts: Sequence[str]) -> list[str]:
    """The different full dates in `year` (as first written, in evidence order) of the sentences that also
    name one of the question's words (compared by their first five letters)."""
    q_words = {w[:5] for w in normalize(question).split() if len(w) > 3 and w not in _STOP_CAPS}
    found: dict[str, str] = {}
    for text in texts:
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", text or ""):
            if not q_words & {w[:5] for w in normalize(sentence).split()}:
                continue
            for m in DATE_FULL.finditer(sentence):
                if year in m.group(0):
                    found.setdefault(_day(m.group(0)), m.group(0))
    return list(found.values())


def _day(date: str) -> str:
    """A date's day as "YYYY-MM-DD" (so "July 15, 2010" and "2010-07-15" are one date)."""
    iso = re.search(r"\d{4}-\d{2}-\d{2}", date)
    if iso:
        return iso.group(0)
    words = re.findall(r"[a-z]+|\d+", date.lower())
    year = next((w for w in words if len(w) == 4 and w.isdigit()), "")
    month = next((month_number(w) for w in words if month_number(w)), 0)
    day = next((w for w in words if w.isdigit() and len(w) <= 2), "0")
    return f"{year}-{month:02d}-{int(day):02d}"
