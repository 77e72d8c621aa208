"""The GBNF expression tree and its printing (models/llm/gbnf.py translates into it): literals, character classes, rule
references, sequences, alternations and repeats, built flattened and merged, printed with only the escapes llama.cpp and
xgrammar read alike."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence, Union


@dataclass(frozen=True)
class Lit:
    text: str  # "" is the empty string


@dataclass(frozen=True)
class CharClass:
    ranges: tuple[tuple[int, int], ...]  # inclusive code point ranges, sorted and merged
    negated: bool


@dataclass(frozen=True)
class Ref:
    name: str


@dataclass(frozen=True)
class Seq:
    items: tuple["Node", ...]


@dataclass(frozen=True)
class Alt:
    items: tuple["Node", ...]


@dataclass(frozen=True)
class Rep:
    item: "Node"
    low: int
    high: int | None  # None: unbounded


Node = Union[Lit, CharClass, Ref, Seq, Alt, Rep]
EMPTY = Lit("")


def seq(items: Iterable[Node]) -> Node:
    """A sequence, flattened, with adjacent literals merged and empty ones dropped."""
    out: list[Node] = []
    for item in items:
        for part in item.items if isinstance(item, Seq) else (item,):
            if isinstance(part, Lit) and out and isinstance(out[-1], Lit):
                out[-1] = Lit(out[-1].text + part.text)
            elif part != EMPTY:
                out.append(part)
    return EMPTY if not out else out[0] if len(out) == 1 else Seq(tuple(out))


def alt(items: Iterable[Node]) -> Node:
    """An alternation, flattened and without duplicates (order kept)."""
    out: dict[Node, None] = {}
    for item in items:
        out.update(dict.fromkeys(item.items if isinstance(item, Alt) else (item,)))
    return next(iter(out)) if len(out) == 1 else Alt(tuple(out))


def rep(item: Node, low: int, high: int | None) -> Node:
    if high == 0 or item == EMPTY:
        return EMPTY
    return item if (low, high) == (1, 1) else Rep(item, low, high)


# The escapes every reader takes alike: llama.cpp's parse_char knows \x \u \U \t \r \n \\ \" \[ \] only, and
# xgrammar reads \x greedily (`\x01a` is U+01A), so other control characters go as \u with exactly 4 digits.
# `-` and `^` get no escape (none is common to both): `_class_items` places them where they are plain characters.
_LITERAL_ESCAPES = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_CLASS_ESCAPES = {"\\": "\\\\", "]": "\\]", "[": "\\[", "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_DASH, _CARET = ord("-"), ord("^")


def _char(code: int, escapes: dict[str, str]) -> str:
    c = chr(code)
    if c in escapes:
        return escapes[c]
    if code < 0x20 or code == 0x7F:
        return f"\\u{code:04X}"
    if code >= 0x80 and (0xD800 <= code <= 0xDFFF or not c.isprintable()):  # invisible or not encodable as UTF-8
        return f"\\u{code:04X}" if code <= 0xFFFF else f"\\U{code:08X}"
    return c  # printable text, non-ASCII included, as UTF-8


def _print(node: Node) -> str:
    """`node` as a GBNF rule body (an alternation needs no parentheses at the top)."""
    if isinstance(node, Alt):
        return " | ".join(_print_seq(item) for item in node.items)
    return _print_seq(node)


def _print_seq(node: Node) -> str:
    if isinstance(node, Seq):
        return " ".join(_print_atom(item) for item in node.items)
    return _print_atom(node)


def _print_atom(node: Node) -> str:
    if isinstance(node, Lit):
        return '"' + "".join(_char(ord(c), _LITERAL_ESCAPES) for c in node.text) + '"'
    if isinstance(node, Ref):
        return node.name
    if isinstance(node, CharClass):
        body = "".join(_char(lo, _CLASS_ESCAPES) + ("" if lo == hi else "-" + _char(hi, _CLASS_ESCAPES))
                       for lo, hi in _class_items(node.ranges))
        return "[" + ("^" if node.negated else "") + body + "]"
    if isinstance(node, Rep):
        # a repeated multi-character literal is parenthesised too: which part a suffix binds to is then
        # unambiguous in every GBNF reader
        simple = isinstance(node.item, (Ref, CharClass)) or (isinstance(node.item, Lit) and len(node.item.text) == 1)
        inner = _print_atom(node.item) if simple else f"( {_print(node.item)} )"
        low, high = node.low, node.high
        suffix = {(0, None): "*", (1, None): "+", (0, 1): "?"}.get((low, high))
        if suffix is None:
            suffix = f"{{{low}}}" if low == high else f"{{{low},{'' if high is None else high}}}"
        return inner + suffix
    return f"( {_print(node)} )"  # a sequence or alternation inside a sequence


def _class_items(ranges: Sequence[tuple[int, int]]) -> list[tuple[int, int]]:
    """The ranges in printing order: `-` never a range's end and always first (a plain character there in every
    reader), and no item starting with `^` first (it would negate the class)."""
    items: list[tuple[int, int]] = []
    dash = False
    for lo, hi in ranges:
        if lo <= _DASH <= hi:
            dash = True
            items += [r for r in ((lo, _DASH - 1), (_DASH + 1, hi)) if r[0] <= r[1]]
        else:
            items.append((lo, hi))
    if not dash and items and items[0][0] == _CARET:
        if len(items) > 1:
            items = items[1:] + items[:1]
        elif items[0][1] > _CARET:  # the range ^..z alone: [_-z^]
            items = [(_CARET + 1, items[0][1]), (_CARET, _CARET)]
    return ([(_DASH, _DASH)] if dash else []) + items


def grammar_text(rules: Sequence[tuple[str, Node]]) -> str:
    return "".join(f"{name} ::= {_print(body)}\n" for name, body in rules)
