"""The calculator language: values, precedence, functions, limits and positioned errors."""
from __future__ import annotations

import pytest

from models.calculator import CalculatorError, Limits, evaluate, format_number, parse
from models.calculator.ast import Binary, Call, Number, Unary


@pytest.mark.parametrize("expression, value", [
    ("1 + 2 * 3", 7), ("(1 + 2) * 3", 9), ("10 / 4", 2.5), ("2 ** 3 ** 2", 512), ("-2 ** 2", -4),
    ("2 ** -1", 0.5), ("--3", 3), ("+4", 4), ("1e3 + .5", 1000.5), ("7 - 2 - 1", 4), ("8 / 2 / 2", 2),
    ("avg(1, 2, 3, 4)", 2.5), ("sum(1.5, 2.5)", 4), ("min(3, -1, 2)", -1), ("max(3, -1, 2)", 3),
    ("abs(-7.25)", 7.25), ("round(2.675 * 100) / 100", 2.68), ("round(1234.5678, 2)", 1234.57),
    ("round(1234, -2)", 1200), ("(185.2 - 170.0) / 170.0 * 100", (185.2 - 170.0) / 170.0 * 100),
    ("date(2024, 3, 1) - date(2023, 3, 1)", 366), ("max(2.1e12, 3.05e12) - min(2.1e12, 3.05e12)", 0.95e12),
])
def test_values(expression, value):
    assert evaluate(expression) == pytest.approx(value)


def test_tree_shape_follows_precedence():
    tree = parse("1 + 2 * -3")
    assert isinstance(tree, Binary) and tree.operator == "+"
    assert isinstance(tree.right, Binary) and tree.right.operator == "*"
    assert isinstance(tree.right.right, Unary) and isinstance(tree.right.right.operand, Number)
    call = parse("max(1, 2)")
    assert isinstance(call, Call) and call.function == "max" and len(call.arguments) == 2


@pytest.mark.parametrize("expression, fragment, column", [
    ("__import__('os')", "unknown name '__import__'", 1),
    ("().__class__", "unexpected character '.'", 3),
    ("abs.__globals__", "unexpected character '.'", 4),
    ("lambda: 1", "unknown name 'lambda'", 1),
    ("'a' * 3", "unexpected character", 1),
    ("[1, 2]", "unexpected character '['", 1),
    ("x + 1", "unknown name 'x'", 1),
    ("1 % 2", "unexpected character '%'", 3),
    ("1 // 2", "unexpected '/'", 4),
    ("9 ** 9 ** 9", "exponent", 3),
    ("10 ** 101", "exponent 101 exceeds", 4),
    ("1 / (2 - 2)", "division by zero", 3),
    ("0 ** -1", "zero to a negative power", 3),
    ("(-8) ** (1 / 3)", "fractional power", 6),
    ("1e400", "out of range", 1),
    ("1e99 * 1e99", "magnitude", 6),
    ("2 3", "after a complete expression", 3),
    ("(1 + 2", "expected ')'", 7),
    ("max()", "at least one argument", 1),
    ("abs(1, 2)", "takes 1 argument", 1),
    ("round(1, 0.5)", "whole number", 1),
    ("date(2023, 2, 29)", "not a date", 1),
    ("sum(1,)", "unexpected ')'", 7),
    ("١ + 1", "unexpected character", 1),  # non-ASCII digits are not numbers
])
def test_rejections_carry_a_position(expression, fragment, column):
    with pytest.raises(CalculatorError) as caught:
        evaluate(expression)
    assert fragment in str(caught.value)
    assert caught.value.position == column - 1
    assert "^" in str(caught.value)


@pytest.mark.parametrize("expression", ["", "   ", "(" * 200 + "1" + ")" * 200, "-" * 300 + "1",
                                        "1" + "+1" * 300, "9" * 600])
def test_size_and_depth_limits(expression):
    with pytest.raises(CalculatorError):
        evaluate(expression)


def test_limits_are_configurable():
    assert evaluate("2 ** 200", Limits(max_exponent=300)) == 2.0 ** 200
    with pytest.raises(CalculatorError, match="nested deeper than 3"):
        evaluate("((((1))))", Limits(max_depth=3))
    with pytest.raises(CalculatorError, match="must be a string"):
        evaluate(12)  # type: ignore[arg-type]


@pytest.mark.parametrize("value, text", [(3.0, "3"), (-1200.0, "-1200"), (0.1 + 0.2, "0.3"), (2.5, "2.5"),
                                         (1 / 3, "0.3333333333"), (1e20, "1e+20")])
def test_format_number(value, text):
    assert format_number(value) == text
