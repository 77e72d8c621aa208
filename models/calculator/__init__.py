"""A safe numerical calculator (ElectricSheep §4.3): the LLM writes an arithmetic expression over the
numbers in the references; this package evaluates it in a language of its own (lexer -> Pratt parser ->
syntax tree -> interpreter with limits), never with `eval`."""
from models.calculator.errors import CalculatorError
from models.calculator.interpreter import Limits, evaluate, format_number
from models.calculator.parser import parse

__all__ = ["CalculatorError", "Limits", "evaluate", "format_number", "parse"]
