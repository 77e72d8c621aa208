"""Settings of the KG pathway (one section of a profile)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class KGConfig:
    api_url: str = ""  # "" = $CRAG_MOCK_API_URL, else http://localhost:8000
    timeout_s: float = 5.0
    retries: int = 1
    max_calls_per_question: int = 40
    max_rows: int = 200  # rows kept per statement, and inputs per `*` fan-out
    max_listed: int = 20  # whole rows / values per attribute reported per statement (the rest are counted)
    api_adapter: str | None = None  # LoRA adapter that writes regularized API calls (None = base model)
    api_max_new_tokens: int = 96
    # "" = the domain's prompt (prompts/kg_api_<domain>.txt: the API described, for in-context learning); a
    # prompt name (e.g. "kg_api_adapter") = one short request for every domain, for an adapter that has learned
    # the API (its training data is written with the same request: scripts/make_api_data.py --sft)
    api_prompt: str = ""
    icl_k: int = 4  # in-context examples chosen per query by embedding similarity
    icl_pool: str = "data/kg/icl_pool.jsonl"  # repo-relative or absolute: query -> program examples
    constrained: bool = True  # grammar-constrained decoding of API calls
    match_min_similarity: float = 0.6  # cosine needed to match an entity name by embedding (last resort)
    max_fact_chars: int = 6000
    # the checks between generation and answer (models/kg/checks/): dates normalised before generation,
    # arguments typed, the function's kind and the key's attribute matched to the question; False = none of them
    program_checks: bool = True
    # cosine of the attribute phrase and the key path: the lowest threshold within 0.01 of the best balanced
    # accuracy over right- and wrong-key template pairs (scripts/sweep_key_match.py; its table and the figures of
    # this choice: docs/results.md "KG program checks")
    key_match_threshold: float = 0.4
