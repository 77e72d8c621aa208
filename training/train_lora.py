"""Trains one LoRA adapter on a chat-format SFT file (db3 Appendix B, Table 1), with peft and plain torch.

    result = train(chats, base_folder, out_dir, TrainConfig(max_steps=8))         # a peft adapter folder
    result = train_files(["labels.jsonl"], TrainConfig(), adapter="web_answer", profile="g4dn")  # as the CLI

Its command line is scripts/train_lora.py.

Defaults are db3's Table 1: LoRA r=8, alpha=16, dropout 0.1, bias none on q/k/v/up/down/gate_proj; AdamW
(no weight decay, as `adamw_hf`) at lr 2e-4 with a cosine schedule after a 10% linear warm-up, gradients
clipped to 0.3; batch 1 x gradient accumulation 4; 2 epochs; max length 2048. The loss covers the
assistant turn only (`training/encoding.py`).

Design decisions:
- 4-bit QLoRA (bitsandbytes nf4, double quantisation off, gradient checkpointing) needs CUDA: `--qlora auto`
  uses it exactly when a CUDA device is visible, `on` without CUDA is an error, and bitsandbytes is imported
  only on that path (missing: an error that says `pip install bitsandbytes` or `--qlora off`).
- Precision (`--precision`, default auto): compute in bf16 where the GPU has it natively (sm80+), else fp16
  with a loss scaler (the T4); without CUDA fp32 (a 135M model on a laptop; bf16 CPU autograd is slower, not
  faster). `fp16` forces the T4 path on any GPU, so a bf16 GPU can check it; `bf16` and `fp32` likewise.
- The base model is the profile's `llm.path` unless `--base` names another, and it is loaded through the
  inference layer's `resolve_checkpoint`, so a GGUF base is converted once and shared with inference.
- The output is a plain peft adapter folder (`adapter_config.json` + `adapter_model.safetensors`), which
  both backends load (`HFGenerator` via `load_adapter`, vLLM via `LoRARequest`), plus `training_log.json`:
  the settings, every optimiser step's loss and learning rate, and the mean loss of the first
  `--eval-examples` examples before and after training (a deterministic "did it learn" number; step losses
  of single examples are noisy). `--adapter NAME` writes to the folder the profile's `llm.adapters` names.
- A plain loop, not `transformers.Trainer`/trl: ~40 lines that say exactly what happens, no trl dependency.
"""
from __future__ import annotations

import dataclasses
import json
import logging
import math
import random
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import torch

from training.encoding import EncodedExample, collate, encode_all
from training.sft_data import read_records

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainConfig:
    # LoRA (db3 Table 1)
    r: int = 8
    alpha: int = 16
    dropout: float = 0.1
    bias: str = "none"
    target_modules: tuple[str, ...] = ("q_proj", "k_proj", "v_proj", "up_proj", "down_proj", "gate_proj")
    # optimisation (db3 Table 1)
    lr: float = 2e-4
    warmup_ratio: float = 0.1  # of the optimiser steps, linear, then cosine to 0
    max_grad_norm: float = 0.3
    batch_size: int = 1  # examples per forward pass
    grad_accum: int = 4  # forward passes per optimiser step
    epochs: float = 2.0
    max_steps: int = 0  # optimiser steps; > 0 overrides epochs
    max_length: int = 2048  # tokens per example (prompt context cut to fit; label never)
    # hardware
    qlora: str = "auto"  # auto (4-bit exactly when CUDA is visible) | on | off
    precision: str = "auto"  # auto (bf16 native, else fp16; fp32 without CUDA) | fp16 | bf16 | fp32
    gradient_checkpointing: bool | None = None  # None: on with CUDA (db3), off on CPU (slower there)
    # bookkeeping
    seed: int = 0
    eval_examples: int = 8  # loss of this many examples before/after training (0: skip)
    save_every: int = 0  # optimiser steps between snapshots of the adapter to `checkpoint_dir` (0: none)


@dataclass(frozen=True)
class TrainResult:
    out_dir: Path
    steps: int
    losses: tuple[float, ...]  # per optimiser step
    eval_loss_before: float | None
    eval_loss_after: float | None
    n_examples: int
    n_dropped: int


