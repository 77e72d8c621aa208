"""The one interface every LLM backend implements, and the factory that picks a backend by config.

Callers build `GenerationRequest`s (chat messages + adapter name + limits) and call
`generator.generate(requests, deadline=...)`; they never know which backend runs. The adapter is a
per-request attribute (as vLLM's `LoRARequest`), so one batch may mix adapters and the base model.
"""
from __future__ import annotations

import importlib
import math
from dataclasses import dataclass
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from models.deadline import Deadline
from models.llm.adapters import AdapterNames


@dataclass(frozen=True)
class GenerationRequest:
    """One generation.

    Attributes:
        messages: chat messages `({"role": "system"|"user"|"assistant", "content": str}, ...)`.
        adapter: a LoRA adapter name configured in the profile's `llm.adapters`, or None for the base model.
        max_new_tokens: generation cap.
        stop: strings that end the generation (not included in the output).
        constraint: optional decoding constraint (e.g. the KG grammar); backends that cannot honour a
            constraint generate freely and the caller's parser rejects bad output. Sampled requests keep it.
        temperature: this request's sampling temperature; None = the profile's `llm.temperature`; 0 = greedy.
        n: completions to draw (`Completions.of(results, i)` holds all n; the plain result is the first). With
            n > 1 and a temperature of 0 every backend returns n copies of the greedy completion.
        logprobs: return each completion's token log-probabilities (`Completion.token_logprobs`) under the
            model's own distribution (before any constraint mask or temperature).
    """

    messages: tuple[dict, ...]
    adapter: str | None = None
    max_new_tokens: int = 64
    stop: tuple[str, ...] = ()
    constraint: Any = None
    temperature: float | None = None
    n: int = 1
    logprobs: bool = False

    def __post_init__(self):
        if self.n < 1:
            raise ValueError(f"a request draws at least one completion, got n={self.n}")
        if self.temperature is not None and self.temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {self.temperature}")

    def temperature_under(self, default: float) -> float:
        """The temperature this request decodes at: its own, else the profile's `default`."""
        return default if self.temperature is None else self.temperature

    def draws(self, default_temperature: float) -> int:
        """Completions a backend decodes for this request: n when it samples, 1 when greedy (that one stands for
        all n: `returned`)."""
        return self.n if self.temperature_under(default_temperature) > 0 else 1

    @property
    def keeps_completions(self) -> bool:
        """Whether `ItemResults.completions` holds this request's completions (it asked for several, or for
        log-probabilities); otherwise its text alone is the result."""
        return self.n > 1 or self.logprobs

    def returned(self, drawn: Sequence["Completion"], default_temperature: float) -> tuple["Completion", ...]:
        """What a backend returns of the completions it decoded for this request, in order: a greedy one copied n
        times; the samples it got, at most n (fewer where some were cut or failed)."""
        drawn = tuple(drawn)
        if drawn and self.draws(default_temperature) == 1:
            drawn = drawn[:1] * self.n
        return drawn[:self.n]


@dataclass(frozen=True)
class Completion:
    """One generated completion.

    Attributes:
        text: the completion as returned (stop strings cut off; "" when it could not be generated).
        token_logprobs: the log-probability of each generated token under the model, when the request asked
            (`GenerationRequest.logprobs`); () otherwise or where the backend could not say.
    """

    text: str
    token_logprobs: tuple[float, ...] = ()

    @property
    def mean_logprob(self) -> float | None:
        return sum(self.token_logprobs) / len(self.token_logprobs) if self.token_logprobs else None

    @property
    def min_logprob(self) -> float | None:
        return min(self.token_logprobs) if self.token_logprobs else None

    @property
    def probability(self) -> float | None:
        """exp(mean log-probability): the per-token geometric mean probability, in (0, 1]."""
        mean = self.mean_logprob
        return None if mean is None else math.exp(mean)


def completions_of(results: Sequence[str], index: int) -> tuple[Completion, ...]:
    """Every completion of request `index` in a `generate` result: the backend's own (`ItemResults.completions`)
    when it kept them, else the plain text as one completion without log-probabilities; () for ""."""
    kept = getattr(results, "completions", None) or {}
    if index in kept:
        return tuple(kept[index])
    text = results[index]
    return (Completion(text),) if text else ()


@runtime_checkable
class Generator(Protocol):
    """What the pipeline needs from an LLM backend.

    Attributes:
        adapters: the LoRA adapter names a request may carry (`AdapterNames`; another name is an
            `UnknownAdapterError`); `adapters.names` are the ones served by their own weights (the warm-up's).
        missing_adapters: the profile's adapters that are not there, name -> why (a folder not found, a server
            that does not serve one; {} when none is missing). A backend leaves them out of `adapters`;
            `BaseModelStandIn` (what `make_generator` returns when there are any) accepts their names, sends their
            requests to the base model, and keeps them here for the trace.
    """

    adapters: AdapterNames
    missing_adapters: Mapping[str, str]

    def generate(self, requests: Sequence[GenerationRequest], *, deadline: Deadline | None = None) -> list[str]:
        """Returns one completion per request, in order. Requests that cannot start before the deadline
        return "" (the caller turns that into "i don't know"); a backend may return `ItemResults`, whose
        `reasons` say why a request holds "" (it failed alone, or the deadline stopped its retry), and the
        pipeline copies them into the trace. The plain result is each request's first completion's text; a
        request with n > 1 or logprobs gets all of its `Completion`s in `ItemResults.completions[index]`
        (read them with `completions_of`)."""

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` under the model's tokenizer (for context budgets)."""

    def truncate_tokens(self, text: str, max_tokens: int) -> str:
        """`text` cut to at most `max_tokens` tokens of the model's tokenizer."""


_BACKENDS = {
    "hf": "models.llm.hf_backend:HFGenerator",
    "vllm": "models.llm.vllm_backend:VLLMGenerator",
    "openai": "models.llm.openai_backend:OpenAIGenerator",
}


def make_generator(config, models_dir: str, missing: Mapping[str, str] | None = None) -> Generator:
    """Builds the backend named by `config.backend` (imported lazily: vllm only when asked for), with the base
    model standing in for every missing adapter: `missing` (name -> why: the folders not found, which the profile
    no longer names, models/adapter_fallback.py) and those the backend found absent itself (`missing_adapters`)."""
    from models.llm.stand_in import with_stand_ins

    target = _BACKENDS.get(config.backend)
    if target is None:
        raise ValueError(f"unknown llm.backend {config.backend!r}; expected one of {sorted(_BACKENDS)}")
    module_name, _, class_name = target.partition(":")
    return with_stand_ins(getattr(importlib.import_module(module_name), class_name)(config, models_dir), missing)
