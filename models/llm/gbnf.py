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
- The tree and its printing are models/llm/gbnf_tree.py, the regex reading models/llm/gbnf_regex.py.
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
from typing import Sequence

from lark.exceptions import LarkError
from lark.grammar import NonTerminal, Terminal
from lark.lexer import PatternStr
from lark.load_grammar import load_grammar

from models.llm.constraints import DecodingConstraint
from models.llm.gbnf_regex import regex_node, regex_to_gbnf
from models.llm.gbnf_tree import EMPTY, Alt, Lit, Node, Ref, Rep, Seq, alt, grammar_text, rep, seq

_CACHE = 64  # KG (5 domains) + a few SQL/list grammars per batch; SQL grammars differ per question


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


def _factor(sequences: Sequence[tuple[Node, ...]]) -> Node:
    """The alternation of `sequences`, left-factored: lark multiplies out `?` and groups into one alternative per
    combination; sharing their prefixes again keeps the GBNF small and gives a server's matcher fewer parallel
    paths, without changing the language."""
    groups: dict[Node, list[tuple[Node, ...]]] = {}
    optional = False
    for sequence in sequences:
        if sequence:
            groups.setdefault(sequence[0], []).append(sequence[1:])
        else:
            optional = True
    alternatives = [seq((first, *tails[0])) if len(tails) == 1 else seq((first, _factor(tails)))
                    for first, tails in groups.items()]
    if not alternatives:
        return EMPTY
    body = alt(alternatives)
    return rep(body, 0, 1) if optional else body


def _nullable(node: Node) -> bool:
    """Whether a regex terminal's expression matches the empty string."""
    if isinstance(node, Lit):
        return node.text == ""
    if isinstance(node, Seq):
        return all(_nullable(item) for item in node.items)
    if isinstance(node, Alt):
        return any(_nullable(item) for item in node.items)
    if isinstance(node, Rep):
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


def _terminals(terminals) -> dict[str, Node]:
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
        out[terminal.name] = Lit(pattern.value) if isinstance(pattern, PatternStr) else regex_node(pattern.value)
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
    inline = {name for name, node in expressions.items() if isinstance(node, Lit)}
    order = _reachable(rules, inline)
    names = _assign_names(order)

    def node(symbol) -> Node:
        if isinstance(symbol, NonTerminal):
            return Ref(names[(symbol.name, False)])
        return expressions[symbol.name] if symbol.name in inline else Ref(names[(symbol.name, True)])

    out = []
    for name, terminal in order:
        if terminal:
            out.append((names[(name, True)], expressions[name]))
            continue
        sequences = [tuple(node(s) for s in e) for e in rules[name]]
        own = Ref(names[(name, False)])
        recursive = [s[1:] for s in sequences if s[:1] == (own,)]
        base = [s for s in sequences if s[:1] != (own,)]
        body = _factor(base)
        if recursive:  # X: X b | a (lark's `*` helpers) is a b*: llama.cpp refuses left recursion
            if not base:
                raise ValueError(f"rule {name} derives no finite string")
            tail = _factor([s for s in recursive if s])
            body = rep(body, 1, None) if tail == body else seq((body, rep(tail, 0, None)))
        out.append((names[(name, False)], body))
    return grammar_text(out)


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