# ---------------------------------------------------------------------------------------------- model
def use_4bit(qlora: str) -> bool:
    """Whether to load the base in 4 bits, checked before any weight loads.

    Raises:
        ValueError: an unknown value, or `on` without CUDA.
        ModuleNotFoundError: 4 bits chosen but bitsandbytes is not installed (a message saying what to do,
            not the bare import error from inside the model loading).
    """
    if qlora not in ("auto", "on", "off"):
        raise ValueError(f"--qlora must be auto, on or off, not {qlora!r}")
    if qlora == "on" and not torch.cuda.is_available():
        raise ValueError("--qlora on needs a CUDA GPU (bitsandbytes 4-bit); use --qlora off or auto on CPU")
    quantize = qlora == "on" or (qlora == "auto" and torch.cuda.is_available())
    if quantize:
        try:
            import bitsandbytes  # noqa: F401
        except ImportError as exc:
            raise ModuleNotFoundError(
                f"--qlora {qlora} on a CUDA GPU trains in 4 bits, which needs bitsandbytes: pip install "
                f"bitsandbytes, or train the base unquantised with --qlora off", name="bitsandbytes") from exc
    return quantize


def compute_dtype(cuda=torch.cuda) -> torch.dtype:
    """fp32 without CUDA; bf16 only where the GPU computes it natively, else fp16 (with a loss scaler).

    `is_bf16_supported()` counts emulation by default and says True on a T4 (compute capability 7.5), where
    bf16 would run emulated, slowly, and with the fp16 loss scaler switched off; `including_emulation=False`
    asks for native support (compute capability 8.0+).
    """
    if not cuda.is_available():
        return torch.float32
    return torch.bfloat16 if cuda.is_bf16_supported(including_emulation=False) else torch.float16


PRECISIONS = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float32}


def train_dtype(precision: str, cuda=torch.cuda) -> torch.dtype:
    """The dtype the base computes in: `auto` is `compute_dtype`; a named one is forced, so a GPU with bf16 can
    still check the T4's fp16 path (fp16 compute, the loss scaler on).

    Raises:
        ValueError: an unknown value; fp16 or bf16 without CUDA (the loss scaler and fast half matmuls are
            CUDA's); bf16 on a GPU that would only emulate it.
    """
    if precision == "auto":
        return compute_dtype(cuda)
    if precision not in PRECISIONS:
        raise ValueError(f"--precision must be auto, {', '.join(PRECISIONS)}, not {precision!r}")
    if precision != "fp32" and not cuda.is_available():
        raise ValueError(f"--precision {precision} needs a CUDA GPU; use auto or fp32 on CPU")
    if precision == "bf16" and not cuda.is_bf16_supported(including_emulation=False):
        raise ValueError("--precision bf16 needs a GPU with native bf16 (compute capability 8.0+); "
                         "a T4 trains in fp16 (auto)")
    return PRECISIONS[precision]


def load_base(folder: str | Path, quantize: bool, dtype: torch.dtype):
    """(model, tokenizer) of a HF model folder computing in `dtype`, in 4 bits on the GPU when `quantize`."""
    from transformers import AutoModelForCausalLM, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    if tokenizer.pad_token is None:  # Llama 3 ships none; padding positions are masked anyway
        tokenizer.pad_token = tokenizer.eos_token
    if quantize:
        from peft import prepare_model_for_kbit_training
        from transformers import BitsAndBytesConfig

        quantization = BitsAndBytesConfig(load_in_4bit=True, bnb_4bit_quant_type="nf4",
                                          bnb_4bit_compute_dtype=dtype, bnb_4bit_use_double_quant=False)
        model = AutoModelForCausalLM.from_pretrained(folder, quantization_config=quantization, device_map={"": 0},
                                                     dtype=dtype)
        model = prepare_model_for_kbit_training(model, use_gradient_checkpointing=True)
    else:
        model = AutoModelForCausalLM.from_pretrained(folder, dtype=dtype)
        model.to("cuda" if torch.cuda.is_available() else "cpu")
    return model, tokenizer


def attach_lora(model, config: TrainConfig):
    from peft import LoraConfig, get_peft_model

    lora = LoraConfig(r=config.r, lora_alpha=config.alpha, lora_dropout=config.dropout, bias=config.bias,
                      target_modules=list(config.target_modules), task_type="CAUSAL_LM")
    return get_peft_model(model, lora)


