"""Grammar-constrained decoding: what a constraint is.

The KG pathway knows its API language; the LLM layer only needs three views of it:
- `is_valid_prefix(text)`: could `text` still grow into a valid program? (HF backend, token by token)
- `is_complete(text)`: is `text` a whole valid program? (HF backend: end-of-sequence allowed only then)
- `regex` / `grammar`: the same language for vLLM's structured outputs (xgrammar/guidance do the masking
  inside the engine). A backend that gets no form it can use decodes freely, and the caller's parser
  rejects bad output, so a constraint is an improvement, never a requirement.

This module is plain data (no torch), so the KG pathway can build constraints without loading a model;
`prefix_decoding.py` enforces them in the transformers backend.
"""
from __future__ import annotations

import json
from bisect import bisect_left
from dataclasses import dataclass
from typing import Callable, Sequence


def _always(_: str) -> bool:
    return True


@dataclass(frozen=True)
class DecodingConstraint:
    """A language the generated text must belong to.

    Attributes:
        is_valid_prefix: True while the text can still be completed to a member of the language.
        is_complete: True when the text is a member (end-of-sequence is allowed only then).
        regex: the language as a regular expression, for vLLM (optional).
        grammar: the language as an EBNF/Lark grammar, for vLLM (optional; used when `regex` is None).
    """

    is_valid_prefix: Callable[[str], bool]
    is_complete: Callable[[str], bool] = _always
    regex: str | None = None
    grammar: str | None = None


def has_prefix(sorted_items: Sequence[str], prefix: str) -> bool:
    """True when some string of the sorted list `sorted_items` starts with `prefix` (binary search)."""
    i = bisect_left(sorted_items, prefix)
    return i < len(sorted_items) and sorted_items[i].startswith(prefix)


class ListLanguage:
    """Lists of 1..`max_items` members of a fixed set of strings joined by `separator`: a model choosing among
    given strings (ARM's n-gram rewrite, its verifier's object ids). Repeats are in the language; callers' parsers
    drop them.

    Args:
        items: the members, in the order the grammar lists them; those holding the separator or a newline are
            left out (they could not be told apart from two members).
        max_items: the longest list (>= 1).
        separator: what joins two members.
        terminal: the grammar's name for a member.
    """

    def __init__(self, items: Sequence[str], max_items: int, separator: str, terminal: str = "ITEM"):
        if max_items < 1:
            raise ValueError(f"a list holds at least one item, got max_items={max_items}")
        self.items = tuple(dict.fromkeys(i for i in items if i and separator not in i and "\n" not in i))
        self.members = frozenset(self.items)
        self.sorted = sorted(self.members)
        self.max_items, self.separator, self.terminal = max_items, separator, terminal

    def is_valid_prefix(self, text: str) -> bool:
        *whole, last = text.split(self.separator)
        return (len(whole) < self.max_items and all(w in self.members for w in whole)
                and has_prefix(self.sorted, last))

    def is_complete(self, text: str) -> bool:
        parts = text.split(self.separator)
        return len(parts) <= self.max_items and all(p in self.members for p in parts)

    @property
    def grammar(self) -> str:
        """The language in Lark (llguidance, vLLM structured outputs): ITEM (SEP ITEM (SEP ITEM)?)?..."""
        tail = ""
        for _ in range(self.max_items - 1):
            tail = f" ({json.dumps(self.separator)} {self.terminal}{tail})?"
        alternatives = " | ".join(json.dumps(i, ensure_ascii=False) for i in self.items)
        return f"start: {self.terminal}{tail}\n{self.terminal}: {alternatives}\n"

    def constraint(self) -> DecodingConstraint:
        return DecodingConstraint(is_valid_prefix=self.is_valid_prefix, is_complete=self.is_complete,
                                  grammar=self.grammar)
