"""The profile's `llm` section as vLLM's engine arguments, mapped once: the in-process backend passes them to
`vllm.LLM(**args)` (models/llm/vllm_backend.py) and the OpenAI server gets the same mapping as its command-line
flags (`server_flags`, evaluation/servers/vllm_server.py), so the two engines cannot drift apart.

    args = engine_args(config.llm, folder, adapters=1, device=device_args(config.llm))
    vllm.LLM(**args)                                  # in-process
    ["-m", "vllm.entrypoints.openai.api_server", *server_flags(args)]   # the server: --max-model-len 2048 ...

What the device adds (`device_args`): on GPUs the dtype, tensor parallelism and memory share; on vLLM's CPU build
the engine `models/llm/cpu_host.cpu_engine` plans for this machine. Neither probes a GPU here: the backend checks
the GPUs and the CPU before it builds (a server checks its own at start).
"""
from __future__ import annotations

from pathlib import Path

from models.llm.config import LLMConfig


def device_args(config: LLMConfig) -> dict:
    """The device's engine arguments: dtype, tensor_parallel_size, and the KV cache's size or memory share.

    Raises:
        ValueError / KVCacheTooLarge: on CPU, an engine this machine cannot run (`cpu_engine`).
    """
    if config.device == "cpu":
        from models.llm.cpu_host import cpu_engine

        return dict(cpu_engine(config).args)
    return dict(dtype=config.dtype, tensor_parallel_size=config.tensor_parallel_size,
                gpu_memory_utilization=config.gpu_memory_utilization)


def lora_slots(config: LLMConfig, adapters: int) -> int:
    """LoRA slots to build the engine with: `llm.max_loras`, and on CPU one spare, empty slot that base-model rows
    read (`cpu_host.cpu_lora_slots`)."""
    if config.device == "cpu":
        from models.llm.cpu_host import cpu_lora_slots

        return cpu_lora_slots(config.max_loras, adapters)
    return config.max_loras


def engine_args(config: LLMConfig, folder: str | Path, adapters: int, device: dict) -> dict:
    """vLLM's engine arguments (`vllm.LLM` / `EngineArgs` keywords) for the model in `folder` with `adapters`
    LoRA adapters; `device` is `device_args(config)`. LoRA slots cost memory: none are reserved without adapters."""
    args = dict(model=str(folder), max_model_len=config.max_model_len, enforce_eager=config.enforce_eager,
                seed=config.seed, **device)
    if adapters:
        args.update(enable_lora=True, max_loras=lora_slots(config, adapters), max_lora_rank=config.max_lora_rank)
    return args


def server_flags(args: dict) -> list[str]:
    """`engine_args` as the OpenAI server's flags: `max_model_len=2048` is `--max-model-len 2048`, a true switch
    (`enforce_eager`) is the bare flag, a false one is left out (every switch here is off by default)."""
    flags: list[str] = []
    for key, value in args.items():
        flag = "--" + key.replace("_", "-")
        if value is True:
            flags.append(flag)
        elif value is not False:
            flags += [flag, str(value)]
    return flags
