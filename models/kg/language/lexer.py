"""Tokens of the regularized API language.

Every token records its start and end offsets and the stream always ends with an `eof` token, so every
parse error can point at a column (jmespath's lexer does the same). Newlines and `;` are both statement
separators (`sep`); other whitespace is skipped. Strings take single or double quotes with backslash
escapes and may not span lines. Numbers are unsigned (`-` is its own token: it marks a descending sort key
as well as a negative value).

A number longer than `MAX_NUMBER_CHARS` is a `KGSyntaxError` (Python's `int()` would raise a bare
`ValueError` past 4,300 digits).

Prefix mode (`partial=True`) serves constrained decoding: text cut off in the middle of a token is not an
error. A string without its closing quote, or a name or number that touches the end of the text, comes
back flagged `partial`, because more characters may still extend it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from models.kg.language.errors import KGSyntaxError

MAX_PROGRAM_CHARS = 10_000  # generated programs are ~100 chars; the cap bounds work on garbage input
MAX_NUMBER_CHARS = 40  # no year, rank or price needs more; Python's int() refuses over 4,300 digits anyway

_PUNCTUATION = {"(": "lparen", ")": "rparen", "[": "lbracket", "]": "rbracket", ",": "comma",
                ":": "colon", "*": "star", "-": "minus", "+": "plus"}
_TOKEN = re.compile(r"""
    (?P<space>[ \t\r\f\v]+)
  | (?P<sep>[\n;])
  | (?P<number>[0-9]+(?:\.[0-9]*)?)
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<string>"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*')
  | (?P<punct>[()\[\],:*+-])
""", re.VERBOSE)
_OPEN_STRING = re.compile(r"""(["'])(?:(?!\1)[^\\\n]|\\.)*\\?\Z""")
_ESCAPE = re.compile(r"\\(.)")


@dataclass(frozen=True)
class Token:
    """One token; `value` is the decoded string, the int/float, or the raw text of punctuation."""

    type: str  # name | string | number | sep | lparen | rparen | lbracket | rbracket | comma | colon | star
    #            | minus | plus | eof
    value: Any
    start: int
    end: int
    raw: str = ""
    partial: bool = False  # prefix mode only: the token may continue past the end of the text

    def describe(self) -> str:
        """How error messages name this token."""
        if self.type == "eof":
            return "end of input"
        if self.type == "sep":
            return "';'" if self.raw == ";" else "line break"
        if self.type in ("name", "string", "number"):
            return f"{self.type} {self.raw}" if self.type != "name" else f"name {self.raw!r}"
        return repr(self.raw)


def tokenize(text: str, partial: bool = False) -> list[Token]:
    """Splits `text` into tokens ending with `eof`.

    Args:
        text: the program.
        partial: prefix mode; an unfinished last token is flagged instead of rejected.

    Raises:
        KGSyntaxError: an unexpected character, an unterminated string, or a program over
            `MAX_PROGRAM_CHARS`.
    """
    if len(text) > MAX_PROGRAM_CHARS:
        raise KGSyntaxError(f"program is longer than {MAX_PROGRAM_CHARS} characters", text, MAX_PROGRAM_CHARS)
    tokens: list[Token] = []
    position, length = 0, len(text)
    while position < length:
        match = _TOKEN.match(text, position)
        if match is None:
            tokens.append(_unmatched(text, position, partial))
            break
        kind, raw = match.lastgroup, match.group()
        end = match.end()
        at_end = end == length
        if kind == "number":
            if raw.endswith(".") and not (partial and at_end):
                raise KGSyntaxError("a number may not end with '.'", text, end - 1)
            if len(raw) > MAX_NUMBER_CHARS:
                raise KGSyntaxError(f"a number may have at most {MAX_NUMBER_CHARS} characters", text, position)
            value = float(raw) if "." in raw else int(raw)
            tokens.append(Token("number", value, position, end, raw, partial and at_end))
        elif kind == "name":
            tokens.append(Token("name", raw, position, end, raw, partial and at_end))
        elif kind == "string":
            tokens.append(Token("string", _ESCAPE.sub(r"\1", raw[1:-1]), position, end, raw))
        elif kind == "sep":
            tokens.append(Token("sep", raw, position, end, raw))
        elif kind == "punct":
            tokens.append(Token(_PUNCTUATION[raw], raw, position, end, raw))
        position = end
    tokens.append(Token("eof", None, length, length))
    return tokens


def _unmatched(text: str, position: int, partial: bool) -> Token:
    """The token at a position the main pattern cannot match: an open string, or an error."""
    char = text[position]
    if char in "\"'":
        if partial and _OPEN_STRING.match(text, position):
            raw = text[position:]
            return Token("string", _ESCAPE.sub(r"\1", raw[1:]), position, len(text), raw, partial=True)
        raise KGSyntaxError("unterminated string", text, position)
    raise KGSyntaxError(f"unexpected character {char!r}", text, position)
