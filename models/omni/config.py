"""Settings of OmniRetrieval's mode (`pipeline.mode: omni`): source selection, evidence selection."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class SourceSelectionConfig:
    """Which sources a question engages (the paper's LLM_select over the sources' descriptors)."""

    # embedding: MiniLM cosines to each source's labelled example questions (no LLM call; the CPU profile) |
    # llm: the model reads every descriptor with the question and names the sources (the paper's way; g4dn)
    kind: str = "embedding"
    k: int = 3  # at most this many sources per question, best first (the paper's k)
    # A source scoring below this is not engaged even when it is in the top k (embedding cosines; the llm
    # selector's scores are 1.0 for a named source). The best-scoring source is always engaged.
    min_score: float = 0.35
    # Engaged whatever their score and on top of k: the web pages come with every CRAG question and need no
    # query of their own (the question is the retriever's query), so leaving them out saves little.
    always: tuple[str, ...] = ("web",)
    # Labelled example questions per source (JSONL with "query" or "question"; repo-relative paths). A source
    # with none is scored by the cosine to its descriptor's `knows` alone.
    examples: dict[str, tuple[str, ...]] = field(default_factory=lambda: {
        "kg": ("data/kg/icl_pool.jsonl", "data/kg/api_train_seed.jsonl"),
        "sql": ("data/public/sql_examples.jsonl",),
        "public_data": ("data/omni/public_data_questions.jsonl",),
        "web": ("data/router/queries.jsonl",),
    })
    top_examples: int = 5  # a source's score: the mean cosine of its this many nearest examples
    descriptor_weight: float = 0.25  # ... blended with the cosine to its descriptor's `knows`
    prompt: str = "select_sources"  # prompts/<name>.txt (llm kind); slots {sources}, {query}, {k}
    max_new_tokens: int = 16


@dataclass(frozen=True)
class EvidenceSelectionConfig:
    """How the engaged sources' evidence becomes one context (the paper's cross-source Select)."""

    context_k: int = 8  # items kept across all sources, best first
    min_per_source: int = 1  # each engaged source with evidence keeps its best items up to this many
    # Prior trust in a source's items, multiplied into their relevance (embedding cosine to the question):
    # structured sources state facts about the entity asked for; a page may be about something else.
    reliability: dict[str, float] = field(default_factory=lambda: {
        "kg": 1.0, "sql": 1.0, "public_data": 0.9, "web": 0.8})
    agreement_bonus: float = 0.15  # added to an item that states another source's exact value
    # When exact values of two sources differ: the one more of the other sources' items state wins; on a
    # tie, the first in this order (the KG's API is as of the query time; SQL reads a published snapshot).
    prefer: tuple[str, ...] = ("kg", "sql", "public_data", "web")
    provenance: bool = True  # each item's text is led by its source ("[kg]", "[web]")
    # ... and a web item's by its page's date ("[web 2024-03-01]"). Off: measured on the bundled sample, the 135M
    # model copies the date as the answer ("2024" for the year Bohemian Rhapsody came out) and the verifier finds
    # it in the chunk's text, so a date in the text is a hallucination waiting to be supported.
    page_dates: bool = False


@dataclass(frozen=True)
class OmniConfig:
    selection: SourceSelectionConfig = field(default_factory=SourceSelectionConfig)
    evidence: EvidenceSelectionConfig = field(default_factory=EvidenceSelectionConfig)
