"""The one interface every LLM backend implements, and the factory that picks a backend by config.

Callers build `GenerationRequest`s (chat messages + adapter name + limits) and call
`generator.generate(requests, deadline=...)`; they never know which backend runs. The adapter is a
per-request attribute (as vLLM's `LoRARequest`), so one batch may mix adapters and the base model.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Any, Protocol, Sequence, runtime_checkable

from models.deadline import Deadline


@dataclass(frozen=True)
class GenerationRequest:
    """One generation.

    Attributes:
        messages: chat messages `({"role": "system"|"user"|"assistant", "content": str}, ...)`.
        adapter: a LoRA adapter name configured in the profile's `llm.adapters`, or None for the base model.
        max_new_tokens: generation cap.
        stop: strings that end the generation (not included in the output).
        constraint: optional decoding constraint (e.g. the KG grammar); backends that cannot honour a
            constraint generate freely and the caller's parser rejects bad output.
    """

    messages: tuple[dict, ...]
    adapter: str | None = None
    max_new_tokens: int = 64
    stop: tuple[str, ...] = ()
    constraint: Any = None


@runtime_checkable
class Generator(Protocol):
    """What the pipeline needs from an LLM backend."""

    def generate(self, requests: Sequence[GenerationRequest], *, deadline: Deadline | None = None) -> list[str]:
        """Returns one completion per request, in order. Requests that cannot start before the deadline
        return "" (the caller turns that into "i don't know"); a backend may return `ItemResults`, whose
        `reasons` say why a request holds "" (it failed alone, or the deadline stopped its retry), and the
        pipeline copies them into the trace."""

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` under the model's tokenizer (for context budgets)."""

    def truncate_tokens(self, text: str, max_tokens: int) -> str:
        """`text` cut to at most `max_tokens` tokens of the model's tokenizer."""


_BACKENDS = {
    "hf": "models.llm.hf_backend:HFGenerator",
    "vllm": "models.llm.vllm_backend:VLLMGenerator",
    "openai": "models.llm.openai_backend:OpenAIGenerator",
}


def make_generator(config, models_dir: str) -> Generator:
    """Builds the backend named by `config.backend` (imported lazily: vllm only when asked for)."""
    target = _BACKENDS.get(config.backend)
    if target is None:
        raise ValueError(f"unknown llm.backend {config.backend!r}; expected one of {sorted(_BACKENDS)}")
    module_name, _, class_name = target.partition(":")
    return getattr(importlib.import_module(module_name), class_name)(config, models_dir)
