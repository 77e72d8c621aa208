"""The words dates are written with, once: month names, their abbreviations and numbers, and the regular
expressions that find a month in text. Every reader of dates (the verifier's spans and checks, the KG's question
dates, the judge's date matching, the training templates) builds on these.
"""
from __future__ import annotations

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
MONTH_ABBREVIATIONS = tuple(month[:3] for month in MONTHS)  # "jan" ... "dec"
# every spelling of a month -> its number: the full name, the three-letter abbreviation, and "sept"
MONTH_NUMBERS = {**{name: n for n, name in enumerate(MONTHS, 1)},
                 **{short: n for n, short in enumerate(MONTH_ABBREVIATIONS, 1)}, "sept": 9}
# a month written out or abbreviated ("jan", "january", "sept", "june"), no trailing dot, no group
MONTH_WORD = (r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
              r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)")
# the three-letter start of a month's name, as one capturing group (followed by `[a-z]*` it takes any spelling)
MONTH_START = "(" + "|".join(MONTH_ABBREVIATIONS) + ")"


def month_number(word: str) -> int:
    """1-12 for a word whose first three letters start a month's name (lower case: "mar", "march", "sept."),
    else 0."""
    return MONTH_ABBREVIATIONS.index(word[:3]) + 1 if word[:3] in MONTH_ABBREVIATIONS else 0


def month_name(number: int) -> str:
    """"january" for 1 ... "december" for 12; "" for any other number."""
    return MONTHS[number - 1] if 1 <= number <= 12 else ""
