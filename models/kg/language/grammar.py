"""The canonical program language of one domain as a Lark grammar, for grammar-constrained decoding.

vLLM's structured outputs (guidance/llguidance natively, xgrammar after conversion) mask every token that
would leave this grammar, so a constrained generation always parses *and* type-checks: the grammar is
generated from the same `Signature` objects the parser checks against, with one rule per function whose
arguments have exactly the declared kinds. It describes the canonical form printed by
`ast.format_program` (double quotes, `", "` between arguments, one statement per line, no other
whitespace), a strict subset of what the parser accepts; canonical text costs the model fewest tokens.

Rules the grammar encodes beyond the signatures: `*` (the previous line's output) never in the first line
and at most once per call; `sort(...)` never first; `ALL` only before functions that search for an
entity; `AVG` needs a key and excludes `["len"]`; `["len"]` only last. Only plain Lark constructs are
used (literals, `|`, `?`, `*`, groups, regex terminals without lookaround) so both `lark` (tests) and
llguidance accept it.
"""
from __future__ import annotations

from typing import Mapping

from models.kg.language.signature import ArgKind, Param, Signature

_KIND_RULES = {
    ArgKind.STRING: "STRING",
    ArgKind.NUMBER: "NUMBER",
    ArgKind.NONE: '"None"',
    ArgKind.CONDITIONS: "conds",
    ArgKind.STRINGS: "strings",
    ArgKind.BOOL: "boolean",
}

_COMMON = r'''
selectors: selector* length?
avg_selectors: slice* key selector*
selector: key | slice
key: "[" SELECT_KEY "]"
slice: "[:" INT "]"
length: "[" "\"len\"" "]"
sort: "sort(" sort_conds ", " sort_key ")"
sort_conds: "None" | conds
sort_key: "-"? (NAME | KEY)
conds: cond | "[" cond (", " cond)* "]"
cond: op "(" (NAME | KEY) ", " value ")"
op: "eq" | "neq" | "ge" | "le"
value: STRING | NUMBER | boolean | "None"
boolean: "true" | "false"
strings: "[" STRING (", " STRING)* "]"
NAME: /[A-Za-z_][A-Za-z0-9_]*/
STRING: /"([^"\\\n]|\\["\\])*"/
KEY: /"([^"\\\n]|\\["\\])+"/
NUMBER: /-?[0-9]+(\.[0-9]+)?/
INT: /[0-9]+/
'''


def _char(excluded: str = "") -> str:
    """One character of a quoted string (an escaped quote or backslash, or anything but `excluded`)."""
    return rf'([^{excluded}"\\\n]|\\["\\])'


# a selected key is any non-empty quoted string except "len", which is the count selector; no lookaround
# (llguidance has none), so spelled out: first char not l | l | l+not e | le | le+not n | len+more
_SELECT_KEY = (f'SELECT_KEY: /"({_char("l")}{_char()}*|l|l{_char("e")}{_char()}*|le|le{_char("n")}{_char()}*'
               f'|len{_char()}+)"/')


def lark_grammar(functions: Mapping[str, Signature]) -> str:
    """The Lark grammar of canonical programs over `functions` (start rule: `start`).

    Raises:
        ValueError: no functions, or a function name that is not a plain lower-case identifier.
    """
    if not functions:
        raise ValueError("a grammar needs at least one function")
    for name in functions:
        if not name.replace("_", "").isalnum() or not name.islower():
            raise ValueError(f"function name {name!r} cannot be used in the grammar")
    signatures = [functions[name] for name in sorted(functions)]
    searching = [s for s in signatures if s.searches]
    lines = [
        'start: "None" | line0 ("\\n" line1)*',
        "line0: " + _statement_alternatives("call0", "search0" if searching else None),
        "line1: " + _statement_alternatives("call1", "search1" if searching else None)
        + ' | sort selectors | "AVG " sort avg_selectors',
        "call0: " + " | ".join(_rule(s, 0) for s in signatures),
        "call1: " + " | ".join(f"{_rule(s, 0)} | {_rule(s, 1)}" for s in signatures),
    ]
    if searching:
        lines.append("search0: " + " | ".join(_rule(s, 0) for s in searching))
        lines.append("search1: " + " | ".join(f"{_rule(s, 0)} | {_rule(s, 1)}" for s in searching))
    for signature in signatures:
        lines.append(f"{_rule(signature, 0)}: {_call_body(signature, None)}")
        stars = [i for i, p in enumerate(signature.params) if ArgKind.STAR in p.kinds]
        with_star = " | ".join(_call_body(signature, i) for i in stars) or _rule(signature, 0)
        lines.append(f"{_rule(signature, 1)}: {with_star}")
    return "\n".join(lines) + "\n" + _COMMON + _SELECT_KEY + "\n"


def _statement_alternatives(call: str, search: str | None) -> str:
    alternatives = [f"{call} selectors", f'"AVG " {call} avg_selectors']
    if search:
        alternatives += [f'"ALL " {search} selectors', f'"ALL AVG " {search} avg_selectors']
    return " | ".join(alternatives)


def _rule(signature: Signature, star: int) -> str:
    return f"f_{signature.name}_{star}"


def _call_body(signature: Signature, star_at: int | None) -> str:
    """`"name(" args ")"` where argument `star_at` (if any) is `*` and no other argument is."""
    pieces = [_alternatives(p, star=(i == star_at)) for i, p in enumerate(signature.params)]
    present = signature.min_args if star_at is None else max(signature.min_args, star_at + 1)
    body = ' ", " '.join(pieces[:present])
    optional = ""
    for index in reversed(range(present, len(pieces))):
        comma = '", " ' if index > 0 else ""  # an optional argument after another one needs its comma
        optional = f"({comma}{pieces[index]}{' ' + optional if optional else ''})?"
    inner = " ".join(part for part in (body, optional) if part)
    return f'"{signature.name}(" {inner} ")"' if inner else f'"{signature.name}()"'


def _alternatives(param: Param, star: bool) -> str:
    if star:
        return '"*"'
    kinds = [k for k in ArgKind if k in param.kinds and k is not ArgKind.STAR]
    options = [_KIND_RULES[k] for k in kinds]
    return options[0] if len(options) == 1 else "(" + " | ".join(options) + ")"
