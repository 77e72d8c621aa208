r"""GBNF for the grammars and regexes the LLM layer constrains decoding with, for OpenAI-compatible servers.

llama.cpp's server reads a request's `grammar` field as GBNF, and vLLM reads `structured_outputs: {"grammar": G}`
and hands it to xgrammar, which takes the same GBNF with a `root ::=` rule; so one text serves both.

Contract:
- `lark_to_gbnf(lark_text)`: the Lark grammar (start rule `start`) as GBNF whose `root` derives exactly the strings
  `start` derives, each terminal standing for every string its pattern matches whole (the reading of lexer-less
  engines such as xgrammar and llama.cpp, and of lark's Earley parser with `lexer="dynamic_complete"`). lark
  itself parses and compiles the grammar, so `?`, `*`, `+`, groups, `[...]`, `~`, templates and imports arrive as
  lark's BNF rules; their alternatives are left-factored again and lark's left-recursive `*` helpers become `+`.
- `regex_to_gbnf(pattern)`: a whole-output Python regex (full match) as a GBNF grammar.
- `constraint_gbnf(constraint)`: the GBNF of a `DecodingConstraint` (its regex, else its grammar), or None.
- Anything the translation cannot keep exact raises ValueError naming the construct instead of being
  approximated: regex lookaround, anchors, backreferences, conditional/atomic groups, possessive repeats,
  `\d` `\w` `\s` classes (Unicode-wide in Python), inline or Lark flags (`i`, `s`, ...), `%ignore`,
  `%declare`d terminals and left recursion other than a rule's own leading self-reference (lark's `*` helpers).
- Output: one rule per line, `root` first; rule names are `[a-z0-9-]+` (llama.cpp allows no `_`), derived from
  the Lark names deterministically (`f_get_movie_0` -> `f-get-movie-0`, terminal `STRING` -> `t-string`,
  numbered on collision). No left recursion (llama.cpp refuses it). String terminals are written inline, regex
  terminals as rules. Printable non-ASCII text stays UTF-8; escapes are only those llama.cpp and xgrammar read
  alike (`\" \\ \n \r \t \[ \]`, and `\uXXXX` for other control characters).
Pure functions without side effects; results are cached per text (KG grammars are large and reused).
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Iterable, Sequence, Union

from lark.exceptions import LarkError
from lark.grammar import NonTerminal, Terminal
from lark.lexer import PatternStr
from lark.load_grammar import load_grammar

from models.llm.constraints import DecodingConstraint

try:  # Python's own regex parser, so the regex is read exactly as `re` (and lark) read it
    from re import _constants as _sre, _parser as _sre_parse  # Python >= 3.11
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as _sre  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

_CACHE = 64  # KG (5 domains) + a few SQL/list grammars per batch; SQL grammars differ per question


# ---------------------------------------------------------------------------------------------------------------
# The GBNF expression tree and its printing
# ---------------------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class _Lit:
    text: str  # "" is the empty string


@dataclass(frozen=True)
class _Class:
    ranges: tuple[tuple[int, int], ...]  # inclusive code point ranges, sorted and merged
    negated: bool


@dataclass(frozen=True)
class _Ref:
    name: str


@dataclass(frozen=True)
class _Seq:
    items: tuple["_Node", ...]


@dataclass(frozen=True)
class _Alt:
    items: tuple["_Node", ...]


@dataclass(frozen=True)
class _Rep:
    item: "_Node"
    low: int
    high: int | None  # None: unbounded


_Node = Union[_Lit, _Class, _Ref, _Seq, _Alt, _Rep]
_EMPTY = _Lit("")


def _seq(items: Iterable[_Node]) -> _Node:
    """A sequence, flattened, with adjacent literals merged and empty ones dropped."""
    out: list[_Node] = []
    for item in items:
        for part in item.items if isinstance(item, _Seq) else (item,):
            if isinstance(part, _Lit) and out and isinstance(out[-1], _Lit):
                out[-1] = _Lit(out[-1].text + part.text)
            elif part != _EMPTY:
                out.append(part)
    return _EMPTY if not out else out[0] if len(out) == 1 else _Seq(tuple(out))


def _alt(items: Iterable[_Node]) -> _Node:
    """An alternation, flattened and without duplicates (order kept)."""
    out: dict[_Node, None] = {}
    for item in items:
        out.update(dict.fromkeys(item.items if isinstance(item, _Alt) else (item,)))
    return next(iter(out)) if len(out) == 1 else _Alt(tuple(out))


def _rep(item: _Node, low: int, high: int | None) -> _Node:
    if high == 0 or item == _EMPTY:
        return _EMPTY
    return item if (low, high) == (1, 1) else _Rep(item, low, high)


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


def _print(node: _Node) -> str:
    """`node` as a GBNF rule body (an alternation needs no parentheses at the top)."""
    if isinstance(node, _Alt):
        return " | ".join(_print_seq(item) for item in node.items)
    return _print_seq(node)


def _print_seq(node: _Node) -> str:
    if isinstance(node, _Seq):
        return " ".join(_print_atom(item) for item in node.items)
    return _print_atom(node)


def _print_atom(node: _Node) -> str:
    if isinstance(node, _Lit):
        return '"' + "".join(_char(ord(c), _LITERAL_ESCAPES) for c in node.text) + '"'
    if isinstance(node, _Ref):
        return node.name
    if isinstance(node, _Class):
        body = "".join(_char(lo, _CLASS_ESCAPES) + ("" if lo == hi else "-" + _char(hi, _CLASS_ESCAPES))
                       for lo, hi in _class_items(node.ranges))
        return "[" + ("^" if node.negated else "") + body + "]"
    if isinstance(node, _Rep):
        # a repeated multi-character literal is parenthesised too: which part a suffix binds to is then
        # unambiguous in every GBNF reader
        simple = isinstance(node.item, (_Ref, _Class)) or (isinstance(node.item, _Lit) and len(node.item.text) == 1)
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


def _grammar_text(rules: Sequence[tuple[str, _Node]]) -> str:
    return "".join(f"{name} ::= {_print(body)}\n" for name, body in rules)


# ---------------------------------------------------------------------------------------------------------------
# Regexes (Python `re` syntax, as lark and DecodingConstraint.regex use)
# ---------------------------------------------------------------------------------------------------------------

_FLAG_LETTERS = {_sre.SRE_FLAG_IGNORECASE: "i", _sre.SRE_FLAG_LOCALE: "L", _sre.SRE_FLAG_MULTILINE: "m",
                 _sre.SRE_FLAG_DOTALL: "s", _sre.SRE_FLAG_VERBOSE: "x", _sre.SRE_FLAG_ASCII: "a"}
_ANCHORS = {"AT_BEGINNING": "^", "AT_BEGINNING_LINE": "^", "AT_BEGINNING_STRING": "\\A", "AT_END": "$",
            "AT_END_LINE": "$", "AT_END_STRING": "\\Z", "AT_BOUNDARY": "\\b", "AT_NON_BOUNDARY": "\\B"}
_CATEGORIES = {"CATEGORY_DIGIT": "\\d", "CATEGORY_NOT_DIGIT": "\\D", "CATEGORY_SPACE": "\\s",
               "CATEGORY_NOT_SPACE": "\\S", "CATEGORY_WORD": "\\w", "CATEGORY_NOT_WORD": "\\W"}
_UNSUPPORTED = {"GROUPREF": "backreference", "GROUPREF_EXISTS": "conditional group (?(...)...)",
                "ATOMIC_GROUP": "atomic group (?>...)", "POSSESSIVE_REPEAT": "possessive repeat (*+, ++, ?+)"}


def _flag_names(flags: int) -> str:
    return "".join(letter for bit, letter in _FLAG_LETTERS.items() if flags & bit) or hex(flags)


def _regex_node(pattern: str) -> _Node:
    """The language of `pattern` (matched whole) as a GBNF expression.

    Raises:
        ValueError: `pattern` is not a Python regex, or uses a construct outside the translated subset.
    """
    try:
        parsed = _sre_parse.parse(pattern)
    except re.error as exc:
        raise ValueError(f"not a regex: {pattern!r} ({exc})") from exc
    flags = parsed.state.flags & ~_sre.SRE_FLAG_UNICODE  # str patterns always carry UNICODE
    if flags:
        raise ValueError(f"regex {pattern!r}: inline flags (?{_flag_names(flags)}) are not supported")
    return _regex_seq(parsed, pattern)


def _regex_seq(items, pattern: str) -> _Node:
    return _seq(_regex_item(op, arg, pattern) for op, arg in items)


def _regex_item(op, arg, pattern: str) -> _Node:
    if op is _sre.LITERAL:
        return _Lit(chr(arg))
    if op is _sre.NOT_LITERAL:
        return _Class(((arg, arg),), negated=True)
    if op is _sre.ANY:  # flags are refused, so no DOTALL: `.` is anything but a newline
        return _Class(((10, 10),), negated=True)
    if op is _sre.IN:
        return _regex_class(arg, pattern)
    if op is _sre.BRANCH:
        return _alt(_regex_seq(branch, pattern) for branch in arg[1])
    if op is _sre.SUBPATTERN:
        _, add_flags, del_flags, inner = arg
        if add_flags or del_flags:
            raise ValueError(f"regex {pattern!r}: scoped flags (?{_flag_names(add_flags | del_flags)}:...) "
                             "are not supported")
        return _regex_seq(inner, pattern)
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):  # lazy or greedy: the same set of whole matches
        low, high, inner = arg
        return _rep(_regex_seq(inner, pattern), low, None if high == _sre.MAXREPEAT else high)
    if op in (_sre.ASSERT, _sre.ASSERT_NOT):
        kind = ("lookahead" if arg[0] >= 0 else "lookbehind")
        raise ValueError(f"regex {pattern!r}: {'negative ' if op is _sre.ASSERT_NOT else ''}{kind} is not supported")
    if op is _sre.AT:
        raise ValueError(f"regex {pattern!r}: anchor {_ANCHORS.get(str(arg), str(arg))} is not supported "
                         "(the whole output is matched)")
    raise ValueError(f"regex {pattern!r}: {_UNSUPPORTED.get(str(op), str(op))} is not supported")


def _regex_class(items, pattern: str) -> _Node:
    negated, ranges = False, []
    for op, arg in items:
        if op is _sre.NEGATE:
            negated = True
        elif op is _sre.LITERAL:
            ranges.append((arg, arg))
        elif op is _sre.RANGE:
            ranges.append(arg)
        elif op is _sre.CATEGORY:  # Unicode-wide in Python (\d is every Nd digit): no exact short class
            raise ValueError(f"regex {pattern!r}: character class {_CATEGORIES.get(str(arg), str(arg))} is not "
                             "supported (spell it out, e.g. [0-9])")
        else:
            raise ValueError(f"regex {pattern!r}: class item {op} is not supported")
    merged: list[tuple[int, int]] = []
    for lo, hi in sorted(ranges):
        if merged and lo <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    if not negated and len(merged) == 1 and merged[0][0] == merged[0][1]:
        return _Lit(chr(merged[0][0]))
    return _Class(tuple(merged), negated)


@functools.lru_cache(maxsize=_CACHE)
def regex_to_gbnf(pattern: str) -> str:
    """The GBNF grammar (`root ::= ...`) of the strings `pattern` matches whole (`re.fullmatch`).

    Raises:
        ValueError: `pattern` is not a regex, or uses a construct outside the subset (see the module docstring).
    """
    return _grammar_text([("root", _regex_node(pattern))])


# ---------------------------------------------------------------------------------------------------------------
# Lark grammars
# ---------------------------------------------------------------------------------------------------------------

def _gbnf_name(name: str, terminal: bool) -> str:
    """The natural GBNF name of a Lark rule or terminal (lark's helpers are `__x_star_0`, anonymous literals
    `__ANON_0`): lower case, `_` as `-`, no leading/trailing/double dashes; terminals prefixed `t-`."""
    words = [w for w in re.split(r"[^a-z0-9]+", name.lower()) if w]
    return "-".join((["t"] if terminal else []) + (words or ["r"]))


def _assign_names(symbols: Sequence[tuple[str, bool]]) -> dict[tuple[str, bool], str]:
    """GBNF names for (lark name, is terminal) symbols in output order: the first gets `start` -> `root`, each
    later one its natural name, or the natural name numbered when taken (never taking another's natural name)."""
    natural = {s: ("root" if i == 0 else _gbnf_name(*s)) for i, s in enumerate(symbols)}
    reserved = set(natural.values())
    names, taken = {}, set()
    for symbol in symbols:
        name = natural[symbol]
        if name in taken or (name == "root" and symbol != symbols[0]):
            number = 2
            while f"{name}-{number}" in taken or f"{name}-{number}" in reserved:
                number += 1
            name = f"{name}-{number}"
        names[symbol] = name
        taken.add(name)
    return names


def _factor(sequences: Sequence[tuple[_Node, ...]]) -> _Node:
    """The alternation of `sequences`, left-factored: lark multiplies out `?` and groups into one alternative per
    combination; sharing their prefixes again keeps the GBNF small and gives a server's matcher fewer parallel
    paths, without changing the language."""
    groups: dict[_Node, list[tuple[_Node, ...]]] = {}
    optional = False
    for sequence in sequences:
        if sequence:
            groups.setdefault(sequence[0], []).append(sequence[1:])
        else:
            optional = True
    alternatives = [_seq((first, *tails[0])) if len(tails) == 1 else _seq((first, _factor(tails)))
                    for first, tails in groups.items()]
    if not alternatives:
        return _EMPTY
    body = _alt(alternatives)
    return _rep(body, 0, 1) if optional else body


def _nullable(node: _Node) -> bool:
    """Whether a regex terminal's expression matches the empty string."""
    if isinstance(node, _Lit):
        return node.text == ""
    if isinstance(node, _Seq):
        return all(_nullable(item) for item in node.items)
    if isinstance(node, _Alt):
        return any(_nullable(item) for item in node.items)
    if isinstance(node, _Rep):
        return node.low == 0 or _nullable(node.item)
    return False  # a class: one character


def _left_recursion(rules: dict[str, list[tuple]], empty_terminals: set[str]) -> list[str] | None:
    """A cycle of rules through nullable prefixes (left recursion, which GBNF readers such as llama.cpp refuse),
    not counting a rule's own reference in first position, which `lark_to_gbnf` turns into a repetition."""
    nullable: set[str] = set()

    def is_nullable(symbol) -> bool:
        return symbol.name in (nullable if isinstance(symbol, NonTerminal) else empty_terminals)

    changed = True
    while changed:
        changed = False
        for origin, expansions in rules.items():
            if origin not in nullable and any(all(is_nullable(s) for s in e) for e in expansions):
                nullable.add(origin)
                changed = True
    edges: dict[str, list[str]] = {}
    for origin, expansions in rules.items():
        targets = edges.setdefault(origin, [])
        for expansion in expansions:
            for position, symbol in enumerate(expansion):
                if isinstance(symbol, NonTerminal) and not (position == 0 and symbol.name == origin):
                    targets.append(symbol.name)
                if not is_nullable(symbol):
                    break
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(rule: str) -> list[str] | None:
        state[rule] = 1
        path.append(rule)
        for target in edges.get(rule, ()):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[rule] = 2
        return None

    for rule in rules:
        if rule not in state and (cycle := visit(rule)):
            return cycle
    return None


def _terminals(terminals) -> dict[str, _Node]:
    """Each terminal's expression: a literal, or its regex translated.

    Raises:
        ValueError: a terminal with flags (`"..."i`, `/.../s`) or a regex outside the subset.
    """
    out = {}
    for terminal in terminals:
        pattern = terminal.pattern
        if pattern.flags:
            raise ValueError(f"terminal {terminal.name} ({pattern.raw or pattern.value!r}): flags "
                             f"{''.join(sorted(pattern.flags))} are not supported")
        out[terminal.name] = _Lit(pattern.value) if isinstance(pattern, PatternStr) else _regex_node(pattern.value)
    return out


def _reachable(rules: dict[str, list[tuple]], inline: set[str]) -> list[tuple[str, bool]]:
    """(lark name, is terminal) of every rule reachable from `start` and every terminal it uses but those written
    `inline`, in the order they are first met (rules first)."""
    seen_rules, seen_terminals = ["start"], {}
    for rule in seen_rules:  # grows while iterated: breadth-first
        for symbol in (s for e in rules[rule] for s in e):
            if isinstance(symbol, NonTerminal):
                if symbol.name not in seen_rules:
                    seen_rules.append(symbol.name)
            elif symbol.name not in inline:
                seen_terminals.setdefault(symbol.name)
    return [(r, False) for r in seen_rules] + [(t, True) for t in seen_terminals]


@functools.lru_cache(maxsize=_CACHE)
def lark_to_gbnf(lark_text: str) -> str:
    """The GBNF grammar (`root ::= ...`) of the Lark grammar `lark_text`, whose start rule is `start`.

    Raises:
        ValueError: not a Lark grammar with a `start` rule, or a construct GBNF cannot express exactly (regex
            features outside the subset, flags, `%ignore`, `%declare`, left recursion through other rules).
    """
    try:
        grammar, _ = load_grammar(lark_text, "<lark_to_gbnf>", [], False)
        terminals, compiled, ignored = grammar.compile(["start"], set())
    except LarkError as exc:
        raise ValueError(f"not a Lark grammar: {exc}") from exc
    rules: dict[str, list[tuple]] = {}
    for rule in compiled:
        rules.setdefault(rule.origin.name, []).append(tuple(rule.expansion))
    if "start" not in rules:
        raise ValueError("the grammar has no start rule")
    if ignored:  # a lexer skips these between tokens; GBNF has no lexer
        raise ValueError(f"%ignore {', '.join(ignored)} is not supported")
    expressions = _terminals(terminals)
    used = {s.name for expansions in rules.values() for e in expansions for s in e if isinstance(s, Terminal)}
    if used - expressions.keys():
        raise ValueError(f"terminals {', '.join(sorted(used - expressions.keys()))} have no pattern "
                         "(%declare is not supported)")
    if cycle := _left_recursion(rules, {name for name, node in expressions.items() if _nullable(node)}):
        raise ValueError(f"left recursion through rules {' -> '.join(cycle)} is not supported")

    # string terminals are written where they are used (`"get_movie("`), regex terminals as rules of their own
    inline = {name for name, node in expressions.items() if isinstance(node, _Lit)}
    order = _reachable(rules, inline)
    names = _assign_names(order)

    def node(symbol) -> _Node:
        if isinstance(symbol, NonTerminal):
            return _Ref(names[(symbol.name, False)])
        return expressions[symbol.name] if symbol.name in inline else _Ref(names[(symbol.name, True)])

    out = []
    for name, terminal in order:
        if terminal:
            out.append((names[(name, True)], expressions[name]))
            continue
        sequences = [tuple(node(s) for s in e) for e in rules[name]]
        own = _Ref(names[(name, False)])
        recursive = [s[1:] for s in sequences if s[:1] == (own,)]
        base = [s for s in sequences if s[:1] != (own,)]
        body = _factor(base)
        if recursive:  # X: X b | a (lark's `*` helpers) is a b*: llama.cpp refuses left recursion
            if not base:
                raise ValueError(f"rule {name} derives no finite string")
            tail = _factor([s for s in recursive if s])
            body = _rep(body, 1, None) if tail == body else _seq((body, _rep(tail, 0, None)))
        out.append((names[(name, False)], body))
    return _grammar_text(out)


def constraint_gbnf(constraint: DecodingConstraint) -> str | None:
    """The GBNF of a `DecodingConstraint`: its `regex` when set, else its `grammar` (Lark); None with neither.
    Cached per text (`regex_to_gbnf` / `lark_to_gbnf`).

    Raises:
        ValueError: as `regex_to_gbnf` / `lark_to_gbnf`.
    """
    if constraint.regex is not None:
        return regex_to_gbnf(constraint.regex)
    if constraint.grammar is not None:
        return lark_to_gbnf(constraint.grammar)
    return None
