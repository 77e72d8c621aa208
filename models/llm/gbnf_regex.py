"""A whole-output Python regex as GBNF (models/llm/gbnf.py's `regex_to_gbnf`): read by Python's own regex parser, so it
is read exactly as `re` and lark read it; a construct the translation cannot keep exact raises ValueError naming it."""
from __future__ import annotations

import functools
import re

from models.llm.gbnf_tree import CharClass, Lit, Node, alt, grammar_text, rep, seq

try:  # Python's own regex parser, so the regex is read exactly as `re` (and lark) read it
    from re import _constants as _sre, _parser as _sre_parse  # Python >= 3.11
except ImportError:  # pragma: no cover - older Pythons
    import sre_constants as _sre  # type: ignore[no-redef]
    import sre_parse as _sre_parse  # type: ignore[no-redef]

_CACHE = 64  # regexes of KG and SQL/list constraints, reused across a batch
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


def regex_node(pattern: str) -> Node:
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


def _regex_seq(items, pattern: str) -> Node:
    return seq(_regex_item(op, arg, pattern) for op, arg in items)


def _regex_item(op, arg, pattern: str) -> Node:
    if op is _sre.LITERAL:
        return Lit(chr(arg))
    if op is _sre.NOT_LITERAL:
        return CharClass(((arg, arg),), negated=True)
    if op is _sre.ANY:  # flags are refused, so no DOTALL: `.` is anything but a newline
        return CharClass(((10, 10),), negated=True)
    if op is _sre.IN:
        return _regex_class(arg, pattern)
    if op is _sre.BRANCH:
        return alt(_regex_seq(branch, pattern) for branch in arg[1])
    if op is _sre.SUBPATTERN:
        _, add_flags, del_flags, inner = arg
        if add_flags or del_flags:
            raise ValueError(f"regex {pattern!r}: scoped flags (?{_flag_names(add_flags | del_flags)}:...) "
                             "are not supported")
        return _regex_seq(inner, pattern)
    if op in (_sre.MAX_REPEAT, _sre.MIN_REPEAT):  # lazy or greedy: the same set of whole matches
        low, high, inner = arg
        return rep(_regex_seq(inner, pattern), low, None if high == _sre.MAXREPEAT else high)
    if op in (_sre.ASSERT, _sre.ASSERT_NOT):
        kind = ("lookahead" if arg[0] >= 0 else "lookbehind")
        raise ValueError(f"regex {pattern!r}: {'negative ' if op is _sre.ASSERT_NOT else ''}{kind} is not supported")
    if op is _sre.AT:
        raise ValueError(f"regex {pattern!r}: anchor {_ANCHORS.get(str(arg), str(arg))} is not supported "
                         "(the whole output is matched)")
    raise ValueError(f"regex {pattern!r}: {_UNSUPPORTED.get(str(op), str(op))} is not supported")


def _regex_class(items, pattern: str) -> Node:
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
        return Lit(chr(merged[0][0]))
    return CharClass(tuple(merged), negated)


@functools.lru_cache(maxsize=_CACHE)
def regex_to_gbnf(pattern: str) -> str:
    """The GBNF grammar (`root ::= ...`) of the strings `pattern` matches whole (`re.fullmatch`).

    Raises:
        ValueError: `pattern` is not a regex, or uses a construct outside the subset (see the module docstring).
    """
    return grammar_text([("root", regex_node(pattern))])
