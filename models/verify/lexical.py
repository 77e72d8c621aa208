"""Lexical support: are the answer's numbers, dates and words present in the evidence it came from?

Text is normalised the same way on both sides (case, accents, punctuation, thousands separators, "$"),
number words become digits ("four" -> 4) and an ISO date is also looked for as it is written in prose
("2010-07-15" -> "july 15 2010", "15 july 2010"). A claim is one answer token that is not a stop word; the
support is the share of claims found in the evidence. Claims that occur in the question as well are
reported apart (`novel`): an answer made only of the question's words restates it and proves nothing.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Sequence

_STOP = frozenset("""
a an the of in on at to for by with from and or is are was were be been being it its this that these those
as has have had do does did not no yes he she they them his her their there which who whom what when where
why how than then so but if about into over under after before during between while also only just very
answer question he's she's it's i you we our your my me us
""".split())
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_MONTHS = ("january february march april may june july august september october november december").split()
_ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[a-z]+")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")


def normalize(text: str) -> str:
    """Lowercase ASCII words and plain numbers (no leading zeros), single-spaced; an ISO date is followed
    by its month name, so "2010-07-15" also matches "July 15, 2010"."""
    text = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode("ascii").lower()
    text = _ISO_DATE.sub(lambda m: f"{m.group(0)} {_month_name(m)}", text)
    text = _THOUSANDS.sub("", text)
    return " ".join(_word(t) for t in _TOKEN.findall(text))


def _word(token: str) -> str:
    if token.isdigit():
        return str(int(token))
    return _NUMBER_WORDS.get(token, token)


def _month_name(match: re.Match) -> str:
    month = int(match.group(2))
    return _MONTHS[month - 1] if 1 <= month <= 12 else ""


def claims(answer: str) -> list[str]:
    """The answer's checkable tokens, in order, without stop words or repeats ("2010-07-15" is checked as
    2010, july and 15)."""
    text = _ISO_DATE.sub(lambda m: f"{m.group(1)} {_month_name(m)} {m.group(3)}", answer or "")
    seen: list[str] = []
    for token in normalize(text).split():
        if token not in _STOP and token not in seen:
            seen.append(token)
    return seen


@dataclass(frozen=True)
class Support:
    """How much of the answer the evidence holds."""

    claims: tuple[str, ...]
    found: tuple[str, ...]
    novel: tuple[str, ...]  # claims that are not words of the question
    sentences: tuple[str, ...]  # evidence sentences holding at least one novel claim (or any claim)

    @property
    def share(self) -> float:
        return len(self.found) / len(self.claims) if self.claims else 0.0

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(c for c in self.claims if c not in self.found)


def support(answer: str, question: str, evidence: Sequence[str], max_sentences: int = 32) -> Support:
    """The answer's claims found anywhere in `evidence`, and the sentences that hold them."""
    answer_claims = claims(answer)
    question_words = set(normalize(question).split())
    novel = tuple(c for c in answer_claims if c not in question_words)
    wanted = set(novel or answer_claims)
    found: set[str] = set()
    sentences: list[str] = []
    for text in evidence:
        for sentence in _SENTENCE.split(text or ""):
            words = set(normalize(sentence).split())
            hits = words & set(answer_claims)
            found |= hits
            if hits & wanted and len(sentences) < max_sentences:
                sentences.append(sentence.strip()[:500])
    return Support(tuple(answer_claims), tuple(c for c in answer_claims if c in found), novel, tuple(sentences))
