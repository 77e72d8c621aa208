"""The LLM layer's exceptions: one root, so callers can catch `LLMError` alone.

Every error here is a configuration or environment problem found at start-up (a missing adapter folder,
an adapter name the profile does not define, vLLM or CUDA absent). Per-request problems (an over-long
prompt, an empty generation, a deadline) never raise: they become "" for that request.
"""
from __future__ import annotations


class LLMError(RuntimeError):
    """Root of the LLM layer's errors."""


class UnknownAdapterError(LLMError):
    """A request or the pipeline names an adapter that `llm.adapters` does not configure."""


class AdapterNotFoundError(LLMError):
    """A configured adapter folder is missing or is not a peft adapter directory."""


class BackendUnavailableError(LLMError):
    """The configured backend cannot run here (vLLM not installed, no CUDA device)."""
