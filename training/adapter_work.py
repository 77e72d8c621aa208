"""The shared state of one `make adapters` run (training/make_adapters.py): its settings, work folder, labelling
session and the fingerprints its steps are keyed by, and the resumable-step runner every step goes through."""
from __future__ import annotations

import dataclasses
import os
import time
from functools import cached_property
from itertools import islice
from pathlib import Path
from typing import Callable, Mapping, Sequence

from training.adapter_folders import adapter_dirs
from training.adapter_settings import Settings
from training.labelling_session import MOCK_API_ENV, Session, default_device, labelling_overrides
from training.resumable import StepState, file_fingerprint, model_fingerprint


def counts_text(counts: Mapping) -> str:
    return ", ".join(f"{value} {key}" if not isinstance(value, Mapping) else f"{key} {dict(value)}"
                     for key, value in counts.items())


class AdapterWork:
    """One run's settings, the profile it trains for, its labelling session, and what its steps depend on."""

    def __init__(self, settings: Settings, say: Callable[[str], None] = print, repo_root: Path | None = None):
        from models.config import REPO_ROOT, load_config

        self.settings = settings
        self.say = say
        self.repo_root = Path(repo_root or REPO_ROOT)
        self.folder = Path(settings.work)
        self.device = settings.device or default_device()
        self.target = target = load_config(settings.profile, dict(settings.overrides))  # the profile trained for
        self.adapter_dirs = adapter_dirs(target, settings.adapters_dir)
        gpus = _cuda_devices() if self.device.startswith("cuda") else 0
        self.overrides = labelling_overrides(settings, target.llm, self.device, gpus=gpus)
        self.session = Session(settings.profile, self.overrides, say)
        # What the data steps depend on, known without starting anything (the mock API's port is left out).
        described = dataclasses.asdict(load_config(settings.profile, self.overrides | {"kg.api_url": "(mock API)"}))
        described["llm"]["path"] = "(BASE)"  # its fingerprint is an input of its own: spelt another way, the same
        described.pop("models_dir")
        self.described = described
        self.mock = os.environ.get(MOCK_API_ENV) or "bundled fixture KG"

    @cached_property
    def data_fingerprint(self) -> dict:
        from models.paths import resolve_repo_path

        path = Path(self.settings.data)
        return file_fingerprint(path if path.exists() else resolve_repo_path(self.settings.data))

    @cached_property
    def base_fingerprint(self) -> dict:
        return model_fingerprint(self.settings.base)

    def done(self, name: str, inputs: Mapping) -> bool:
        return StepState(self.folder / name, inputs).finished() is not None

    def step(self, name: str, inputs: Mapping, outputs: Sequence[Path], action: Callable[[], dict],
             resume_ignores: Sequence[str] = ()) -> dict:
        """Runs `action` unless the step is done for `inputs`; prints one status line either way."""
        state = StepState(self.folder / name, inputs, resume_ignores)
        marker = state.finished()
        if marker is not None:
            self.say(f"[{name}] skipped, already done: {counts_text(marker['counts'])}")
            return marker["counts"]
        aside = state.begin(outputs)
        started = time.monotonic()
        counts = action()
        state.finish(counts)
        fresh = f" (started afresh: the earlier outputs, made from other inputs, are in {aside})" if aside else ""
        self.say(f"[{name}] done{fresh}: {counts_text(counts)} ({time.monotonic() - started:.1f} s)")
        return counts

    def question_inputs(self) -> dict:
        """What the steps over the data's questions depend on."""
        return {"data": self.data_fingerprint, "base": self.base_fingerprint, "split": self.settings.split,
                "limit": self.settings.limit, "profile": self.described, "mock": self.mock}

    def labels_inputs(self, adapter: str) -> dict:
        return self.question_inputs() | {"adapter": adapter, "judge": self.settings.judge}

    def kg_inputs(self) -> dict:
        """What the steps over the KG alone depend on."""
        return {"kg": self.described["kg"], "embedder": self.described["embedder"], "mock": self.mock}

    def questions(self):
        """The data's questions the run labels (`--split`, the first `--limit`)."""
        from evaluation.data import load_examples
        from training.build_sft_data import select_split

        return islice(select_split(load_examples(self.settings.data), self.settings.split), self.settings.limit)


def _cuda_devices() -> int:
    import torch

    return torch.cuda.device_count() if torch.cuda.is_available() else 0
