"""Settings of the KG pathway (one section of a profile)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KGConfig:
    api_url: str = ""  # "" = $CRAG_MOCK_API_URL, else http://localhost:8000
    timeout_s: float = 5.0
    retries: int = 1
    max_calls_per_question: int = 40
    max_rows: int = 200
    api_adapter: str | None = None  # LoRA adapter that writes regularized API calls (None = base model)
    api_max_new_tokens: int = 96
    icl_k: int = 4  # in-context examples chosen per query by embedding similarity
    constrained: bool = True  # grammar-constrained decoding of API calls
    max_fact_chars: int = 6000
