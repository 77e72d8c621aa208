"""The CPU profile's LLM on its two in-process engines side by side: transformers (`cpu`) and vLLM's CPU build
(`cpu-vllm`), as scripts/bench_backends.py prints them (docs/results.md "cpu and cpu-vllm").

Each profile's generator is built as the pipeline builds it (`make_generator` over the profile's `llm` section:
same model, same adapter, same dtype), its start-up timed, then `generate` timed on batches of greedy chat requests
at 1, 4 and 16 rows: new tokens per wall-clock second (the vLLM engine runs in its own processes, so CPU time of
this process would not count it), best of `repeats` calls after one warm-up call. New tokens are counted with the
model's tokenizer on the returned texts, so a row that stops early counts what it produced.
"""
from __future__ import annotations

import json
import time
from typing import Sequence

from models.config import load_config
from models.llm.generator import GenerationRequest, make_generator

PROMPTS = ["Tell me about the history of Canberra, the capital of Australia.",
           "Describe the plot of the movie Inception in detail.",
           "Which countries border Switzerland, and what languages do they speak?",
           "Write a short biography of the band Coldplay and its members."]


def batch_requests(batch: int, new_tokens: int) -> list[GenerationRequest]:
    return [GenerationRequest(({"role": "user", "content": PROMPTS[i % len(PROMPTS)]},), max_new_tokens=new_tokens)
            for i in range(batch)]


def tokens_per_second(generator, batch: int, new_tokens: int, repeats: int) -> float:
    """New tokens per wall-clock second of `generate` on `batch` requests (best of `repeats`, after a warm-up)."""
    requests = batch_requests(batch, new_tokens)
    generator.generate(requests)  # warm-up: first-call costs (adapter slots, kernels) are start-up, not speed
    best = 0.0
    for _ in range(repeats):
        started = time.perf_counter()
        outputs = generator.generate(requests)
        seconds = time.perf_counter() - started
        best = max(best, sum(generator.count_tokens(text) for text in outputs) / seconds)
    return best


def bench_backends(profiles: Sequence[str] = ("cpu", "cpu-vllm"), batches: Sequence[int] = (1, 4, 16),
                   new_tokens: int = 32, repeats: int = 3) -> dict:
    """Start-up seconds and tokens/s per batch size for each profile's generator; prints a table and a JSON line."""
    results: dict = {"new_tokens": new_tokens, "repeats": repeats, "profiles": {}}
    for profile in profiles:
        config = load_config(profile)
        started = time.perf_counter()
        generator = make_generator(config.llm, config.models_dir)
        startup = time.perf_counter() - started
        try:
            speeds = {batch: round(tokens_per_second(generator, batch, new_tokens, repeats), 1) for batch in batches}
        finally:
            close = getattr(generator, "close", None)
            if close is not None:
                close()
        results["profiles"][profile] = {"backend": config.llm.backend, "dtype": config.llm.dtype,
                                        "startup_s": round(startup, 1), "tokens_per_s": speeds}
    print(f"SmolLM2-135M + api_generation adapter, greedy, up to {new_tokens} new tokens a row, wall clock, "
          f"best of {repeats}\n")
    print("| profile | backend | start-up (s) | " + " | ".join(f"batch {b} (tokens/s)" for b in batches) + " |")
    print("|---|---|---|" + "---|" * len(batches))
    for profile, r in results["profiles"].items():
        print(f"| {profile} | {r['backend']} ({r['dtype']}) | {r['startup_s']} | "
              + " | ".join(str(r["tokens_per_s"][b]) for b in batches) + " |")
    print(json.dumps(results))
    return results
