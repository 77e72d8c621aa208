"""Membership tests of one domain's program language, for token-by-token constrained decoding.

The transformers backend asks, for each candidate token, whether the text generated so far plus that
token can still become a valid program (`is_valid_prefix`), and allows end-of-sequence only when the text
is a whole valid program (`is_complete`). Both run the real parser (prefix mode for the first), with the
domain's signatures, so anything they let through also compiles; they never raise.
"""
from __future__ import annotations

from typing import Mapping

from models.kg.language.errors import KGError
from models.kg.language.parser import IncompleteProgram, parse, parse_prefix
from models.kg.language.signature import Signature


class PrefixChecker:
    """`PrefixChecker(signatures).is_valid_prefix(text)` / `.is_complete(text)`."""

    def __init__(self, functions: Mapping[str, Signature]):
        self.functions = dict(functions)

    def is_valid_prefix(self, text: str) -> bool:
        """True when some continuation of `text` is a valid program (a complete program included)."""
        try:
            parse_prefix(text, self.functions)
        except IncompleteProgram:
            return True
        except KGError:
            return False
        return True

    def is_complete(self, text: str) -> bool:
        """True when `text` is a whole, non-empty, type-correct program ("None" included)."""
        if not text.strip():
            return False
        try:
            parse(text, self.functions)
        except KGError:
            return False
        return True
