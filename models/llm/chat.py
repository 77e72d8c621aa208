"""Chat messages -> prompt text, and fitting a prompt into the model's window. Shared by both backends.

Both backends render with the model's own chat template (`apply_chat_template(..., tokenize=False,
add_generation_prompt=True)`); the rendered text already carries the template's special tokens, so it
is tokenized later without adding any (Llama 3 would otherwise get two `<|begin_of_text|>`).

Over-long prompts: the window is `max_model_len - max_new_tokens` tokens. When a rendered prompt is
longer, the *context* is cut, never the instructions or the question:
- the context is the span from the first `<DOC>` to the last `</DOC>` of the last message that has one
  (the pathways wrap every retrieved chunk that way); its tail is cut, because chunks arrive best-first
  (reranker order), and a closing `</DOC>` is put back so the model still sees a closed block;
- a prompt without `<DOC>` blocks (an API-generation prompt, a router prompt) has its longest message cut
  in the middle, keeping the head (instructions) and the tail (where templates put the question).
Token counts of pieces do not add up exactly, so the cut is re-measured and repeated a few times. A
prompt that still does not fit (its question alone is too long) is reported as None and the backend
answers "" for it instead of overrunning the window.
"""
from __future__ import annotations

import logging
import re
from typing import Sequence

log = logging.getLogger(__name__)

DOC_OPEN, DOC_CLOSE = "<DOC>", "</DOC>"
_ELLIPSIS = " ... "
_FIT_ATTEMPTS = 4
_DOC_SPAN = re.compile(re.escape(DOC_OPEN) + r".*" + re.escape(DOC_CLOSE), re.DOTALL | re.IGNORECASE)


class ChatFormatter:
    """Renders messages with a tokenizer's chat template and keeps prompts inside the window."""

    def __init__(self, tokenizer, max_model_len: int):
        self.tokenizer = tokenizer
        self.max_model_len = max_model_len

    # ------------------------------------------------------------------ tokens
    def encode(self, text: str) -> list[int]:
        return self.tokenizer.encode(text, add_special_tokens=False)

    def count_tokens(self, text: str) -> int:
        return len(self.encode(text or ""))

    def truncate_tokens(self, text: str, max_tokens: int) -> str:
        """`text` cut to its first `max_tokens` tokens (unchanged when it already fits)."""
        ids = self.encode(text or "")
        if len(ids) <= max_tokens:
            return text or ""
        return self.tokenizer.decode(ids[:max(0, max_tokens)], skip_special_tokens=False)

    # ------------------------------------------------------------------ prompts
    def render(self, messages: Sequence[dict]) -> str:
        return self.tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)

    def fit(self, messages: Sequence[dict], max_new_tokens: int) -> str | None:
        """The rendered prompt, its context cut so prompt + generation fit `max_model_len`.

        Returns:
            The prompt text, or None when even an empty context leaves it too long.
        """
        fitted = self._fit(messages, max_new_tokens)
        return None if fitted is None else fitted[1]

    def fit_messages(self, messages: Sequence[dict], max_new_tokens: int) -> list[dict] | None:
        """The messages with their context cut so that, rendered, prompt + generation fit `max_model_len`
        (what a server that applies the template itself is sent); None when even an empty context is too long."""
        fitted = self._fit(messages, max_new_tokens)
        return None if fitted is None else fitted[0]

    def _fit(self, messages: Sequence[dict], max_new_tokens: int) -> tuple[list[dict], str] | None:
        """(the cut messages, their rendered prompt), or None."""
        budget = self.max_model_len - max_new_tokens
        messages = [dict(m) for m in messages]
        for _ in range(_FIT_ATTEMPTS):
            prompt = self.render(messages)
            excess = self.count_tokens(prompt) - budget
            if excess <= 0:
                return messages, prompt
            if not self._cut(messages, excess):
                return None
        prompt = self.render(messages)
        return (messages, prompt) if self.count_tokens(prompt) <= budget else None

    def fit_requests(self, requests: Sequence) -> list[str | None]:
        """`fit` for each `GenerationRequest`; None (logged) for one that cannot fit."""
        prompts = [self.fit(r.messages, r.max_new_tokens) for r in requests]
        for i, prompt in enumerate(prompts):
            if prompt is None:
                log.warning("request %d does not fit max_model_len=%d even without its context; answering ''",
                            i, self.max_model_len)
        return prompts

    def _cut(self, messages: list[dict], excess: int) -> bool:
        """Shortens the context by at least `excess` tokens, in place; False when nothing is left to cut."""
        for message in reversed(messages):
            content = message.get("content") or ""
            span = _DOC_SPAN.search(content)
            if span:
                kept = self._cut_tail(span.group(0), excess)
                if kept is None:
                    return False
                message["content"] = content[:span.start()] + kept + content[span.end():]
                return True
        longest = max(messages, key=lambda m: len(m.get("content") or ""), default=None)
        kept = self._cut_middle(longest.get("content") or "", excess) if longest else None
        if kept is None:
            return False
        longest["content"] = kept
        return True

    def _cut_tail(self, span: str, excess: int) -> str | None:
        ids = self.encode(span)
        closing = self.count_tokens(DOC_CLOSE) + 1
        keep = len(ids) - excess - closing
        if keep <= self.count_tokens(DOC_OPEN):
            return None
        return self.tokenizer.decode(ids[:keep], skip_special_tokens=False).rstrip() + "\n" + DOC_CLOSE

    def _cut_middle(self, text: str, excess: int) -> str | None:
        ids = self.encode(text)
        keep = len(ids) - excess - self.count_tokens(_ELLIPSIS)
        if keep < 2:
            return None
        head, tail = ids[:keep // 2], ids[len(ids) - (keep - keep // 2):]
        decode = self.tokenizer.decode
        return decode(head, skip_special_tokens=False) + _ELLIPSIS + decode(tail, skip_special_tokens=False)


class ChatBackend:
    """The tokenizer half of the `Generator` protocol, shared by both backends (they set `self.chat`)."""

    chat: ChatFormatter

    @property
    def tokenizer(self):
        return self.chat.tokenizer

    def count_tokens(self, text: str) -> int:
        return self.chat.count_tokens(text)

    def truncate_tokens(self, text: str, max_tokens: int) -> str:
        return self.chat.truncate_tokens(text, max_tokens)
