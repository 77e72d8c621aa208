"""CPU figures of the transformers backend (docs/results.md "The LLM on CPU"), as scripts/bench_llm.py prints them.

`tokens_per_second` times `model.generate` on a batch of chat prompts (best of several calls, in CPU time of this
process); `grammar_mask_cost` decodes the KG pathway's real request under its Lark grammar and times the
llguidance mask apart from the whole step; `bench_llm` measures both dtypes at batch 1 and 4 and prints a Markdown
table and one JSON line.
"""
from __future__ import annotations

import json
import time
from dataclasses import replace

import torch

from models.config import REPO_ROOT, load_config

PROMPTS = ["What is the capital of Australia?", "Who directed the movie Inception?",
           "Which countries border Switzerland?", "How many members are in the band Coldplay?"]


def tokens_per_second(generator, batch: int, new_tokens: int, repeats: int) -> float:
    """New tokens per CPU second of `generate` on `batch` left-padded chat prompts (best of `repeats`)."""
    tokenizer = generator.tokenizer
    texts = [tokenizer.apply_chat_template([{"role": "user", "content": PROMPTS[i % len(PROMPTS)]}], tokenize=False,
                                           add_generation_prompt=True) for i in range(batch)]
    inputs = tokenizer(texts, return_tensors="pt", padding=True, add_special_tokens=False)
    kwargs = dict(max_new_tokens=new_tokens, min_new_tokens=new_tokens, do_sample=False,
                  pad_token_id=tokenizer.pad_token_id)
    with torch.inference_mode():
        generator.model.generate(**inputs, **kwargs)  # warm-up
        best = float("inf")
        for _ in range(repeats):
            started = time.process_time()
            generator.model.generate(**inputs, **kwargs)
            best = min(best, time.process_time() - started)
    return batch * new_tokens / best


def grammar_mask_cost(generator) -> dict:
    """Per-step time of the llguidance mask (the logits processor) and of the whole step, on a real KG request."""
    from models.kg.pathway import KGPathway
    from models.llm import grammar_decoding
    from models.types import Query

    config = load_config("cpu")
    pathway = KGPathway.from_config(config.kg, embedder=None)
    request = pathway.api_request(Query("q", "what was the budget of the movie avatar?", "03/01/2024, 10:00:00 PT",
                                        ()), "movie")
    spent = {"mask_s": 0.0, "steps": 0}
    original = grammar_decoding.GrammarConstraintProcessor.__call__

    def timed(self, input_ids, scores):
        started = time.process_time()
        try:
            return original(self, input_ids, scores)
        finally:
            spent["mask_s"] += time.process_time() - started
            spent["steps"] += 1

    grammar_decoding.GrammarConstraintProcessor.__call__ = timed
    try:
        started = time.process_time()
        [program] = generator.generate([request])
        total = time.process_time() - started
    finally:
        grammar_decoding.GrammarConstraintProcessor.__call__ = original
    steps = max(1, spent["steps"])
    return {"program": program, "steps": spent["steps"], "mask_ms_per_step": 1000 * spent["mask_s"] / steps,
            "step_ms": 1000 * total / steps}


def bench_llm(new_tokens: int = 32, repeats: int = 3, threads: int = 1) -> int:
    """Measures the CPU profile's model with `threads` torch threads and prints the figures."""
    torch.set_num_threads(threads)

    from models.llm.hf_backend import HFGenerator

    cpu = load_config("cpu")
    results: dict = {"threads": threads, "new_tokens": new_tokens, "tokens_per_s": {}}
    generators = {}
    for dtype in ("float32", "bfloat16"):
        # The profile's own LLM section (its adapters included: the KG request below asks for api_generation),
        # with only the dtype changed.
        generators[dtype] = HFGenerator(replace(cpu.llm, dtype=dtype), str(REPO_ROOT / "models"))
        for batch in (1, 4):
            results["tokens_per_s"][f"{dtype} batch {batch}"] = round(
                tokens_per_second(generators[dtype], batch, new_tokens, repeats), 1)
    results["grammar"] = grammar_mask_cost(generators["float32"])

    print(f"SmolLM2-135M, transformers backend, {new_tokens} new tokens, {threads} thread(s), CPU time\n")
    print("| dtype | batch 1 (tokens/s) | batch 4 (tokens/s) |\n|---|---|---|")
    for dtype in ("float32", "bfloat16"):
        t = results["tokens_per_s"]
        print(f"| {dtype} | {t[f'{dtype} batch 1']} | {t[f'{dtype} batch 4']} |")
    g = results["grammar"]
    print(f"\ngrammar mask (KG movie grammar, llguidance): {g['mask_ms_per_step']:.2f} ms of a {g['step_ms']:.1f} ms "
          f"step ({g['steps']} steps)")
    print(json.dumps(results))
    return 0
