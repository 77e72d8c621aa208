"""Typed signatures of API functions, checked while a program is parsed (before anything runs).

After jmespath's `@signature`: each function declares, per parameter, which kinds of argument it takes,
and a call that breaks the declaration is a `KGArityError` / `KGTypeError` pointing at the argument. The
language package only knows the shapes; `models/kg/apis/` registers the implementations with these
signatures, and the decoding grammar (`grammar.py`) is generated from the same objects, so the three can
never disagree.
"""
from __future__ import annotations

import enum
from dataclasses import dataclass

from models.kg.language.ast import Argument, Call, Condition, ListArg, Star
from models.kg.language.errors import KGArityError, KGTypeError


class ArgKind(enum.Enum):
    STRING = "a string"
    NUMBER = "a number"
    NONE = "None"
    STAR = "*"
    CONDITIONS = "a condition or a list of conditions"
    STRINGS = "a list of strings"
    BOOL = "a boolean"


TEXT = frozenset({ArgKind.STRING, ArgKind.STAR})  # an entity name, or each output of the previous line
OPTIONAL_TEXT = TEXT | {ArgKind.NONE}
CONDITIONS = frozenset({ArgKind.CONDITIONS, ArgKind.NONE})
YEAR = frozenset({ArgKind.NUMBER, ArgKind.STRING, ArgKind.STAR})


@dataclass(frozen=True)
class Param:
    name: str
    kinds: frozenset[ArgKind]
    required: bool = True


@dataclass(frozen=True)
class Signature:
    """Attributes:
        name: the function name used in programs.
        params: positional parameters; optional ones come last.
        searches: the first parameter names an entity looked up by a search API, so `ALL` (every match)
            applies.
        summary: one line for prompts and error messages.
    """

    name: str
    params: tuple[Param, ...]
    searches: bool = False
    summary: str = ""

    def __post_init__(self):
        required = [p.required for p in self.params]
        if required != sorted(required, reverse=True):
            raise ValueError(f"{self.name}: optional parameters must come after required ones")

    @property
    def min_args(self) -> int:
        return sum(p.required for p in self.params)

    def check_argument(self, index: int, arg: Argument, program: str) -> None:
        """Raises KGArityError for an argument past the last parameter, KGTypeError for a wrong kind."""
        if index >= len(self.params):
            raise KGArityError(f"{self.name}() takes at most {len(self.params)} argument"
                               f"{'s' if len(self.params) != 1 else ''}", program, arg.position)
        param = self.params[index]
        kind = argument_kind(arg, program)
        if kind not in param.kinds:
            expected = " or ".join(k.value for k in sorted(param.kinds, key=lambda k: list(ArgKind).index(k)))
            raise KGTypeError(f"argument {param.name!r} of {self.name}() must be {expected}, got {kind.value}",
                              program, arg.position)

    def check_call(self, call: Call, program: str, end: int) -> None:
        """Raises KGArityError when required arguments are missing (`end` = offset of the ')')."""
        if len(call.args) < self.min_args:
            missing = ", ".join(repr(p.name) for p in self.params[len(call.args):self.min_args])
            raise KGArityError(f"{self.name}() is missing argument{'s' if ',' in missing else ''} {missing}",
                               program, end)


def argument_kind(arg: Argument, program: str = "") -> ArgKind:
    """The kind of an argument; a list mixing conditions and strings is a KGTypeError."""
    if isinstance(arg, Star):
        return ArgKind.STAR
    if isinstance(arg, Condition):
        return ArgKind.CONDITIONS
    if isinstance(arg, ListArg):
        kinds = {argument_kind(item) for item in arg.items}
        if kinds <= {ArgKind.CONDITIONS}:
            return ArgKind.CONDITIONS  # [] = no conditions
        if kinds == {ArgKind.STRING}:
            return ArgKind.STRINGS
        raise KGTypeError("a list must hold only conditions or only strings", program, arg.position)
    return _LITERAL_KINDS[arg.kind]


_LITERAL_KINDS = {"string": ArgKind.STRING, "number": ArgKind.NUMBER, "none": ArgKind.NONE, "bool": ArgKind.BOOL}