# ---------------------------------------------------------------------------------------------- training
def mean_loss(model, examples: Sequence[EncodedExample], pad_token_id: int) -> float | None:
    """Mean per-example loss (assistant tokens only), dropout off."""
    if not examples:
        return None
    was_training = model.training
    model.eval()
    with torch.no_grad():
        losses = [model(**_to_device(collate([e], pad_token_id), model)).loss.item() for e in examples]
    model.train(was_training)
    return sum(losses) / len(losses)


def total_steps(n_examples: int, config: TrainConfig) -> int:
    if config.max_steps > 0:
        return config.max_steps
    per_epoch = math.ceil(n_examples / (config.batch_size * config.grad_accum))
    return max(1, math.ceil(per_epoch * config.epochs))


def run_training(model, examples: Sequence[EncodedExample], pad_token_id: int, config: TrainConfig,
                 checkpoint_dir: Path | None = None) -> list[dict]:
    """The optimisation loop; returns one `{"step", "loss", "lr"}` per optimiser step. With `save_every`, the
    adapter is also saved to `checkpoint_dir` every that many steps, so a long CPU run that has to be stopped
    still leaves a usable adapter (and says at which step)."""
    from transformers import get_cosine_schedule_with_warmup

    steps = total_steps(len(examples), config)
    parameters = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(parameters, lr=config.lr, weight_decay=0.0)
    scheduler = get_cosine_schedule_with_warmup(optimizer, math.ceil(config.warmup_ratio * steps), steps)
    # fp16 compute needs loss scaling (as the Trainer's fp16=True); a disabled scaler is a no-op elsewhere.
    scaler = torch.amp.GradScaler("cuda", enabled=train_dtype(config.precision) == torch.float16)
    batches = _batches(examples, config)
    model.train()
    log_rows = []
    for step in range(1, steps + 1):
        micro_losses = []
        for _ in range(config.grad_accum):
            loss = model(**_to_device(collate(next(batches), pad_token_id), model)).loss
            scaler.scale(loss / config.grad_accum).backward()
            micro_losses.append(loss.item())
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(parameters, config.max_grad_norm)
        lr = scheduler.get_last_lr()[0]  # the rate this step uses (0 on the first: warm-up starts at 0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        row = {"step": step, "loss": sum(micro_losses) / len(micro_losses), "lr": lr}
        log_rows.append(row)
        log.info("step %d/%d loss %.4f lr %.2e", step, steps, row["loss"], row["lr"])
        if checkpoint_dir is not None and config.save_every and step % config.save_every == 0:
            model.save_pretrained(checkpoint_dir)
            (Path(checkpoint_dir) / "checkpoint_step.txt").write_text(f"{step} of {steps}\n", encoding="utf-8")
    return log_rows


def _batches(examples: Sequence[EncodedExample], config: TrainConfig):
    """Endless micro-batches, reshuffled (seeded) every epoch."""
    rng = random.Random(config.seed)
    while True:
        order = list(examples)
        rng.shuffle(order)
        for start in range(0, len(order), config.batch_size):
            yield order[start:start + config.batch_size]


def _to_device(batch: dict, model) -> dict:
    return {k: v.to(model.device) for k, v in batch.items()}


