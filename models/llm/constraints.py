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

from dataclasses import dataclass
from typing import Callable


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
