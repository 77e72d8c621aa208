"""Settings of the SQL source (the `public_data.sql` section of a profile)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class SQLConfig:
    enabled: bool = True  # also needs "sql" in `pipeline.sources`
    prompt: str = "sql"  # prompts/<prompt>.txt: the schema, the examples, the question
    examples: str = "data/public/sql_examples.jsonl"  # the few-shot pool (question, domain, sql), repo-relative
    examples_k: int = 4  # nearest examples of the question's table group, most similar last
    adapter: str | None = None  # a LoRA adapter for writing SQL (None: the base model)
    max_new_tokens: int = 96
    constrained: bool = True  # the grammar (models/public_data/sql/grammar.py) on the generation
    category_values: int = 64  # a text column with at most this many values offers them as literals
    row_limit: int = 50
    time_limit_s: float = 0.5  # a statement running longer is interrupted (the progress handler)
    max_direct_rows: int = 1  # a result of more rows than this goes to the answer step as facts, not as a value
    # Figures that change by the day, of which the store holds one snapshot: a statement that reads one answers
    # nothing by itself ("which has the larger market cap, msft or aapl?" asked today is not answered by the day
    # the CSV was exported; CRAG's finance questions are real-time). () answers from the snapshot, as db3's
    # public-data shortcut does.
    dynamic_columns: tuple[str, ...] = ("market_cap", "eps", "pe_ratio")
