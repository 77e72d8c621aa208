"""Measures the T4 latency projection's inputs on whatever GPU runs it (`run_gpu_bench`; the command line is
scripts/gpu_bench.py): no weights, no tokenizer, nothing downloaded.

Models are built here from Llama configs with random weights (speed does not depend on the weights' values):
- `smollm2-135m`: the CPU profile's SmolLM2-135M shape (30 layers, hidden 576). Its GPU work per decode step is
  negligible on a data-centre GPU, so its step time is the engine's host work per step for ~the 8B's depth;
- `llama3-8b-<k>L`: Llama-3-8B's shape (hidden 4096, MLP 14336, 32 heads, 8 KV heads, vocabulary 128256) cut to
  k layers: the GEMM shapes and the attention the grader's model runs, in a few GB;
- `--model FOLDER`: a real model folder (the 8B when present), loaded as the HF backend does.
For each model and engine (transformers + peft always; vLLM when it imports, built first, before this process
touches CUDA) and for batch 1, 4 and 8, without and with a rank-8 LoRA adapter on q, k, v, o, gate, up and down:
prefill tokens/s (one forward pass over the batch) and decode tokens/s (`generate` of N tokens, less the prefill).
Kernels, on their own: cuBLAS fp16 GEMMs at the 8B's projection shapes (full and one tensor-parallel quarter), the
copy bandwidth, and Triton's FMA `tl.dot` (fp16 below compute capability 8.0, where Triton takes that path; forced
with fp32 `input_precision="ieee"` elsewhere).
Each cell runs on its own: one that raises is recorded under "errors" and the others still run. The JSON
(`--out`) is what `scripts/latency_model.py project --calibration FILE` reads (`models.latency.calibrate`).
`--device cpu` runs the same code in float32 with a scaled-down 8B shape, so it can be tested without a GPU.
"""
from __future__ import annotations

import json
import os
import platform
import statistics
import tempfile
import time
import traceback
from pathlib import Path
from typing import Callable

# Before torch is imported: nothing on the way to a vLLM engine may initialise CUDA in this process (its
# tensor-parallel workers would then fail to fork), so availability checks go through NVML.
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")

LORA_TARGETS = ["q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"]
LORA_RANK = 8  # the g4dn profile's llm.max_lora_rank
BATCHES = (1, 4, 8)

SMOLLM2_135M = dict(hidden_size=576, intermediate_size=1536, num_hidden_layers=30, num_attention_heads=9,
                    num_key_value_heads=3, vocab_size=49152)  # HuggingFaceTB/SmolLM2-135M's config.json
LLAMA_3_8B = dict(hidden_size=4096, intermediate_size=14336, num_attention_heads=32, num_key_value_heads=8,
                  vocab_size=128256)  # meta-llama/Meta-Llama-3-8B-Instruct's config.json, layers chosen per run
# --device cpu: the 8B's proportions (MLP 3.5 x hidden, 4 query heads per KV head) at a size a test can run
LLAMA_3_8B_CPU = dict(hidden_size=256, intermediate_size=896, num_attention_heads=8, num_key_value_heads=2,
                      vocab_size=4096)
SMALL_CPU = dict(hidden_size=64, intermediate_size=128, num_hidden_layers=4, num_attention_heads=4,
                 num_key_value_heads=2, vocab_size=1024)


class Bench:
    """The JSON being built, and the cells that failed."""

    def __init__(self):
        self.data: dict = {"schema": 1, "device": {}, "kernels": {}, "engines": {}, "errors": {}, "skipped": {}}

    def cell(self, name: str, fn: Callable[[], object]):
        """Runs one measurement; on an exception records it under errors[name] and returns None."""
        try:
            return fn()
        except Exception as exc:  # noqa: BLE001 - one failing cell must not lose the others
            self.data["errors"][name] = f"{type(exc).__name__}: {exc}"
            traceback.print_exc()
            return None


def _sync(device: str) -> None:
    import torch

    if device == "cuda":
        torch.cuda.synchronize()


def timed(fn: Callable[[], object], device: str, repeats: int = 3, min_s: float = 0.05) -> float:
    """The median seconds of one run of `fn` over `repeats` rounds, after one warm-up run (first-use costs are not
    the steady state: the pipeline's warm-up pays them at start-up).

    A round runs `fn` as many times as it takes to last `min_s` (as `timeit`'s autorange does): on a virtual machine
    the clock may advance in steps of milliseconds, so one sub-millisecond run can read as no time at all."""
    fn()
    _sync(device)
    runs = []
    for _ in range(repeats):
        count, started = 0, time.perf_counter()
        while True:
            fn()
            _sync(device)
            count += 1
            elapsed = time.perf_counter() - started
            if elapsed >= min_s:
                break
        runs.append(elapsed / count)
    return statistics.median(runs)


