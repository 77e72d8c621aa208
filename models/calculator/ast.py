"""The calculator's syntax tree: four node types, nothing else can be represented."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Number:
    value: float
    position: int


@dataclass(frozen=True)
class Unary:
    operator: str  # "-" | "+"
    operand: "Node"
    position: int


@dataclass(frozen=True)
class Binary:
    operator: str  # "+" | "-" | "*" | "/" | "**"
    left: "Node"
    right: "Node"
    position: int


@dataclass(frozen=True)
class Call:
    function: str  # one of lexer.FUNCTIONS
    arguments: tuple["Node", ...]
    position: int


Node = Number | Unary | Binary | Call
