"""The GPU acceptance checks' shared parts (submission/gpu_smoke.py runs them): the report, what the checks work on and
where the model is placed, the fixed questions, and the verdicts that turn outputs into pass or fail."""
from __future__ import annotations

import gc
import json
import sys
import time
import traceback
from dataclasses import dataclass
from pathlib import Path

from models.config import REPO_ROOT
from models.llm.config import LLMConfig
from models.llm.generator import GenerationRequest

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


def timed(generator, requests) -> tuple[list[str], float, int]:
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
