"""Text, number and date normalisation for the normalized judge (pure functions, no judging here).

- `answer_key`: lowercase, no diacritics, straight quotes, hyphens and punctuation as spaces, leading
  articles and personal titles dropped: "The Beatles" -> "beatles", "Bong Joon-ho" -> "bong joon ho".
- `parse_number`: one number as written in an answer: "1,234", "$0.75", "12%", "about 3.5 million",
  "twenty-four"; with the number of decimals it was written with (its precision).
- `find_numbers`: every number in a text, dates and clock times taken out first.
- `parse_date` / `find_dates`: ISO dates, "July 15, 2010", "15 July 2010", "July 2010" and plain years,
  as (year, month or None, day or None).
- `split_list`: "a, b and c" -> ["a", "b", "c"].
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from models.date_words import MONTH_NUMBERS
from models.text import answer_key, clean, words

SMALL_NUMBERS = {word: value for value, word in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
        "ninety": 90}
SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mn": 1e6, "billion": 1e9, "bn": 1e9, "b": 1e9,
          "trillion": 1e12, "tn": 1e12, "t": 1e12}
_MONTH = "|".join(sorted(MONTH_NUMBERS, key=len, reverse=True))
_ISO_DATE = re.compile(r"\b(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})\b")
_US_SLASH_DATE = re.compile(r"\b(\d{1,2})/(\d{1,2})/(\d{4})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{4}})\b")
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?({_MONTH})\.?,?\s+(\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+(?:of\s+)?(\d{{4}})\b")
_MONTH_DAY = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b")
_YEAR = re.compile(r"(?<![\d.,$])\b(1[5-9]\d\d|20\d\d)\b(?![.,]\d)")
_CLOCK = re.compile(r"\b\d{1,2}:\d{2}(?::\d{2})?\b")
_SPELLED = re.compile(r"\b(?:(%s)(?:[\s-](%s))?|(%s))\b" % (
    "|".join(TENS), "|".join(w for w in SMALL_NUMBERS if 0 < SMALL_NUMBERS[w] < 10), "|".join(SMALL_NUMBERS)))
_NUMBER = re.compile(
    r"(?<![\w.])(?P<sign>[-−])?(?P<currency>[$€£¥])?\s?"
    r"(?P<digits>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
    r"(?:\s?(?P<scale>thousand|million|billion|trillion|mn|bn|tn|k|m|b|t)\b)?(?P<percent>\s?(?:%|percent\b))?")


@dataclass(frozen=True)
class Number:
    """A number found in text: its value, the rounding step it was written to (0.01 for 182.63, 100000
    for "3.5 million"), whether it was a percentage, and where it stood in the cleaned text."""

    value: float
    step: float = 1.0
    percent: bool = False
    start: int = 0
    end: int = 0


@dataclass(frozen=True)
class Date:
    """A calendar date at the precision it was written: year only, year and month, or a full date."""

    year: int
    month: int | None = None
    day: int | None = None


def same_word(a: str, b: str) -> bool:
    """The same word, or one a prefix of the other with both 4+ letters ("flows" / "flow", "yields" / "yield")."""
    return a == b or min(len(a), len(b)) >= 4 and (a.startswith(b) or b.startswith(a))


def contains_phrase(text: str, phrase: str) -> bool:
    """True when the normalised phrase occurs in the normalised text as whole words."""
    needle = answer_key(phrase)
    return bool(needle) and f" {needle} " in f" {' '.join(words(text))} "


def _spelled_to_digits(text: str) -> str:
    def replace(match: re.Match) -> str:
        if match.group(3):
            return str(SMALL_NUMBERS[match.group(3)])
        return str(TENS[match.group(1)] + (SMALL_NUMBERS[match.group(2)] if match.group(2) else 0))

    return _SPELLED.sub(replace, text)


def remove_dates(text: str) -> str:
    """The text with every date and clock time replaced by a space (so their digits are not numbers)."""
    for pattern in (_ISO_DATE, _US_SLASH_DATE, _MONTH_DAY_YEAR, _DAY_MONTH_YEAR, _MONTH_YEAR, _MONTH_DAY, _CLOCK):
        text = pattern.sub(" ", text)
    return text


def numbers_text(text: str, *, keep_dates: bool = False) -> str:
    """The text `find_numbers` reads (and its positions index): cleaned, spelled-out small numbers as
    digits, dates and clock times removed unless asked to keep them."""
    text = _spelled_to_digits(clean(text))
    return text if keep_dates else remove_dates(text)


def find_numbers(text: str, *, keep_dates: bool = False) -> list[Number]:
    """Every number in `text`, spelled-out small numbers included; dates and times removed unless asked."""
    text = numbers_text(text, keep_dates=keep_dates)
    found = []
    for match in _NUMBER.finditer(text):
        digits = match.group("digits").replace(",", "")
        value = float(digits)
        decimals = len(digits.split(".")[1]) if "." in digits else 0
        scale = match.group("scale")
        if scale in ("m", "b", "t") and not match.group("currency") and decimals == 0 and " " in match.group(0):
            scale = None  # "5 m" is five metres, not five million
        if scale:
            value *= SCALES[scale]
        step = (SCALES[scale] if scale else 1.0) * 10.0 ** -decimals
        if re.match(r"\s?cents?\b", text[match.end():]):
            value, step = value / 100, step / 100
        if match.group("sign"):
            value = -value
        found.append(Number(value, step, bool(match.group("percent")), match.start(), match.end()))
    return found


def parse_number(text: str) -> Number | None:
    """The single number a short answer states ("$1,234.50", "24 titles", "about 12%"); None if not one."""
    numbers = find_numbers(text)
    return numbers[0] if len(numbers) == 1 else None


def same_number(gold: Number, prediction: Number) -> bool | None:
    """True: equal at the gold's precision, or a scale-word rounding to three significant digits within
    0.5 % ("102 million" for 101,756,123); False: different at the prediction's own precision; None: a
    coarser figure that rounds to the gold (183 for 182.63): V3's "almost exactly" cannot tell it from a
    wrong figure."""
    if abs(gold.value - prediction.value) <= gold.step / 2 + 1e-9:
        return True
    coarse = prediction.step
    if coarse > gold.step and abs(gold.value - prediction.value) <= coarse / 2 + 1e-9:
        relative = abs(gold.value - prediction.value) / max(abs(gold.value), 1e-9)
        # "388 thousand" for 387,758, "102 million" for 101,756,123 (V3's own example): a scale word and
        # three significant digits; "$61 billion" for $60.9 billion drops a digit the gold has
        significant = len(f"{abs(prediction.value) / coarse:.0f}")
        return True if relative <= 0.005 and coarse >= 1000 and significant >= 3 else None
    return False


def _date(year: str, month: int | None = None, day: str | None = None) -> Date | None:
    y, d = int(year), int(day) if day else None
    if month is not None and not 1 <= month <= 12 or d is not None and not 1 <= d <= 31:
        return None
    return Date(y, month, d)


def find_dates(text: str) -> list[Date]:
    """Every date in `text` in reading order (where two forms overlap, the most precise wins); a year
    alone counts as a date."""
    text = clean(text)
    found: list[Date | None] = []
    spans: list[tuple[int, int]] = []

    def take(pattern: re.Pattern, build) -> None:
        for match in pattern.finditer(text):
            if any(s <= match.start() < e or s < match.end() <= e for s, e in spans):
                continue
            spans.append(match.span())
            found.append(build(match))

    take(_ISO_DATE, lambda m: _date(m.group(1), int(m.group(2)), m.group(3)))
    take(_US_SLASH_DATE, lambda m: _date(m.group(3), int(m.group(1)), m.group(2)))
    take(_MONTH_DAY_YEAR, lambda m: _date(m.group(3), MONTH_NUMBERS[m.group(1)], m.group(2)))
    take(_DAY_MONTH_YEAR, lambda m: _date(m.group(3), MONTH_NUMBERS[m.group(2)], m.group(1)))
    take(_MONTH_YEAR, lambda m: _date(m.group(2), MONTH_NUMBERS[m.group(1)]))
    take(_YEAR, lambda m: _date(m.group(1)))
    in_order = sorted(zip(spans, found), key=lambda pair: pair[0])
    return [date for _, date in in_order if date is not None]


def parse_date(text: str) -> Date | None:
    """The date a short answer states, when the whole answer is one date; None otherwise."""
    dates = find_dates(text)
    if len(dates) != 1:
        return None
    leftover = remove_dates(clean(text))
    leftover = _YEAR.sub(" ", leftover)
    return dates[0] if not re.sub(r"[\s,.]+", "", leftover) else None


def split_list(text: str) -> list[str]:
    """The items of an enumeration: split on commas, semicolons, "and" and "&"; empty items dropped."""
    parts = re.split(r"\s*(?:,(?!\d{3}\b)|;|\band\b|&)\s*", clean(text))  # not the comma of 1,234
    return [p.strip(" .") for p in parts if p.strip(" .")]
