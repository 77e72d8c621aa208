"""The one error type of the calculator language, with the position it points at."""
from __future__ import annotations


class CalculatorError(ValueError):
    """An expression that is not in the language, or whose value breaks a limit.

    Attributes:
        reason: what is wrong, without the position.
        position: 0-based character offset into the expression (None: the whole expression).
        expression: the expression (possibly shortened for the message).
    """

    def __init__(self, reason: str, position: int | None = None, expression: str = ""):
        self.reason = reason
        self.position = position
        self.expression = expression
        super().__init__(self._message())

    def _message(self) -> str:
        if self.position is None or not self.expression:
            return self.reason
        # Show at most 40 characters either side of the position, with a caret under it.
        start = max(0, self.position - 40)
        window = self.expression[start:self.position + 40].replace("\n", " ")
        return f"{self.reason} at column {self.position + 1}:\n  {window}\n  {' ' * (self.position - start)}^"
