"""What `make adapters` is asked to do (training/make_adapters.py runs it): the adapters it trains, its settings, and
the one error it stops with."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

ADAPTERS = ("web_answer", "kg_answer", "api_generation")
LABELLED = ("web_answer", "kg_answer")
SEED_EXTRA = ("data/kg/api_train_seed.jsonl",)


class MakeAdaptersError(RuntimeError):
    """A step cannot go on (e.g. no training record for an adapter); the message says why and where to look."""


@dataclass(frozen=True)
class Settings:
    data: str  # CRAG file (any format evaluation.data reads)
    base: str  # the base model's HF folder (or any llm.path spec)
    profile: str = "g4dn"
    overrides: Mapping[str, object] = field(default_factory=dict)  # --set KEY=VALUE, applied last
    work: str = "outputs/adapters"
    adapters_dir: str | None = None  # None: where the profile's llm.adapters point
    limit: int | None = None  # first N questions of the split
    split: str = "all"  # all | 0 | 1
    judge: str = "llm"  # llm | rules
    server_url: str | None = None
    server_model: str | None = None
    device: str | None = None  # None: cuda when available, else cpu
    batch_size: int = 8
    max_per_template: int | None = 20
    max_templates: int | None = None
    extra: tuple[str, ...] = SEED_EXTRA
    max_steps: int = 0  # 0: train_lora's epochs
    max_length: int = 2048
    qlora: str = "off"
    seed: int = 0
    without_kg_answer: bool = False  # train web_answer and api_generation only (the KG check then only informs)
