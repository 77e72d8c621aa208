"""Text at the grader boundary, and every normal form the package compares text in.

`safe_text`: every string the grader hands us goes through it once.

A lone surrogate ("\\ud800") cannot be encoded as UTF-8, so any tokenizer, JSON encoder or HTTP body that
sees one raises; a NUL or other C0 control byte confuses C parsers and prompt templates. Such characters
carry no meaning, so they are replaced or dropped before any component sees the text:
- lone surrogates (U+D800-U+DFFF) become U+FFFD, the replacement character;
- C0 controls except tab, newline and carriage return, and DEL, are dropped (NUL included);
- everything else, all normal Unicode, is kept as is.

Cost: a UTF-8 encode and a byte-level delete, ~40 ms per 10 MB page (pages are most of the input).

The normal forms: each comparison in the package has its own, because each must keep different things (the KG
keeps non-Latin letters, the verifier spells "twelve" as 12, the judge drops "the" and "Jr."). They live here
side by side, each named for what it is for; tests/test_text.py pins every one on the same hostile strings.

| function | keeps | used by |
|---|---|---|
| `strip_accents` | everything but combining marks | the others, the judge |
| `clean` | punctuation; lower case, plain quotes and dashes | the judge (`evaluation/normalize.py`) |
| `words` / `answer_key` | words and decimals / without articles, titles, suffixes | the judge |
| `kg_match_key` | letters of any script and digits | KG string matching (`kg/language/values.py`) |
| `name_key` | ASCII letters and digits, "&" as "and", no apostrophes | public-data names |
| `value_phrase` | digits with `. , % $ -` | OmniRetrieval's exact-value agreement |
| `checkable_words` | ASCII words, numbers without leading zeros or commas, number words as digits | the verifier |
| `judge_words` | ASCII letters, digits, decimal points | training's context judges |
"""
from __future__ import annotations

import re
import unicodedata
from typing import Any

from models.date_words import month_name

_SURROGATES = re.compile("[\ud800-\udfff]")
# In UTF-8 these bytes only ever stand for themselves (every byte of a multi-byte sequence is >= 0x80).
_CONTROL_BYTES = bytes([*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20), 0x7F])
REPLACEMENT = "\ufffd"


def safe_text(value: Any) -> str:
    """`value` as a string that every encoder accepts: None -> "", bytes decoded leniently, see module doc."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        value = value.decode("utf-8", errors="replace")
    elif not isinstance(value, str):
        value = str(value)
    try:
        encoded = value.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate
        value = _SURROGATES.sub(REPLACEMENT, value)
        encoded = value.encode("utf-8")
    kept = encoded.translate(None, _CONTROL_BYTES)
    return value if len(kept) == len(encoded) else kept.decode("utf-8")


# ---------------------------------------------------------------------------------------------- normal forms
_PLAIN_PUNCTUATION = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"', "\u2013": "-",
                                    "\u2014": "-", "\u2212": "-"})
ARTICLES = frozenset({"the", "a", "an"})
TITLES = frozenset({"mr", "mrs", "ms", "miss", "dr", "sir", "dame", "prof", "professor"})
SUFFIXES = frozenset({"jr", "sr", "inc", "corp", "corporation", "ltd", "plc", "llc", "co"})
_NOT_WORD = re.compile(r"[^\w\s]")
_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
ISO_DATE = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")
_TOKEN = re.compile(r"\d+(?:\.\d+)?|[a-z]+")


def strip_accents(text: str) -> str:
    """`text` without combining marks ("São" -> "Sao"); letters without a decomposition stay ("ß", "Œ")."""
    return "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))


def clean(text: str) -> str:
    """Lowercase, no diacritics, typographic quotes and dashes made plain, spaces collapsed."""
    text = strip_accents(text or "").lower()
    return " ".join(text.translate(_PLAIN_PUNCTUATION).split())


def words(text: str) -> list[str]:
    """The words and numbers of a text (apostrophes, hyphens and punctuation split words; "'s" dropped)."""
    text = re.sub(r"'s\b", "", clean(text))
    return re.findall(r"[a-z0-9]+(?:\.\d+)?", text)


def answer_key(text: str) -> str:
    """Words joined by single spaces without leading articles and personal titles, or trailing company and
    name suffixes (the judge's form of an answer)."""
    tokens = words(text)
    while tokens and (tokens[0] in ARTICLES or tokens[0] in TITLES):
        tokens = tokens[1:]
    while tokens and tokens[-1] in SUFFIXES:
        tokens = tokens[:-1]
    return " ".join(tokens) or " ".join(words(text))


def kg_match_key(text: Any) -> str:
    """Lower case, accents and punctuation removed, `_` as a space, whitespace collapsed (letters of every
    script kept: the KG's names are matched in this form)."""
    text = strip_accents(str(text)).lower().replace("_", " ")
    return " ".join(_NOT_WORD.sub(" ", text).split())


def name_key(text: str) -> str:
    """The form names are compared in: accents dropped, lower case, '&' as 'and', apostrophes removed,
    every other non-alphanumeric run a single space. "The King's Speech" -> "the kings speech"."""
    text = strip_accents(text or "").lower().replace("&", " and ")
    text = re.sub(r"['\u2019`]", "", text)
    return re.sub(r"[^0-9a-z]+", " ", text).strip()


def value_phrase(text: str) -> str:
    """Lower case with the characters of a value kept (`. , % $ -`) and every other run a single space."""
    return " ".join(re.sub(r"[^\w.,%$-]+", " ", (text or "").lower()).split())


def checkable_words(text: str) -> str:
    """Lowercase ASCII words and plain numbers (no leading zeros, no thousands commas, "twelve" as 12),
    single-spaced; an ISO date is followed by its month name, so "2010-07-15" also matches "July 15, 2010"."""
    text = unicodedata.normalize("NFKD", text or "").encode("ascii", "ignore").decode("ascii").lower()
    text = ISO_DATE.sub(lambda m: f"{m.group(0)} {month_name(int(m.group(2)))}", text)
    text = _THOUSANDS.sub("", text)
    return " ".join(_checkable_word(t) for t in _TOKEN.findall(text))


def _checkable_word(token: str) -> str:
    if token.isdigit():
        return str(int(token))
    return _NUMBER_WORDS.get(token, token)


def judge_words(text: str) -> str:
    """Lowercase words and numbers separated by single spaces (a decimal point inside a number is kept)."""
    text = re.sub(r"[^a-z0-9.]+", " ", (text or "").lower())
    text = re.sub(r"(?<!\d)\.|\.(?!\d)", " ", text)
    return " ".join(text.split())
