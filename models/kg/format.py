"""How KG numbers and nouns are written in facts and answers; one place, so every caller writes them alike.

    format_number(2704359675292.9688)  -> "2,704,359,675,292.97 (about 2.7 trillion)"
    format_number(825532764)           -> "825,532,764 (about 826 million)"
    format_number(43210)               -> "43,210"
    format_number(2012)                -> "2012"        (four digits: years stay as written)
    format_number(183.456789)          -> "183.4568"
    format_number(0.0123456)           -> "0.01235"
    format_number(8.0)                 -> "8"

Rules: whole numbers lose ".0"; thousands separators from five digits on (a four-digit number is far
more often a year than a count); numbers of 1,000 or more keep two decimals (money, market caps), smaller
ones up to four decimals, and numbers below 1 four significant digits; from a million on, the magnitude in words follows in parentheses, so a
model reading "2,704,359,675,292.97" also sees "about 2.7 trillion". `magnitude=False` leaves it out
(for a short answer). `is_plural` / `verb` give facts their agreement ("The directors of X are ...").
"""
from __future__ import annotations

import math

_MAGNITUDES = ((1e12, "trillion"), (1e9, "billion"), (1e6, "million"))
_SINGULAR_ENDINGS = ("ss", "us", "is", "ics")  # class, status, analysis, statistics (treated as one thing)


def format_number(value: int | float, magnitude: bool = True) -> str:
    """A number as facts write it (see the module docstring); NaN and infinities as "unknown"."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if not math.isfinite(value):
            return "unknown"
        if value.is_integer() and abs(value) < 1e15:
            value = int(value)
    if isinstance(value, int):
        text = f"{value:,}" if abs(value) >= 10_000 else str(value)
    elif abs(value) >= 1000:
        text = f"{value:,.2f}".rstrip("0").rstrip(".")
    elif abs(value) >= 1 or value == 0:
        text = f"{value:.4f}".rstrip("0").rstrip(".")
    else:  # below 1: four significant digits, written out (never "1.2e-05")
        text = f"{value:.{4 - 1 - math.floor(math.log10(abs(value)))}f}".rstrip("0").rstrip(".")
    return text + _magnitude_words(value) if magnitude else text


def _magnitude_words(value: int | float) -> str:
    for size, word in _MAGNITUDES:
        if abs(value) >= size:
            return f" (about {value / size:.3g} {word})"
    return ""


def is_plural(noun: str) -> bool:
    """Whether a noun phrase's head word reads as plural ("directors", "cast members of X", "dividends").

    The head is the last word before " of ", " matching ", " for ", " on ", " in " or " with "; short
    abbreviations ("pts") and Latin-looking singulars ("status") count as singular.
    """
    head = f" {noun.strip()} "
    for joint in (" of ", " matching ", " for ", " on ", " in ", " with ", " whose "):
        head = head.split(joint)[0] + " "
    words = head.split()
    if not words:
        return False
    word = words[-1].lower().strip("'\"")
    return len(word) > 3 and word.endswith("s") and not word.endswith(_SINGULAR_ENDINGS)


def verb(noun: str, count: int = 1, singular: str = "is", plural: str = "are") -> str:
    """The verb agreeing with a noun phrase: plural for several items or a plural head word."""
    return plural if count > 1 or is_plural(noun) else singular
