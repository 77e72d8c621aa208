"""The GPUs this process may use, read through NVML so that asking does not initialise CUDA here.

`torch.cuda.is_available()` asks the CUDA runtime (`cudaGetDeviceCount`, which runs `cuInit`), and a
process that has initialised CUDA cannot fork children that use it: each forked vLLM tensor-parallel worker
would fail with "Cannot re-initialize CUDA in forked subprocess". Everything that runs before the vLLM engine
exists therefore asks NVML and never `torch.cuda`. The NVML binding is vLLM's own copy
(`vllm.third_party.pynvml`: vllm 0.32 vendors it and does not depend on nvidia-ml-py, so the image may have no
`pynvml`), else nvidia-ml-py's `pynvml` (a machine with torch and no vllm).

NVML lists every GPU of the machine; CUDA only those `CUDA_VISIBLE_DEVICES` leaves, so the count here is
cut the way CUDA cuts it (the list ends at its first entry that is not a device).
"""
from __future__ import annotations

import logging
import os

log = logging.getLogger(__name__)


def _visible_limit(value: str | None) -> int | None:
    """How many devices `CUDA_VISIBLE_DEVICES=value` admits (None: unset, no limit)."""
    if value is None:
        return None
    count = 0
    for entry in value.split(","):
        entry = entry.strip()
        # CUDA stops at the first invalid entry ("", "-1", a typo); indices and GPU-/MIG- UUIDs are devices
        if not entry or not (entry.isdigit() or entry.startswith(("GPU-", "MIG-"))):
            break
        count += 1
    return count


def _nvml():
    """The NVML binding: vLLM's vendored copy, else nvidia-ml-py's; None when neither is installed."""
    try:
        from vllm.third_party import pynvml
    except ImportError:
        try:
            import pynvml
        except ImportError:
            return None
    return pynvml


def visible_gpu_count() -> int:
    """GPUs CUDA would show this process, counted through NVML; 0 without NVML, a driver or a GPU."""
    pynvml = _nvml()
    if pynvml is None:
        return 0
    try:
        pynvml.nvmlInit()
    except Exception as exc:  # noqa: BLE001 - pynvml.NVMLError and its many subclasses: no driver, no GPU
        log.info("NVML unavailable (%s): no GPU", exc)
        return 0
    try:
        count = int(pynvml.nvmlDeviceGetCount())
    finally:
        pynvml.nvmlShutdown()
    limit = _visible_limit(os.environ.get("CUDA_VISIBLE_DEVICES"))
    return count if limit is None else min(count, limit)


def _first_visible_index() -> int:
    """NVML's index of the first GPU CUDA shows: `CUDA_VISIBLE_DEVICES`'s first entry when it is an index, else 0."""
    first = os.environ.get("CUDA_VISIBLE_DEVICES", "").split(",")[0].strip()
    return int(first) if first.isdigit() else 0


def gpu_name(index: int | None = None) -> str:
    """The name NVML gives GPU `index` ("Tesla T4"; default: the first GPU CUDA shows this process), or "unknown"."""
    if index is None:
        index = _first_visible_index()
    pynvml = _nvml()
    if pynvml is None:
        return "unknown"
    try:
        pynvml.nvmlInit()
        try:
            name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(index))
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # noqa: BLE001 - no driver, no such GPU
        return "unknown"
    return name.decode() if isinstance(name, bytes) else str(name)
