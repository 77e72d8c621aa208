"""Batched LLM calls whose every request is written into its query's trace."""
from __future__ import annotations

import time
from typing import Sequence

from models.isolation import fallback_reasons, retryable_items
from models.llm.generator import GenerationRequest, Generator
from models.run import QueryState


def generate_traced(generator: Generator, stage: str, asks: Sequence[tuple[QueryState, GenerationRequest]],
                    deadline) -> list[str]:
    """One batched call for (state, request) pairs; each state's trace gets the call (stage, adapter, batch size,
    seconds, token counts, the backend's reason when the request holds "" because it failed alone or the
    deadline stopped its retry, `retryable` when that failure was the server's and may pass, and `adapter_missing` with `adapter: None` when the base model stood in for a
    missing adapter). The outputs keep the backend's `reasons` (`fallback_reasons`)."""
    if not asks:
        return []
    started = time.monotonic()
    outputs = generator.generate([r for _, r in asks], deadline=deadline)
    seconds = round(time.monotonic() - started, 3)  # the batched call's wall time, shared by its requests
    failures, retryable = fallback_reasons(outputs), retryable_items(outputs)
    missing = generator.missing_adapters  # adapters the base model stood in for (BaseModelStandIn)
    for k, ((state, request), output) in enumerate(zip(asks, outputs)):
        call = {"stage": stage, "adapter": request.adapter, "batch": len(asks), "seconds": seconds,
                "prompt_tokens": count_tokens(generator, " ".join(m.get("content", "") for m in request.messages)),
                "output_tokens": count_tokens(generator, output or "")}
        if request.n > 1 or request.temperature is not None:  # a sampled request beside the greedy ones
            call.update(n=request.n, temperature=request.temperature)
        if request.adapter in missing:
            call["adapter"], call["adapter_missing"] = None, request.adapter
        if k in failures:
            call["error"] = failures[k]
        if k in retryable:
            call["retryable"] = True  # a resumed run asks this question again (evaluation.runner.needs_asking_again)
        state.trace["llm_calls"].append(call)
    return outputs


def count_tokens(generator: Generator, text: str) -> int | None:
    try:
        return int(generator.count_tokens(text))
    except Exception:  # noqa: BLE001 - a count is for the trace only
        return None