def train(chats: Sequence[Sequence[dict]], base_folder: str | Path, out_dir: str | Path,
          config: TrainConfig = TrainConfig(), base_name: str = "", checkpoint_dir: str | Path | None = None
          ) -> TrainResult:
    """Trains an adapter on chats and writes it (plus `training_log.json`) to `out_dir`.

    Args:
        chats: message lists, each ending with the assistant label.
        base_folder: the base model's HF folder (`resolve_checkpoint` output).
        out_dir: where the peft adapter folder is written (created).
        config: hyper-parameters.
        base_name: how the base was named (profile spec), recorded in the log.
        checkpoint_dir: where `config.save_every` snapshots go (None: no snapshots).

    Raises:
        ValueError: no example fits, or a bad `qlora` or `precision` value for this machine.
        ModuleNotFoundError: 4-bit training without bitsandbytes installed.
    """
    started = time.monotonic()
    torch.manual_seed(config.seed)
    quantize = use_4bit(config.qlora)
    model, tokenizer = load_base(base_folder, quantize, train_dtype(config.precision))
    examples, dropped = encode_all(tokenizer, chats, config.max_length)
    if not examples:
        raise ValueError(f"none of the {len(chats)} examples fits max_length={config.max_length}")
    model = attach_lora(model, config)
    # The saved adapter_config.json and log name the base as the profile does (`pkg:...`), or by a folder's
    # name, never by this machine's path: adapters get committed, and both backends attach one to the base
    # they already loaded.
    base_label = base_name or str(base_folder)
    base_label = Path(base_label).name if Path(base_label).is_absolute() else base_label
    model.peft_config["default"].base_model_name_or_path = base_label
    checkpointing = config.gradient_checkpointing
    if checkpointing is None:
        checkpointing = torch.cuda.is_available()
    if checkpointing and not quantize:  # prepare_model_for_kbit_training already did this for 4-bit
        model.gradient_checkpointing_enable()
        model.enable_input_require_grads()
    probe = examples[:config.eval_examples]
    before = mean_loss(model, probe, tokenizer.pad_token_id)
    rows = run_training(model, examples, tokenizer.pad_token_id, config,
                        Path(checkpoint_dir) if checkpoint_dir is not None else None)
    after = mean_loss(model, probe, tokenizer.pad_token_id)
    out_dir = Path(out_dir)
    model.save_pretrained(out_dir)
    result = TrainResult(out_dir, len(rows), tuple(r["loss"] for r in rows), before, after, len(examples), dropped)
    _write_log(out_dir, result, rows, config, base_label, quantize, time.monotonic() - started)
    return result


def _write_log(out_dir: Path, result: TrainResult, rows: list[dict], config: TrainConfig, base: str,
               quantized: bool, wall_s: float) -> None:
    summary = {
        "base": base, "quantized_4bit": quantized, "device": "cuda" if torch.cuda.is_available() else "cpu",
        "dtype": str(train_dtype(config.precision)).removeprefix("torch."),
        "config": dataclasses.asdict(config), "n_examples": result.n_examples, "n_dropped": result.n_dropped,
        "eval_loss_before": result.eval_loss_before, "eval_loss_after": result.eval_loss_after,
        "wall_s": round(wall_s, 1), "steps": rows,
    }
    (out_dir / "training_log.json").write_text(json.dumps(summary, indent=1), encoding="utf-8")


# ---------------------------------------------------------------------------------------------- files
def train_files(data: Sequence[str | Path], config: TrainConfig, out: str | Path | None = None,
                adapter: str | None = None, profile: str | None = None, base: str | None = None,
                checkpoint_dir: str | Path | None = None) -> TrainResult:
    """Trains on the records of the SFT files `data` into `out`, or into the folder the profile's `llm.adapters`
    names for `adapter`; the base is `base` or the profile's `llm.path` (`profile` None: `$CRAG_PROFILE`). Prints
    one line on the result.

    Raises:
        SystemExit: `adapter` is not one of the profile's `llm.adapters`.
    """
    from models.config import load_config
    from models.llm.checkpoint import resolve_checkpoint

    profile = load_config(profile)
    base = base or profile.llm.path
    folder = resolve_checkpoint(base, profile.models_dir, profile.llm.cache_dir)
    if adapter:
        if adapter not in profile.llm.adapters:
            raise SystemExit(f"profile {profile.name!r} has no llm.adapters entry {adapter!r}; "
                             f"it has {sorted(profile.llm.adapters) or 'none'} (or use --out)")
        spec = Path(profile.llm.adapters[adapter])
        out = spec if spec.is_absolute() else Path(profile.models_dir) / spec
    else:
        out = Path(out)
    chats = [record.messages for path in data for record in read_records(path)]
    result = train(chats, folder, out, config, base_name=base, checkpoint_dir=checkpoint_dir)
    print(f"adapter written to {result.out_dir}: {result.steps} steps on {result.n_examples} examples "
          f"({result.n_dropped} dropped); loss {result.losses[0]:.4f} -> {result.losses[-1]:.4f}; "
          f"eval loss {result.eval_loss_before} -> {result.eval_loss_after}")
    return result
