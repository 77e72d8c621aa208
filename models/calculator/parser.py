"""Tokens -> syntax tree, by a Pratt parser (top-down operator precedence).

Precedence, loosest first, as in Python: `+ -` < `* /` < unary `- +` < `**` (right-associative, and
binding tighter than a unary minus on its left: `-2**2` is -4, `2**-1` is 0.5). Nesting depth is counted
on every recursive descent, so `((((...` or `-----...` beyond `max_depth` is a `CalculatorError`, never a
RecursionError.
"""
from __future__ import annotations

import math

from models.calculator.ast import Binary, Call, Node, Number, Unary
from models.calculator.errors import CalculatorError
from models.calculator.lexer import Token, tokenize

_BINDING = {"+": 10, "-": 10, "*": 20, "/": 20, "**": 40}
_UNARY_BINDING = 30


class _Parser:
    def __init__(self, expression: str, tokens: list[Token], max_depth: int):
        self.expression = expression
        self.tokens = tokens
        self.index = 0
        self.depth = 0
        self.max_depth = max_depth

    def error(self, reason: str, token: Token) -> CalculatorError:
        return CalculatorError(reason, token.position, self.expression)

    @property
    def current(self) -> Token:
        return self.tokens[self.index]

    def advance(self) -> Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def expect(self, kind: str) -> Token:
        if self.current.kind != kind:
            found = "the end" if self.current.kind == "end" else repr(self.current.text)
            raise self.error(f"expected {kind!r}, found {found}", self.current)
        return self.advance()

    def expression_(self, right_binding: int = 0) -> Node:
        self.depth += 1
        if self.depth > self.max_depth:
            raise self.error(f"expression nested deeper than {self.max_depth} levels", self.current)
        left = self.prefix(self.advance())
        while _BINDING.get(self.current.kind, 0) > right_binding:
            operator = self.advance()
            # `**` is right-associative: its right side may hold another `**` of the same binding.
            binding = _BINDING[operator.kind] - (1 if operator.kind == "**" else 0)
            left = Binary(operator.kind, left, self.expression_(binding), operator.position)
        self.depth -= 1
        return left

    def prefix(self, token: Token) -> Node:
        if token.kind == "number":
            value = float(token.text)
            if not math.isfinite(value):
                raise self.error(f"number {token.text[:20]!r} is out of range", token)
            return Number(value, token.position)
        if token.kind in ("-", "+"):
            return Unary(token.kind, self.expression_(_UNARY_BINDING), token.position)
        if token.kind == "(":
            inner = self.expression_()
            self.expect(")")
            return inner
        if token.kind == "name":
            self.expect("(")
            arguments = []
            if self.current.kind != ")":
                arguments.append(self.expression_())
                while self.current.kind == ",":
                    self.advance()
                    arguments.append(self.expression_())
            self.expect(")")
            return Call(token.text, tuple(arguments), token.position)
        found = "the end of the expression" if token.kind == "end" else repr(token.text)
        raise self.error(f"unexpected {found}", token)


def parse(expression: str, *, max_chars: int = 500, max_tokens: int = 400, max_depth: int = 40) -> Node:
    """The syntax tree of one expression.

    Raises:
        CalculatorError: not a string, too long, too deep, or not in the language (with its position).
    """
    if not isinstance(expression, str):
        raise CalculatorError(f"expression must be a string, got {type(expression).__name__}")
    if len(expression) > max_chars:
        raise CalculatorError(f"expression longer than {max_chars} characters")
    tokens = tokenize(expression, max_tokens)
    if tokens[0].kind == "end":
        raise CalculatorError("empty expression")
    parser = _Parser(expression, tokens, max_depth)
    tree = parser.expression_()
    if parser.current.kind != "end":
        raise parser.error(f"unexpected {parser.current.text!r} after a complete expression", parser.current)
    return tree
