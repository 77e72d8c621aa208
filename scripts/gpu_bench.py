"""Measures the T4 latency projection's inputs on any CUDA GPU, in one command, without weights or downloads.

    python scripts/gpu_bench.py --out /tmp/gpu_bench.json                 # make gpu-bench
    python scripts/gpu_bench.py --out /tmp/gpu_bench.json --model models/meta-llama/Meta-Llama-3-8B-Instruct
    python scripts/latency_model.py project RUNS... --calibration /tmp/gpu_bench.json
    python scripts/gpu_bench.py --device cpu --out /tmp/b.json            # the plumbing, on a machine without CUDA

For transformers + peft (always) and vLLM (when it imports): prefill and decode tokens/s at batch 1, 4 and 8,
without and with a rank-8 LoRA adapter, on random-weight models of the CPU profile's SmolLM2-135M shape and of
Llama-3-8B's shape cut to `--layers` layers (and `--model`, a real folder, when given); the cuBLAS GEMMs at the 8B's
shapes, the copy bandwidth and Triton's FMA `tl.dot`. What each measures and how the projection uses it:
`submission/gpu_bench.py` and `models.latency.calibrate`. A cell that fails is listed under "errors" in the JSON;
the others still run.
"""
from __future__ import annotations

import argparse
import sys

# The library first: it sets PYTORCH_NVML_BASED_CUDA_CHECK before anything can import torch.
from submission.gpu_bench import run_gpu_bench


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True, help="the JSON file to write")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda")
    parser.add_argument("--no-vllm", action="store_true", help="skip vLLM even where it imports")
    parser.add_argument("--model", default="", help="also a real model folder (e.g. the 8B), loaded as the HF backend")
    parser.add_argument("--layers", type=int, default=2, help="layers of the Llama-3-8B-shaped model")
    parser.add_argument("--prompt-tokens", type=int, default=0, help="0: 1024 on CUDA, 32 on CPU")
    parser.add_argument("--new-tokens", type=int, default=0, help="0: 32 on CUDA, 4 on CPU")
    parser.add_argument("--gemm-tokens", type=int, default=0, help="rows of the GEMM kernels (0: 4096 CUDA, 64 CPU)")
    parser.add_argument("--copy-mb", type=int, default=0, help="bytes copied (0: 1024 MB CUDA, 16 MB CPU)")
    parser.add_argument("--fma-size", type=int, default=2048, help="the Triton FMA matmul's size (square)")
    parser.add_argument("--note", default="", help="recorded in the JSON, e.g. what else ran on the machine")
    args = parser.parse_args(argv)
    cuda = args.device == "cuda"
    args.prompt_tokens = args.prompt_tokens or (1024 if cuda else 32)
    args.new_tokens = max(2, args.new_tokens or (32 if cuda else 4))
    args.gemm_tokens = args.gemm_tokens or (4096 if cuda else 64)
    args.copy_mb = args.copy_mb or (1024 if cuda else 16)
    return run_gpu_bench(args)


if __name__ == "__main__":
    sys.exit(main())
