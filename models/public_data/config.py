"""Settings of the public-data pathway (one section of a profile)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PublicDataConfig:
    database: str = "data/public/public_data.sqlite"  # repo-relative or absolute; missing -> pathway skipped
    entity_adapter: str | None = None
    entity_max_new_tokens: int = 32
    substring_min_chars: int = 4
    embedding_threshold: float = 0.75
    top_facts: int = 10
