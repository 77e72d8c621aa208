"""One exception root for the whole KG pathway, after jmespath's `exceptions.py`.

`KGError` is the only thing the pipeline catches from the KG pathway: any subclass means "no KG evidence
for this question", never a lost batch. Errors that point into the program text (`KGProgramError`) carry
the program and a character offset and render themselves with the offending line and a caret under the
column, so a log line shows exactly where a generated program went wrong:

    expected ')' or ',' but found name 'eq' (line 1, column 23)
    get_movie("inception" eq(year, 2010))
                          ^

Errors raised while running a program (`KGApiError`, `KGLimitError`, `KGValueError`) have no position.
"""
from __future__ import annotations


class KGError(ValueError):
    """Root of every KG-pathway error."""


class KGProgramError(KGError):
    """An error located in the program text.

    Attributes:
        message: what went wrong, without the position.
        program: the full program text.
        position: character offset of the offending token (len(program) = end of input).
    """

    def __init__(self, message: str, program: str = "", position: int = 0):
        self.message = message
        self.program = program
        self.position = max(0, min(position, len(program)))
        super().__init__(self._render())

    @property
    def line(self) -> int:
        """1-based line of the position."""
        return self.program.count("\n", 0, self.position) + 1

    @property
    def column(self) -> int:
        """1-based column of the position."""
        return self.position - (self.program.rfind("\n", 0, self.position) + 1) + 1

    def _render(self) -> str:
        start = self.program.rfind("\n", 0, self.position) + 1
        end = self.program.find("\n", self.position)
        line_text = self.program[start:] if end < 0 else self.program[start:end]
        caret = " " * (self.column - 1) + "^"
        return f"{self.message} (line {self.line}, column {self.column})\n{line_text}\n{caret}"


class KGSyntaxError(KGProgramError):
    """The text is not a program: an unexpected character or token, or an unterminated string."""


class KGArityError(KGProgramError):
    """A known function called with too few or too many arguments."""


class KGTypeError(KGProgramError):
    """A well-formed program that breaks a typing rule: unknown function, wrong argument kind, a selector
    in the wrong place, `*` or `sort` without a previous line."""


class KGValueError(KGError):
    """A value that cannot be interpreted when the program runs, e.g. an unknown date expression."""


class KGApiError(KGError):
    """The mock API failed (unreachable, timed out, malformed answer)."""


class KGLimitError(KGError):
    """The per-question work budget (API calls, deadline) is spent."""
