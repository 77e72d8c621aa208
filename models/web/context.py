"""Chunks -> the `<DOC>` context the answer prompt reads (db3 §3.1).

Each chunk becomes `<DOC>\\n{text}\\n</DOC>\\n`, in the order given (the pipeline puts public-data and KG
facts before web chunks). The budget is in tokens of the answering LLM's own tokenizer, not characters.
db3 truncated the joined string and appended `</DOC>`; here whole documents are added while they fit and
the first one that does not is cut inside its text, so the result is always well-formed and within budget
(the closing tag counted, not appended afterwards).
"""
from __future__ import annotations

from typing import Sequence

from models.types import Chunk

_OPEN, _CLOSE = "<DOC>\n", "\n</DOC>\n"


def _wrap(text: str) -> str:
    return f"{_OPEN}{text}{_CLOSE}"


def format_context(chunks: Sequence[Chunk], generator, max_tokens: int) -> str:
    """The `<DOC>` context of `chunks`, at most `max_tokens` tokens of `generator`'s tokenizer.

    Args:
        chunks: context pieces, most important first; empty texts are skipped.
        generator: anything with `count_tokens(text)` and `truncate_tokens(text, n)` (the LLM backend).
        max_tokens: the budget.

    Returns:
        The context, or "" when there is nothing to show or no room for one document.
    """
    texts = [c.text.strip() for c in chunks if c.text and c.text.strip()]
    if not texts or max_tokens <= 0:
        return ""
    overhead = generator.count_tokens(_wrap(""))
    parts: list[str] = []
    used = 0
    for text in texts:
        doc = _wrap(text)
        cost = generator.count_tokens(doc)
        if used + cost <= max_tokens:
            parts.append(doc)
            used += cost
            continue
        room = max_tokens - used - overhead
        cut = generator.truncate_tokens(text, room).strip() if room > 0 else ""
        if cut:
            parts.append(_wrap(cut))
        break
    context = "".join(parts)
    # Tokenizers merge across piece boundaries, so the sum of pieces can differ from the whole by a token
    # or two: shave the last document until the joined string itself is within budget.
    while parts and generator.count_tokens(context) > max_tokens:
        excess = generator.count_tokens(context) - max_tokens
        last = parts.pop()[len(_OPEN):-len(_CLOSE)]
        size = generator.count_tokens(last)
        cut = generator.truncate_tokens(last, size - excess - 1).strip() if size - excess - 1 > 0 else ""
        if cut and generator.count_tokens(cut) < size:  # progress is guaranteed: shorter, or dropped
            parts.append(_wrap(cut))
        context = "".join(parts)
    return context
