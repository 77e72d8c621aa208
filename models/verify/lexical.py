"""Lexical support: are the answer's numbers, dates and words present in the evidence it came from?

Text is normalised the same way on both sides (case, accents, punctuation, thousands separators, "$"),
number words become digits ("four" -> 4) and an ISO date is also looked for as it is written in prose
("2010-07-15" -> "july 15 2010", "15 july 2010"). A claim is one answer token that is not a stop word; the
support is the share of the answer's novel claims (those that are not words of the question) found in the
evidence; an answer made only of the question's words restates it and proves nothing.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from models.date_words import month_name
from models.text import ISO_DATE, checkable_words as normalize  # the verifier's form (models/text.py)

_STOP = frozenset("""
a an the of in on at to for by with from and or is are was were be been being it its this that these those
as has have had do does did not no yes he she they them his her their there which who whom what when where
why how than then so but if about into over under after before during between while also only just very
answer question he's she's it's i you we our your my me us
""".split())
SENTENCE_BREAK = re.compile(r"(?<=[.!?;])\s+|\n+")


def claims(answer: str) -> list[str]:
    """The answer's checkable tokens, in order, without stop words or repeats ("2010-07-15" is checked as
    2010, july and 15)."""
    text = ISO_DATE.sub(lambda m: f"{m.group(1)} {month_name(int(m.group(2)))} {m.group(3)}", answer or "")
    seen: list[str] = []
    for token in normalize(text).split():
        if token not in _STOP and token not in seen:
            seen.append(token)
    return seen


def stem(token: str) -> str:
    """A crude suffix strip so "stopped"/"stop" and "releases"/"release" compare equal (words only)."""
    if not token.isalpha() or len(token) <= 4:
        return token
    for suffix in ("ing", "ped", "ed", "es", "s"):
        if token.endswith(suffix) and len(token) - len(suffix) >= 3:
            return token[: -len(suffix)]
    return token


def _stems(text: str) -> set[str]:
    return {stem(t) for t in normalize(text).split()}


@dataclass(frozen=True)
class Support:
    """How much of the answer the evidence holds."""

    claims: tuple[str, ...]
    found: tuple[str, ...]
    novel: tuple[str, ...]  # claims that are not words of the question
    sentences: tuple[str, ...]  # evidence sentences holding at least one novel claim (or any claim)
    chunk_share: float = 0.0  # the best single evidence text's share of the checked claims
    sentence_share: float = 0.0  # the best single sentence's share (claims stated together, not scattered)

    @property
    def share(self) -> float:
        """Share of the novel claims found (of all claims when every one is a word of the question): words
        the answer repeats from the question need no support ("The movie ... released in 2010")."""
        checked = self.novel or self.claims
        return sum(c in self.found for c in checked) / len(checked) if checked else 0.0

    @property
    def missing(self) -> tuple[str, ...]:
        return tuple(c for c in (self.novel or self.claims) if c not in self.found)


def support(answer: str, question: str, evidence: Sequence[str], max_sentences: int = 32) -> Support:
    """The answer's claims found anywhere in `evidence`, and the sentences that hold them."""
    answer_claims = claims(answer)
    question_words = _stems(question)
    novel = tuple(c for c in answer_claims if stem(c) not in question_words)
    wanted = {stem(c) for c in (novel or answer_claims)}
    found: set[str] = set()
    sentences: list[str] = []
    best_chunk = best_sentence = 0
    for text in evidence:
        in_chunk: set[str] = set()
        for sentence in SENTENCE_BREAK.split(text or ""):
            hits = _stems(sentence) & {stem(c) for c in answer_claims}
            in_chunk |= hits
            best_sentence = max(best_sentence, len(hits & wanted))
            if hits & wanted and len(sentences) < max_sentences:
                sentences.append(sentence.strip()[:500])
        found |= in_chunk
        best_chunk = max(best_chunk, len(in_chunk & wanted))
    n = max(1, len(wanted))
    return Support(tuple(answer_claims), tuple(c for c in answer_claims if stem(c) in found), novel, tuple(sentences),
                   best_chunk / n, best_sentence / n)


def question_overlap(question: str, found: Support, evidence: Sequence[str]) -> float:
    """The share of the question's content words (first five letters) in the evidence text that holds most of
    the answer's checked claims: a number found in a chunk about something else scores low."""
    q_words = {w[:5] for w in normalize(question).split() if w not in _STOP and len(w) > 2}
    wanted = {stem(c) for c in (found.novel or found.claims)}
    if not q_words or not wanted:
        return 0.0
    best_hits, best = 0, 0.0
    for text in evidence:
        words = normalize(text).split()
        hits = len(wanted & {stem(w) for w in words})
        if hits and hits >= best_hits:
            share = len(q_words & {w[:5] for w in words}) / len(q_words)
            best = share if hits > best_hits else max(best, share)
            best_hits = hits
    return round(best, 4)
