"""Expression text -> tokens (numbers, operators, parentheses, commas, function names).

The alphabet is deliberately tiny: anything else (quotes, dots after names, brackets, `_`, `@`, `;`,
a name not on the function whitelist) is a positioned `CalculatorError` here, before any parsing.
Thousands separators are not numbers ("1,234" is two arguments), so the prompt asks for plain digits.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from models.calculator.errors import CalculatorError

FUNCTIONS = ("round", "abs", "min", "max", "sum", "avg", "date")
OPERATORS = ("**", "+", "-", "*", "/", "(", ")", ",")

_NUMBER = re.compile(r"(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?", re.ASCII)
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_SPACE = frozenset(" \t\r\n")


@dataclass(frozen=True)
class Token:
    kind: str  # "number" | "name" | one of OPERATORS | "end"
    text: str
    position: int


def tokenize(expression: str, max_tokens: int = 400) -> list[Token]:
    """The tokens of `expression`, ending with an "end" token.

    Raises:
        CalculatorError: a character or name outside the language, or more than `max_tokens` tokens.
    """
    tokens: list[Token] = []
    index, length = 0, len(expression)
    while index < length:
        char = expression[index]
        if char in _SPACE:
            index += 1
            continue
        if len(tokens) >= max_tokens:
            raise CalculatorError(f"expression longer than {max_tokens} tokens", index, expression)
        number = _NUMBER.match(expression, index)
        if number:
            tokens.append(Token("number", number.group(), index))
            index = number.end()
            continue
        name = _NAME.match(expression, index)
        if name:
            if name.group() not in FUNCTIONS:
                raise CalculatorError(f"unknown name {name.group()[:30]!r} (functions: {', '.join(FUNCTIONS)})",
                                      index, expression)
            tokens.append(Token("name", name.group(), index))
            index = name.end()
            continue
        operator = "**" if expression.startswith("**", index) else char
        if operator not in OPERATORS:
            raise CalculatorError(f"unexpected character {char!r}", index, expression)
        tokens.append(Token(operator, operator, index))
        index += len(operator)
    tokens.append(Token("end", "", length))
    return tokens
