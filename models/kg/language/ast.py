"""Syntax tree of a regularized API program: frozen dataclasses, one per construct.

    program    = statements, one per line (None lines dropped)
    statement  = [ALL] [AVG] head selector*
    head       = Call(name, args) | Sort(conditions, key, descending)
    argument   = Literal | Star | Condition | ListArg
    selector   = SelectKey(name) | Slice(count) | Length()

Every node keeps the character offset where it starts, so the type checker and the executor can point
back into the text. `format_program` prints the canonical form that the decoding grammar generates
(double quotes, `, ` between arguments, one statement per line): parse → format → parse is the identity,
and the in-context examples and training targets are stored in this form.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Union

CONDITION_OPS = ("eq", "neq", "ge", "le")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")


@dataclass(frozen=True)
class Literal:
    """A constant: kind is string | number | none | bool (a bare word in a condition is a string)."""

    kind: str
    value: Any
    position: int = field(default=0, compare=False)
    raw: str = field(default="", compare=False)  # source text of numbers (keeps "2012" vs "2012.0")


@dataclass(frozen=True)
class Star:
    """`*`: the previous statement's output, one call per output item."""

    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Condition:
    """`op(key, value)` with op in eq | neq | ge | le."""

    op: str
    key: str
    value: Literal
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class ListArg:
    """`[...]`: a list of conditions (all must hold) or a list of strings (e.g. several people)."""

    items: tuple[Union[Condition, Literal], ...]
    position: int = field(default=0, compare=False)


Argument = Union[Literal, Star, Condition, ListArg]


@dataclass(frozen=True)
class Call:
    name: str
    args: tuple[Argument, ...]
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Sort:
    """`sort(conditions, ±key)`: filters and orders the previous statement's rows."""

    conditions: tuple[Condition, ...]
    key: str
    descending: bool
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class SelectKey:
    name: str
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Slice:
    """`[:n]`: the first n items."""

    count: int
    position: int = field(default=0, compare=False)


@dataclass(frozen=True)
class Length:
    """`["len"]`: the number of items (never a movie's runtime)."""

    position: int = field(default=0, compare=False)


Selector = Union[SelectKey, Slice, Length]


@dataclass(frozen=True)
class Statement:
    head: Union[Call, Sort]
    selectors: tuple[Selector, ...] = ()
    all_matches: bool = False  # ALL: every entity the search finds, not only the best match
    average: bool = False  # AVG: the mean of the selected numeric values
    position: int = field(default=0, compare=False)
    text: str = field(default="", compare=False)  # the statement's source text, for logs and facts

    @property
    def key(self) -> str | None:
        """The last selected key, if any."""
        keys = [s.name for s in self.selectors if isinstance(s, SelectKey)]
        return keys[-1] if keys else None


@dataclass(frozen=True)
class Program:
    statements: tuple[Statement, ...]
    source: str = field(default="", compare=False)
    domain: str | None = field(default=None, compare=False)  # set by the type check


def format_program(program: Program) -> str:
    """The canonical text of a program ("None" for a program without statements)."""
    if not program.statements:
        return "None"
    return "\n".join(format_statement(s) for s in program.statements)


def format_statement(statement: Statement) -> str:
    prefix = ("ALL " if statement.all_matches else "") + ("AVG " if statement.average else "")
    return prefix + _format_head(statement.head) + "".join(_format_selector(s) for s in statement.selectors)


def _format_head(head: Union[Call, Sort]) -> str:
    if isinstance(head, Sort):
        key = ("-" if head.descending else "") + _format_name(head.key)
        return f"sort({_format_conditions(head.conditions)}, {key})"
    return f"{head.name}({', '.join(_format_argument(a) for a in head.args)})"


def _format_conditions(conditions: tuple[Condition, ...]) -> str:
    if not conditions:
        return "None"
    if len(conditions) == 1:
        return _format_argument(conditions[0])
    return "[" + ", ".join(_format_argument(c) for c in conditions) + "]"


def _format_argument(arg: Argument) -> str:
    if isinstance(arg, Star):
        return "*"
    if isinstance(arg, Condition):
        return f"{arg.op}({_format_name(arg.key)}, {_format_argument(arg.value)})"
    if isinstance(arg, ListArg):
        return "[" + ", ".join(_format_argument(item) for item in arg.items) + "]"
    if arg.kind == "none":
        return "None"
    if arg.kind == "bool":
        return "true" if arg.value else "false"
    if arg.kind == "number":
        return arg.raw or repr(arg.value)
    return _quote(str(arg.value))


def _format_selector(selector: Selector) -> str:
    if isinstance(selector, Length):
        return '["len"]'
    if isinstance(selector, Slice):
        return f"[:{selector.count}]"
    return f"[{_quote(selector.name)}]"


def _format_name(name: str) -> str:
    return name if _IDENTIFIER.match(name) else _quote(name)


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'
