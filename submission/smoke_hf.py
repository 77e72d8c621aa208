"""The GPU acceptance checks of the transformers + peft backend and of LoRA training: mixed adapters in one
generate call, device_map auto, the deadline, and training at fp16, bf16 and in 4 bits."""
from __future__ import annotations

import math
import time

from models.deadline import Deadline
from models.llm.generator import GenerationRequest
from models.llm.gpus import gpu_name
from submission.smoke_checks import (COUNT, DEADLINE_S, NEEDS_CUDA, QUESTIONS, TRAIN_CHATS, Report, Setup, SkipCheck,
                                     deadline_verdict, mixed_batch_verdict, mixed_requests, release_memory,
                                     require_cuda, weight_bytes)


def hf_generator(setup: Setup, **fields):
    """The HF backend on the setup's device; NoCUDA first when that device is CUDA and none is visible."""
    from models.llm.hf_backend import HFGenerator

    if setup.device == "cuda":
        require_cuda()
    return HFGenerator(setup.llm(**fields), setup.models_dir)


def mixed_batch_check(generator) -> tuple[bool, dict]:
    """The base model and both adapters in one `generate` call, beside a base-only call (`mixed_batch_verdict`)."""
    messages = [({"role": "user", "content": q},) for q in QUESTIONS[:4]]
    base_only = generator.generate([GenerationRequest(m, max_new_tokens=16) for m in messages])
    mixed = generator.generate(mixed_requests(messages, max_new_tokens=16))
    return mixed_batch_verdict(mixed, base_only)


def deadline_check(generator) -> tuple[bool, dict]:
    """Long requests under an expired deadline and under a 1 s one (`deadline_verdict`)."""
    long = [GenerationRequest(({"role": "user", "content": COUNT},), max_new_tokens=1024) for _ in range(8)]
    started = time.perf_counter()
    expired = generator.generate(long, deadline=Deadline(0))
    expired_s = time.perf_counter() - started
    started = time.perf_counter()
    cut = generator.generate(long, deadline=Deadline(DEADLINE_S))
    return deadline_verdict(expired, expired_s, cut, time.perf_counter() - started, len(long))


def hf_checks(report: Report, setup: Setup) -> None:
    """The mixed batch and the deadline on one generator placed as the submission would place it, then the
    mixed batch again with `device_map: auto`."""
    def placed_generator():
        placement = setup.placement()
        return hf_generator(setup, **placement), placement.get("device_map", f"one {setup.device} device")

    def with_placement(check):
        def run(loaded):
            generator, placement = loaded
            ok, detail = check(generator)
            return ok, {**detail, "placement": placement, "dtype": setup.hf_dtype,
                        "weights_gib": round(weight_bytes(setup.model_config()) / 2**30, 2)}
        return run

    report.run_on(placed_generator, {"hf_fp16_mixed_batch": with_placement(mixed_batch_check),
                                     "hf_deadline": with_placement(deadline_check)})
    release_memory(setup.device)
    report.run_on(lambda: _spread(setup), {"hf_device_map_auto": mixed_batch_check})
    release_memory(setup.device)


def _spread(setup: Setup):
    if setup.device != "cuda":
        raise SkipCheck(NEEDS_CUDA)
    return hf_generator(setup, device_map="auto")


def train_check(setup: Setup, precision: str, qlora: str = "off") -> tuple[bool, dict]:
    """4 optimiser steps of `train_lora.train` on 8 tiny chats, then the adapter generates in the HF backend.

    Raises:
        SkipCheck: not on CUDA (half precision and 4 bits are CUDA's; fp32 runs anywhere, which is how the
            plumbing is tested without a GPU); bf16 on a GPU that would only emulate it; 4 bits without
            bitsandbytes; unquantised weights that do not fit one GPU (train_lora puts the model on one).
    """
    import torch

    from training.train_lora import TrainConfig, train, train_dtype

    if setup.device != "cuda" and precision != "fp32":
        raise SkipCheck(NEEDS_CUDA)
    if setup.device == "cuda":
        require_cuda()
    if precision == "bf16" and not torch.cuda.is_bf16_supported(including_emulation=False):
        raise SkipCheck(f"{gpu_name()} has no native bf16 (compute capability < 8.0): it trains in fp16")
    if qlora == "on":
        try:
            import bitsandbytes  # noqa: F401
        except ImportError:
            raise SkipCheck("bitsandbytes not installed") from None
    elif setup.placement():
        raise SkipCheck("the unquantised weights do not fit one GPU: train_qlora covers this model")
    out = setup.scratch / f"trained_{precision}_{qlora}"
    config = TrainConfig(max_steps=4, grad_accum=2, max_length=256, eval_examples=2, qlora=qlora, precision=precision)
    result = train(TRAIN_CHATS, setup.folder, out, config)
    generator = hf_generator(setup, adapters={"trained": str(out)})
    [text] = generator.generate([GenerationRequest(({"role": "user", "content": QUESTIONS[0]},), adapter="trained",
                                                 max_new_tokens=8)])
    finite = len(result.losses) == config.max_steps and all(math.isfinite(loss) for loss in result.losses)
    return finite and isinstance(text, str), {"dtype": str(train_dtype(precision)).removeprefix("torch."),
                                            "losses": [round(loss, 3) for loss in result.losses], "generated": text}


def training_checks(report: Report, setup: Setup) -> None:
    for name, precision, qlora in (("train_fp16", "fp16", "off"), ("train_bf16", "bf16", "off"),
                                   ("train_qlora", "auto", "on")):
        report.run(name, lambda: train_check(setup, precision, qlora))
        release_memory(setup.device)
