"""Settings of the ElectricSheep answer stages (profile section `reasoning`). Everything off by default."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class KnowledgeConfig:
    """The LLM knowledge extractor (§4.4): the model's own answer, shown to the reasoner as one reference."""

    enabled: bool = False
    tasks: tuple[int, ...] = (1, 2, 3)
    prompt: str = "knowledge_extract"
    max_new_tokens: int = 160
    min_remaining_s: float = 2.0  # not started with less time than this left in the batch


@dataclass(frozen=True)
class BackupConfig:
    """The backup summarizer (§4.7): a short answer from whatever the reasoning stage produced."""

    enabled: bool = True  # (only used when reasoning is enabled)
    prompt: str = "backup_summary"
    max_new_tokens: int = 48
    reserve_s: float = 3.0  # kept back from the reasoning stage so the summarizer can still run
    max_input_chars: int = 4000  # of the reasoning output (or of the references, when there is none)


@dataclass(frozen=True)
class ReasoningConfig:
    """The reasoning module (§4.6): one zero-shot-CoT prompt over every reference, a fixed output format."""

    enabled: bool = False
    tasks: tuple[int, ...] = (1, 2, 3)
    prompt: str = "reasoning"
    max_new_tokens: int = 384
    budget_s: float = 0.0  # time for the reasoning generation per batch; 0 = what the batch has left
    max_reference_tokens: int = 3000  # all references together, in the LLM's tokens
    max_table_chars: int = 4000  # ElectricSheep's "max table length"
    max_kg_chars: int = 1000  # ElectricSheep cut KG references at 1000 characters
    knowledge: KnowledgeConfig = field(default_factory=KnowledgeConfig)
    backup: BackupConfig = field(default_factory=BackupConfig)