# ---------------------------------------------------------------------- kernels
def gemm_shapes(hidden: int, intermediate: int, kv_dim: int) -> dict[str, tuple[int, int]]:
    """(in, out) of the 8B's projections as one layer runs them (q/k/v and gate/up fused, as vLLM fuses them)."""
    return {"qkv": (hidden, hidden + 2 * kv_dim), "o": (hidden, hidden), "gate_up": (hidden, 2 * intermediate),
            "down": (intermediate, hidden)}


def bench_gemm(device: str, dtype, tokens: int, shape: dict) -> dict:
    """cuBLAS (CPU: oneDNN/MKL) GEMMs of `tokens` rows through each projection, and through a quarter of it (one
    of four tensor-parallel GPUs: column-parallel outputs, row-parallel inputs, split)."""
    import torch

    kv_dim = shape["hidden_size"] // shape["num_attention_heads"] * shape["num_key_value_heads"]
    full = gemm_shapes(shape["hidden_size"], shape["intermediate_size"], kv_dim)
    quarter = {"qkv": (full["qkv"][0], full["qkv"][1] // 4), "o": (full["o"][0] // 4, full["o"][1]),
               "gate_up": (full["gate_up"][0], full["gate_up"][1] // 4), "down": (full["down"][0] // 4, full["down"][1])}
    out: dict = {"tokens": tokens, "dtype": str(dtype).replace("torch.", ""), "shapes": {}}
    totals = {"full": [0.0, 0.0], "tp4": [0.0, 0.0]}
    for group, shapes in (("full", full), ("tp4", quarter)):
        for name, (k, n) in shapes.items():
            a = torch.randn(tokens, k, device=device, dtype=dtype)
            b = torch.randn(k, n, device=device, dtype=dtype)
            seconds = timed(lambda: a @ b, device, repeats=5)
            flops = 2.0 * tokens * k * n
            out["shapes"][f"{group}:{name}"] = {"k": k, "n": n, "tflops": round(flops / seconds / 1e12, 3)}
            totals[group][0] += flops
            totals[group][1] += seconds
            del a, b
    out["tflops"] = round(totals["full"][0] / totals["full"][1] / 1e12, 3)
    out["tp4_tflops"] = round(totals["tp4"][0] / totals["tp4"][1] / 1e12, 3)
    return out


def bench_bandwidth(device: str, megabytes: int) -> dict:
    """A device-to-device copy: each byte read once and written once."""
    import torch

    x = torch.empty(megabytes * 2 ** 20, dtype=torch.uint8, device=device)
    y = torch.empty_like(x)
    seconds = timed(lambda: y.copy_(x), device, repeats=5)
    return {"megabytes": megabytes, "gb_s": round(2 * x.numel() / seconds / 1e9, 1)}


def bench_triton_fma(size: int, capability: tuple[int, int]) -> dict:
    """Triton's `tl.dot` where it does not use tensor cores: fp16 inputs below compute capability 8.0 (Triton >= 3.3
    lowers them to FMA there, as in vLLM's attention and LoRA kernels on a T4), else fp32 with
    input_precision="ieee" (FMA on every GPU). Accumulates in fp32."""
    import torch
    import triton
    import triton.language as tl

    @triton.jit
    def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, IEEE: tl.constexpr):
        pid_m, pid_n = tl.program_id(0), tl.program_id(1)
        rm = pid_m * BM + tl.arange(0, BM)
        rn = pid_n * BN + tl.arange(0, BN)
        rk = tl.arange(0, BK)
        acc = tl.zeros((BM, BN), dtype=tl.float32)
        for k in range(0, K, BK):
            x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
            y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
            if IEEE:
                acc += tl.dot(x, y, input_precision="ieee")
            else:
                acc += tl.dot(x, y)
        tl.store(c + rm[:, None] * N + rn[None, :], acc)

    fp16_is_fma = capability < (8, 0)
    dtype = torch.float16 if fp16_is_fma else torch.float32
    a = torch.randn(size, size, device="cuda", dtype=dtype)
    b = torch.randn(size, size, device="cuda", dtype=dtype)
    c = torch.empty(size, size, device="cuda", dtype=torch.float32)
    block = (64, 64, 32)
    grid = (size // block[0], size // block[1])
    seconds = timed(lambda: matmul[grid](a, b, c, size, size, size, *block, not fp16_is_fma), "cuda", repeats=5)
    expected = (a.float() @ b.float())
    error = float((c - expected).abs().max() / expected.abs().max())
    return {"size": size, "inputs": str(dtype).replace("torch.", ""), "tflops": round(2.0 * size ** 3 / seconds / 1e12, 3),
            "max_relative_error": round(error, 5), "triton": triton.__version__}


# ---------------------------------------------------------------------- models
def build_model(config: dict, device: str, dtype, seed: int = 0):
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    torch.manual_seed(seed)
    cfg = LlamaConfig(**config, max_position_embeddings=8192, tie_word_embeddings=False)
    with torch.device(device):
        model = LlamaForCausalLM(cfg).to(dtype)
    model.generation_config.pad_token_id = 0
    return model.eval()


def load_folder(folder: str, device: str, dtype):
    from transformers import AutoModelForCausalLM

    placement = {"device_map": "auto"} if device == "cuda" else {}
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype, **placement)
    if device != "cuda":
        model = model.to(device)
    return model.eval()


def add_lora(model):
    from peft import LoraConfig, get_peft_model

    config = LoraConfig(r=LORA_RANK, lora_alpha=16, target_modules=LORA_TARGETS, init_lora_weights=False)
    return get_peft_model(model, config).eval()


def hf_cell(model, device: str, vocab: int, batch: int, prompt: int, new_tokens: int) -> dict:
    """Prefill and decode speed of one batch through `model` (a transformers model, with or without peft)."""
    import torch

    generator = torch.Generator().manual_seed(batch)
    ids = torch.randint(3, vocab, (batch, prompt), generator=generator).to(device)
    mask = torch.ones_like(ids)
    with torch.inference_mode():
        prefill_s = timed(lambda: model(input_ids=ids, attention_mask=mask, use_cache=True), device)
        generate_s = timed(lambda: model.generate(input_ids=ids, attention_mask=mask, max_new_tokens=new_tokens,
                                                  min_new_tokens=new_tokens, do_sample=False), device, repeats=2)
    steps = new_tokens - 1  # the first new token comes out of the prefill
    decode_s = max(generate_s - prefill_s, 1e-9)
    return {"batch": batch, "prompt_tokens": prompt, "new_tokens": new_tokens, "prefill_s": round(prefill_s, 5),
            "prefill_tokens_per_s": round(batch * prompt / prefill_s, 1), "generate_s": round(generate_s, 5),
            "decode_step_s": round(decode_s / steps, 6), "decode_tokens_per_s": round(batch * steps / decode_s, 1)}


def hf_model_cells(bench: Bench, name: str, make: Callable[[], object], device: str, vocab: int, prompt: int,
                   new_tokens: int) -> dict:
    """Every (batch, LoRA) cell of one model on transformers + peft; the model freed afterwards."""
    import gc

    import torch

    entry: dict = {"cells": []}
    model = bench.cell(f"hf:{name}:load", make)
    if model is None:
        return entry
    config = model.config
    entry["shape"] = {key: getattr(config, key) for key in ("num_hidden_layers", "hidden_size", "intermediate_size",
                                                            "num_attention_heads", "num_key_value_heads",
                                                            "vocab_size")}
    for lora in (False, True):
        if lora:
            model = bench.cell(f"hf:{name}:lora", lambda: add_lora(model))
            if model is None:
                break
        for batch in BATCHES:
            cell = bench.cell(f"hf:{name}:b{batch}:{'lora' if lora else 'base'}",
                              lambda: hf_cell(model, device, vocab, batch, prompt, new_tokens))
            if cell is not None:
                entry["cells"].append({"lora": lora, **cell})
            print_cell("hf", name, lora, cell)
    del model
    gc.collect()
    if device == "cuda":
        torch.cuda.empty_cache()
    return entry


def host_step(models: dict, name: str, batch: int = 8) -> dict | None:
    """The small model's decode step without and with LoRA at `batch`: its GPU work is negligible beside the host's
    (launches, Python), so this is the engine's host work per step for a model of that depth."""
    cells = {c["lora"]: c for c in (models.get(name) or {}).get("cells", []) if c["batch"] == batch}
    if False not in cells:
        return None
    return {"model": name, "layers": models[name]["shape"]["num_hidden_layers"], "batch": batch,
            "step_s": cells[False]["decode_step_s"],
            "lora_step_s": cells[True]["decode_step_s"] if True in cells else None}


# ---------------------------------------------------------------------- vLLM
def vllm_cells(bench: Bench, config: dict, scratch: Path, device: str, prompt: int, new_tokens: int) -> dict:
    """The small model on vLLM (one GPU, eager as the g4dn profile), token ids in (no tokenizer), with and without a
    random LoRA adapter saved beside it."""
    import torch

    from vllm import LLM, SamplingParams
    from vllm.lora.request import LoRARequest

    folder, adapter = scratch / "vllm_model", scratch / "vllm_adapter"
    model = build_model(config, "cpu", torch.float16 if device == "cuda" else torch.float32)
    model.save_pretrained(folder)
    add_lora(model).save_pretrained(adapter)
    del model
    llm = LLM(model=str(folder), skip_tokenizer_init=True, dtype="half" if device == "cuda" else "float32",
              enforce_eager=True, enable_lora=True, max_lora_rank=LORA_RANK, max_model_len=prompt + new_tokens + 8,
              gpu_memory_utilization=0.3, seed=0)
    lora = LoRARequest("bench", 1, str(adapter))
    entry: dict = {"cells": []}
    for use_lora in (False, True):
        for batch in BATCHES:
            def run(max_tokens: int):
                prompts = [{"prompt_token_ids": [3 + (i * 7 + j) % (config["vocab_size"] - 3) for j in range(prompt)]}
                           for i in range(batch)]
                params = SamplingParams(max_tokens=max_tokens, min_tokens=max_tokens, ignore_eos=True,
                                        temperature=0.0, detokenize=False)
                llm.generate(prompts, params, lora_request=lora if use_lora else None, use_tqdm=False)

            def cell():
                prefill_s = timed(lambda: run(1), "cpu")  # the engine returns when its GPU work is done
                generate_s = timed(lambda: run(new_tokens), "cpu", repeats=2)
                decode_s = max(generate_s - prefill_s, 1e-9)
                return {"batch": batch, "prompt_tokens": prompt, "new_tokens": new_tokens,
                        "prefill_s": round(prefill_s, 5), "prefill_tokens_per_s": round(batch * prompt / prefill_s, 1),
                        "generate_s": round(generate_s, 5), "decode_step_s": round(decode_s / (new_tokens - 1), 6),
                        "decode_tokens_per_s": round(batch * (new_tokens - 1) / decode_s, 1)}

            result = bench.cell(f"vllm:smollm2-135m:b{batch}:{'lora' if use_lora else 'base'}", cell)
            if result is not None:
                entry["cells"].append({"lora": use_lora, **result})
            print_cell("vllm", "smollm2-135m", use_lora, result)
    entry["shape"] = {"num_hidden_layers": config["num_hidden_layers"], "hidden_size": config["hidden_size"]}
    engine_core = getattr(llm.llm_engine, "engine_core", None)
    if engine_core is not None:  # stops the engine-core process and its workers before the HF models load
        engine_core.shutdown()
    del llm
    return {"models": {"smollm2-135m": entry}, "host_step": host_step({"smollm2-135m": entry}, "smollm2-135m")}


# ---------------------------------------------------------------------- the run
def print_cell(engine: str, model: str, lora: bool, cell: dict | None) -> None:
    if cell is None:
        print(f"{engine:5} {model:22} {'lora' if lora else 'base':4}  failed (see errors)", flush=True)
        return
    print(f"{engine:5} {model:22} {'lora' if lora else 'base':4} batch {cell['batch']}: prefill "
          f"{cell['prefill_tokens_per_s']:>10.0f} tok/s, decode {cell['decode_tokens_per_s']:>8.1f} tok/s "
          f"({cell['decode_step_s'] * 1e3:.2f} ms/step)", flush=True)


def describe_device(device: str) -> dict:
    import torch

    info = {"torch": torch.__version__, "host_cpu": platform.processor() or platform.machine(),
            "host_cores": os.cpu_count()}
    if device == "cuda":
        props = torch.cuda.get_device_properties(0)
        info.update(name=props.name, compute_capability=[props.major, props.minor],
                    memory_gb=round(props.total_memory / 1e9, 1), cuda=torch.version.cuda)
    else:
        info.update(name="cpu", compute_capability=None)
    return info


def vllm_importable() -> str | None:
    """None when vLLM imports, else why not."""
    try:
        import vllm  # noqa: F401
    except Exception as exc:  # noqa: BLE001 - any import failure means no vLLM cells
        return f"vllm is not importable here ({type(exc).__name__}: {exc})"
    return None


def run_gpu_bench(args) -> int:
    """Runs every cell for the parsed command line (scripts/gpu_bench.py), writes the JSON to args.out, prints a
    table line per cell and returns 0 (1 when every cell failed)."""
    import torch

    bench = Bench()
    device = args.device
    cuda = device == "cuda"
    if cuda and not torch.cuda.is_available():
        raise SystemExit("--device cuda: no CUDA GPU is visible (use --device cpu to check the plumbing)")
    dtype = torch.float16 if cuda else torch.float32
    prompt, new_tokens = args.prompt_tokens, args.new_tokens
    bench.data["settings"] = {"device": device, "dtype": str(dtype).replace("torch.", ""), "prompt_tokens": prompt,
                              "new_tokens": new_tokens, "batches": list(BATCHES), "lora_rank": LORA_RANK,
                              "llama3_8b_layers": args.layers, "note": args.note}
    small = SMOLLM2_135M if cuda else SMALL_CPU
    big = dict(LLAMA_3_8B if cuda else LLAMA_3_8B_CPU, num_hidden_layers=args.layers)
    with tempfile.TemporaryDirectory() as scratch:
        why_not = "--no-vllm" if args.no_vllm else vllm_importable()
        if why_not is None and not cuda:
            why_not = "vLLM is measured on CUDA only (its CPU build's speed says nothing about a GPU's)"
        if why_not is None:  # before anything in this process initialises CUDA
            os.environ.setdefault("VLLM_WORKER_MULTIPROC_METHOD", "spawn")
            result = bench.cell("vllm", lambda: vllm_cells(bench, small, Path(scratch), device, prompt, new_tokens))
            if result is not None:
                bench.data["engines"]["vllm"] = result
        else:
            bench.data["engines"]["vllm"] = {"skipped": why_not}
            print(f"vllm  skipped: {why_not}", flush=True)
        bench.data["device"] = describe_device(device)
        print(f"device: {bench.data['device'].get('name')}, torch {torch.__version__}, {bench.data['settings']['dtype']}",
              flush=True)

        kernels = bench.data["kernels"]
        gemm = bench.cell("kernels:gemm", lambda: bench_gemm(device, dtype, args.gemm_tokens, big))
        if gemm:
            kernels["gemm"] = gemm
            print(f"kernel gemm ({gemm['dtype']}, {gemm['tokens']} rows, the 8B's projections): {gemm['tflops']:.2f} "
                  f"TFLOP/s; a tensor-parallel quarter: {gemm['tp4_tflops']:.2f}", flush=True)
        bandwidth = bench.cell("kernels:bandwidth", lambda: bench_bandwidth(device, args.copy_mb))
        if bandwidth:
            kernels["bandwidth"] = bandwidth
            print(f"kernel copy: {bandwidth['gb_s']:.1f} GB/s", flush=True)
        if cuda:
            capability = tuple(bench.data["device"]["compute_capability"])
            fma = bench.cell("kernels:triton_fma", lambda: bench_triton_fma(args.fma_size, capability))
            if fma:
                kernels["triton_fma"] = fma
                print(f"kernel triton tl.dot on FMA ({fma['inputs']} inputs): {fma['tflops']:.2f} TFLOP/s "
                      f"(max relative error {fma['max_relative_error']})", flush=True)
        else:
            bench.data["skipped"]["kernels:triton_fma"] = "Triton needs CUDA"

        models: dict = {}
        models["smollm2-135m" if cuda else "small"] = hf_model_cells(
            bench, "smollm2-135m" if cuda else "small", lambda: build_model(small, device, dtype), device,
            small["vocab_size"], prompt, new_tokens)
        big_name = f"llama3-8b-{args.layers}L" if cuda else f"llama3-8b-shape-{args.layers}L"
        models[big_name] = hf_model_cells(bench, big_name, lambda: build_model(big, device, dtype, seed=1), device,
                                          big["vocab_size"], prompt, new_tokens)
        if args.model:
            if Path(args.model, "config.json").is_file():
                vocab = json.loads(Path(args.model, "config.json").read_text(encoding="utf-8"))["vocab_size"]
                models[Path(args.model).name] = hf_model_cells(bench, Path(args.model).name,
                                                               lambda: load_folder(args.model, device, dtype),
                                                               device, vocab, prompt, new_tokens)
            else:
                bench.data["skipped"]["model"] = f"{args.model}: no config.json there"
                print(f"model skipped: {args.model} has no config.json", flush=True)
        bench.data["engines"]["hf"] = {"models": models,
                                       "host_step": host_step(models, "smollm2-135m" if cuda else "small")}
    cells = sum(len(m.get("cells", [])) for e in bench.data["engines"].values() for m in e.get("models", {}).values())
    bench.data["cells"] = cells
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(bench.data, indent=1), encoding="utf-8")
    print(f"{cells} cells measured, {len(bench.data['errors'])} failed"
          + (f" ({', '.join(bench.data['errors'])})" if bench.data["errors"] else "") + f"; JSON: {out}", flush=True)
    return 0 if cells else 1
