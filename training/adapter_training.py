"""The training step of `make adapters` (training/make_adapters.py, step 3): one LoRA adapter from its SFT records,
kept when its folder was trained for the same inputs (`MARKER`)."""
from __future__ import annotations

import dataclasses
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Callable

from training.adapter_settings import MakeAdaptersError
from training.adapter_work import AdapterWork, counts_text
from training.resumable import file_fingerprint, fingerprint, read_json, write_json

MARKER = "make_adapters.json"  # in each adapter folder: the fingerprint it was trained for


@dataclass(frozen=True)
class Trained:
    """What the training step did for one adapter: trained now, or kept as already trained for these inputs."""

    counts: dict
    kept: bool = False


class AdapterTrainer:
    """Trains the adapters of one run into the folders the profile names."""

    def __init__(self, work: AdapterWork, sft_path: Callable[[str], Path]):
        self.work = work
        self.settings = work.settings
        self.sft_path = sft_path  # adapter -> its SFT records (the data steps know where they wrote them)

    @cached_property
    def train_config(self):
        from training.train_lora import TrainConfig

        return TrainConfig(max_steps=self.settings.max_steps, max_length=self.settings.max_length,
                           qlora=self.settings.qlora, seed=self.settings.seed)

    @cached_property
    def base_folder(self) -> Path:
        from models.llm.checkpoint import resolve_checkpoint

        return resolve_checkpoint(self.settings.base, self.work.target.models_dir, self.work.target.llm.cache_dir)

    def train(self, adapter: str) -> Trained:
        """Trains `adapter` (or keeps its folder, trained for the same inputs); `MakeAdaptersError` when it has no
        training record."""
        name, out, data = f"train_{adapter}", self.work.adapter_dirs[adapter], self.sft_path(adapter)
        inputs = {"adapter": adapter, "data": file_fingerprint(data), "base": self.work.base_fingerprint,
                  "train": dataclasses.asdict(self.train_config)}
        marker = read_json(out / MARKER) or {}
        trained = all((out / f).is_file() for f in ("adapter_config.json", "training_log.json"))
        if trained and marker.get("fingerprint") == fingerprint(inputs):
            self.work.say(f"[{name}] skipped, already trained for these inputs: {out}")
            return Trained(marker.get("counts", {}), kept=True)
        from training.sft_data import read_records
        from training.train_lora import train

        chats = [record.messages for record in read_records(data)]
        if not chats:
            raise MakeAdaptersError(f"{adapter}: no training record in {data}; see the step's summary and "
                                    "skipped files in that folder (more questions: a larger --limit)")
        started = time.monotonic()
        result = train(chats, self.base_folder, out, self.train_config, base_name=self.settings.base)
        counts = {"steps": result.steps, "examples": result.n_examples, "dropped": result.n_dropped,
                  "eval loss before": _round(result.eval_loss_before), "after": _round(result.eval_loss_after)}
        write_json(out / MARKER, {"fingerprint": fingerprint(inputs), "inputs": inputs, "counts": counts})
        self.work.say(f"[{name}] done: {counts_text(counts)} -> {out} ({time.monotonic() - started:.1f} s)")
        return Trained(counts)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)
