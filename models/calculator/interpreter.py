"""Syntax tree -> number, under limits. There is no `eval`, no name lookup, no attribute, no call of
anything but the seven functions below: the tree's four node types are all the language has.

Values are Python floats. Every intermediate value is checked against `max_magnitude`, exponents
against `max_exponent`, and the argument count of a call against `max_arguments`, so the work per
expression is bounded by its (already bounded) number of nodes.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import date

from models.calculator.ast import Binary, Call, Node, Number, Unary
from models.calculator.errors import CalculatorError
from models.calculator.parser import parse


@dataclass(frozen=True)
class Limits:
    """Bounds of one evaluation (also what `parse` accepts)."""

    max_chars: int = 500
    max_tokens: int = 400
    max_depth: int = 40
    max_exponent: float = 100.0  # |exponent| of `**`
    max_magnitude: float = 1e100  # |value| of every intermediate result
    max_arguments: int = 100  # of one function call


class _Interpreter:
    def __init__(self, expression: str, limits: Limits):
        self.expression = expression
        self.limits = limits

    def error(self, reason: str, node: Node) -> CalculatorError:
        return CalculatorError(reason, node.position, self.expression)

    def checked(self, value: float, node: Node) -> float:
        if isinstance(value, complex) or not math.isfinite(value):
            raise self.error("the result is not a real number", node)
        if abs(value) > self.limits.max_magnitude:
            raise self.error(f"a value exceeds the magnitude limit {self.limits.max_magnitude:g}", node)
        return float(value)

    def visit(self, node: Node) -> float:
        if isinstance(node, Number):
            return self.checked(node.value, node)
        if isinstance(node, Unary):
            value = self.visit(node.operand)
            return -value if node.operator == "-" else value
        if isinstance(node, Binary):
            return self.binary(node, self.visit(node.left), self.visit(node.right))
        if isinstance(node, Call):
            return self.call(node)
        raise CalculatorError(f"not a calculator node: {type(node).__name__}")

    def binary(self, node: Binary, left: float, right: float) -> float:
        operator = node.operator
        if operator == "+":
            return self.checked(left + right, node)
        if operator == "-":
            return self.checked(left - right, node)
        if operator == "*":
            return self.checked(left * right, node)
        if operator == "/":
            if right == 0:
                raise self.error("division by zero", node)
            return self.checked(left / right, node)
        if operator == "**":
            if abs(right) > self.limits.max_exponent:
                raise self.error(f"exponent {right:g} exceeds the limit {self.limits.max_exponent:g}", node)
            if left == 0 and right < 0:
                raise self.error("zero to a negative power", node)
            if left < 0 and not right.is_integer():
                raise self.error("a negative number to a fractional power", node)
            try:
                return self.checked(left ** right, node)
            except OverflowError:
                raise self.error(f"a value exceeds the magnitude limit {self.limits.max_magnitude:g}", node)
        raise self.error(f"unknown operator {operator!r}", node)

    def call(self, node: Call) -> float:
        if len(node.arguments) > self.limits.max_arguments:
            raise self.error(f"{node.function}() takes at most {self.limits.max_arguments} arguments", node)
        args = [self.visit(argument) for argument in node.arguments]
        function = node.function
        if function in ("min", "max", "sum", "avg"):
            if not args:
                raise self.error(f"{function}() needs at least one argument", node)
            if function == "min":
                return min(args)
            if function == "max":
                return max(args)
            total = self.checked(math.fsum(args), node)
            return total if function == "sum" else self.checked(total / len(args), node)
        if function == "abs":
            self.arity(node, args, 1, 1)
            return abs(args[0])
        if function == "round":
            self.arity(node, args, 1, 2)
            digits = args[1] if len(args) == 2 else 0.0
            if not digits.is_integer() or abs(digits) > 15:
                raise self.error("round()'s digits must be a whole number between -15 and 15", node)
            return self.checked(round(args[0], int(digits)), node)
        if function == "date":
            self.arity(node, args, 3, 3)
            if not all(a.is_integer() for a in args):
                raise self.error("date(year, month, day) takes whole numbers", node)
            try:
                return float(date(int(args[0]), int(args[1]), int(args[2])).toordinal())
            except (ValueError, OverflowError) as exc:
                raise self.error(f"not a date: {exc}", node)
        raise self.error(f"unknown function {function!r}", node)

    def arity(self, node: Call, args: list[float], low: int, high: int) -> None:
        if not low <= len(args) <= high:
            expected = str(low) if low == high else f"{low} or {high}"
            raise self.error(f"{node.function}() takes {expected} argument(s), got {len(args)}", node)


def evaluate(expression: str, limits: Limits = Limits()) -> float:
    """The value of one calculator expression.

    The language: numeric literals (`12`, `3.5`, `1e6`), `+ - * /`, `**` (|exponent| <= max_exponent),
    unary `-`/`+`, parentheses, and the functions round(x[, digits]), abs(x), min(...), max(...),
    sum(...), avg(...), and date(year, month, day) (a day number, so the difference of two dates is
    their distance in days).

    Raises:
        CalculatorError: anything outside the language or beyond a limit, with the position.
    """
    tree = parse(expression, max_chars=limits.max_chars, max_tokens=limits.max_tokens, max_depth=limits.max_depth)
    return _Interpreter(expression, limits).visit(tree)


def format_number(value: float) -> str:
    """A value as an answer would write it: whole numbers without a decimal point, others to 10
    significant digits (so 0.1 + 0.2 reads 0.3)."""
    if value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    text = f"{value:.10g}"
    return text
