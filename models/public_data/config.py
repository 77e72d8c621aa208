"""Settings of the public-data pathway (one section of a profile)."""
from __future__ import annotations

from dataclasses import dataclass

from models.public_data.sql.config import SQLConfig


@dataclass(frozen=True)
class PublicDataConfig:
    # Store. `database` is repo-relative or absolute; when it is missing (or was auto-built and its
    # sources changed) it is built from `build_from` ("" = never build: a missing store skips the pathway).
    database: str = ".cache/public_data/public_data.sqlite"
    build_from: str = "data/public"  # the shipped fixtures; point both keys at the full CSVs (data/public/README.md)
    # Entity extraction (prompts/entity_<domain>.txt on the base model unless an adapter is named).
    entity_adapter: str | None = None
    entity_max_new_tokens: int = 32
    max_entities: int = 4  # of the `&&`-joined list; more is the model rambling
    # Linking: exact -> substring -> near miss (models/public_data/linker.py).
    substring_min_chars: int = 4  # shorter names ("up", "her") only link exactly
    max_links: int = 3  # entities kept per extracted name
    link_candidates: int = 30  # trigram near-misses compared in the last stage
    # Cosine of two names' embeddings. MiniLM (fixtures): true pairs 0.65-0.94, wrong titles <= 0.57.
    # bge-base cosines run higher for unrelated text, so its profile sets more.
    embedding_threshold: float = 0.6
    fuzzy_threshold: float = 0.85  # difflib character ratio: typos ("the matirx") 0.88-0.97, wrong <= 0.71
    # Facts.
    max_records: int = 64  # records reranked per query
    top_facts: int = 10  # db3: the top 10 Oscar sentences
    award_year_lookup: bool = True  # Oscar/Grammy questions with a year also read that ceremony's records
    # The same store in its own language: one model-written SELECT per aggregate question (the "sql" source).
    sql: SQLConfig = SQLConfig()
