"""Wrong answers made from right ones (TinyLettuce's recipe): each takes a right (question, answer, evidence) and
returns a wrong one, or None when the example gives it nothing to work with. All are deterministic given `rng`.

- `other_entity`: another value of the same kind from the same evidence (a number for a number, a date for a date,
  a name for a name);
- `changed_value`: the answer's number or date changed;
- `moved_answer`: the answer and its evidence put under another question, which they do not answer;
- `opposite_sentence`: the evidence sentence that states the answer made to say the opposite.
"""
from __future__ import annotations

import random
import re
from typing import Sequence

from evaluation.normalize import find_dates, find_numbers, parse_date, parse_number
from models.text import answer_key

_NAME = re.compile(r"\b[A-Z][\w'’&-]*(?:\s+(?:of\s+|the\s+|de\s+|van\s+|von\s+)?[A-Z][\w'’&-]*)*")
_COPULA = re.compile(r"\b(is|are|was|were|has|have|had)\b")
_MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
           "November", "December")
# capitalised words that start sentences or name dates, not things: never a name on their own
_NOT_NAMES = frozenset("a an the it its this that these those he she they his her their there here in on at for of "
                       "by with and or but as from to is was".split()) | frozenset(m.lower() for m in _MONTHS)


def answer_shape(answer: str) -> str:
    """What kind of value the answer is: "date", "number" or "name"."""
    date = parse_date(answer)
    if date is not None and (date.month or re.fullmatch(r"\s*\d{4}\s*", answer)):
        return "date"
    if parse_number(answer) is not None and len(re.sub(r"[\d.,$%\s-]", "", answer)) <= 12:
        return "number"
    return "name"


def _values(shape: str, text: str) -> list[str]:
    """The values of `shape` written in `text`, as written, in order, without repeats."""
    if shape == "date":
        found = [f"{_MONTHS[d.month - 1]} {d.day}, {d.year}" if d.day else
                 (f"{_MONTHS[d.month - 1]} {d.year}" if d.month else str(d.year)) for d in find_dates(text)]
    elif shape == "number":
        found = [str(int(n.value)) if float(n.value).is_integer() else f"{n.value:.6g}" for n in find_numbers(text)]
    else:
        found = [m.group(0).strip() for m in _NAME.finditer(text)]
        found = [name for name in found if " " in name or name.lower() not in _NOT_NAMES]
    return list(dict.fromkeys(found))


def other_entity(query: str, answer: str, evidence: Sequence[str], rng: random.Random) -> str | None:
    """Another value of the answer's kind from the evidence: not the answer, not a word of the question."""
    shape = answer_shape(answer)
    key, asked = answer_key(answer), set(answer_key(query).split())
    choices = [v for text in evidence for v in _values(shape, text)]
    choices = [v for v in dict.fromkeys(choices)
               if answer_key(v) and answer_key(v) != key and key not in answer_key(v) and answer_key(v) not in key
               and not set(answer_key(v).split()) <= asked]
    return rng.choice(choices) if choices else None


def changed_value(answer: str, rng: random.Random) -> str | None:
    """The answer with its date moved (a year, or a day and a year) or its number changed; None for a name."""
    shape = answer_shape(answer)
    if shape == "date":
        date = parse_date(answer)
        year = date.year + rng.choice((-3, -2, -1, 1, 2, 3))
        if date.day:
            day = (date.day + rng.randint(1, 20)) % 28 + 1
            return f"{_MONTHS[date.month - 1]} {day}, {year}"
        return f"{_MONTHS[date.month - 1]} {year}" if date.month else str(year)
    if shape == "number":
        value = parse_number(answer).value
        changed = value + rng.choice((-1, 1)) * max(1.0, round(abs(value) * rng.choice((0.1, 0.2, 0.5)), 2))
        text = f"{changed:,.2f}".rstrip("0").rstrip(".") if not float(changed).is_integer() else f"{int(changed):,}"
        return text if answer_key(text) != answer_key(answer) else None
    return None


def moved_answer(index: int, queries: Sequence[str], answers: Sequence[str], rng: random.Random) -> str | None:
    """Another example's question whose answer is not this one's (the question this answer is moved to)."""
    key = answer_key(answers[index])
    others = [i for i in range(len(queries)) if i != index and answer_key(answers[i]) != key
              and answer_key(queries[i]) != answer_key(queries[index])]
    return queries[rng.choice(others)] if others else None


def opposite_sentence(answer: str, evidence: Sequence[str]) -> tuple[str, ...] | None:
    """The evidence with every sentence that states the answer negated ("is" -> "is not"; else "It is not true
    that ..."); None when no sentence states it."""
    key = answer_key(answer)
    if not key:
        return None
    changed, found = [], False
    for text in evidence:
        parts = re.split(r"(?<=[.!?])\s+", text)
        out = []
        for sentence in parts:
            if f" {key} " in f" {answer_key(sentence)} ":
                found = True
                negated = _COPULA.sub(lambda m: f"{m.group(1)} not", sentence, count=1)
                out.append(negated if negated != sentence else f"It is not true that {sentence[:1].lower()}{sentence[1:]}")
            else:
                out.append(sentence)
        changed.append(" ".join(out))
    return tuple(changed) if found else None
