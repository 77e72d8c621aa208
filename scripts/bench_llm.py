"""CPU figures of the transformers backend (README "Measured"): tokens/s and the grammar-mask cost per step.

    python scripts/bench_llm.py                   # SmolLM2-135M (the CPU profile's model), one thread

Measured side by side in one run, in CPU time of this process (one thread), so a machine shared with other
jobs changes the figures little:
- tokens/s of `model.generate` at batch 1 and batch 4, in float32 and bfloat16, with exactly
  `--new-tokens` new tokens per row (min = max, greedy) after one warm-up call;
- the grammar-mask cost per decoding step: the KG pathway's real request for a sample question, decoded
  under its movie-domain Lark grammar by `HFGenerator` (llguidance masks), with the logits processor's
  own time per step beside the whole step's time.
Prints a Markdown table and one JSON line.
"""
from __future__ import annotations

import argparse
import json
import sys
import time


import torch

from models.config import REPO_ROOT, load_config
from models.llm.config import LLMConfig
from models.llm.generator import GenerationRequest

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--new-tokens", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)

    from models.llm.hf_backend import HFGenerator

    cpu = load_config("cpu")
    results: dict = {"threads": args.threads, "new_tokens": args.new_tokens, "tokens_per_s": {}}
    generators = {}
    for dtype in ("float32", "bfloat16"):
        generators[dtype] = HFGenerator(LLMConfig(path=cpu.llm.path, dtype=dtype), str(REPO_ROOT / "models"))
        for batch in (1, 4):
            results["tokens_per_s"][f"{dtype} batch {batch}"] = round(
                tokens_per_second(generators[dtype], batch, args.new_tokens, args.repeats), 1)
    results["grammar"] = grammar_mask_cost(generators["float32"])

    print(f"SmolLM2-135M, transformers backend, {args.new_tokens} new tokens, {args.threads} thread(s), CPU time\n")
    print("| dtype | batch 1 (tokens/s) | batch 4 (tokens/s) |\n|---|---|---|")
    for dtype in ("float32", "bfloat16"):
        t = results["tokens_per_s"]
        print(f"| {dtype} | {t[f'{dtype} batch 1']} | {t[f'{dtype} batch 4']} |")
    g = results["grammar"]
    print(f"\ngrammar mask (KG movie grammar, llguidance): {g['mask_ms_per_step']:.2f} ms of a {g['step_ms']:.1f} ms "
          f"step ({g['steps']} steps)")
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
