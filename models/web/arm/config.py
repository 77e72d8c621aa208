"""Settings of ARM retrieval (`web.retriever: arm`). The defaults are the CPU profile's measured choice
(docs/results.md "Retrievers" has the sweep: `lexical_weight`, `candidates`, `keep_keyword`, `embed`) except
`ngrams_per_keyword`: 3 here, ARM's lists, which the g4dn profile keeps (unmeasured); the CPU profile sets 1, which
found the same keys as 3 and 5 for less time."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class StructureConfig:
    """ARM part 2 (§3.2.2-3.3): structure alignment by a MIP, several drafts, self-verification and voting."""

    enabled: bool = False  # false: the top objects of the information alignment (part 1) are the context
    pool: int = 40  # the most relevant objects compatibility is computed over (the drafts' candidates)
    base_objects: int = 8  # the base set every draft expands from (more than k, so draft 0 is a real choice)
    expansion_steps: tuple[int, ...] = (0, 1, 2)  # one draft per entry: base + this many expansion rounds
    per_step: int = 4  # objects each newly added object brings in per round (its most compatible)
    k: int = 5  # objects the MIP chooses per draft
    time_limit_s: float = 0.5  # HiGHS per draft; past it, its best feasible answer or the ranking
    compatibility_weight: float = 1.0  # C's weight against relevance in the MIP objective
    semantic_weight: float = 0.5  # within C: cosine against exact-value overlap
    max_units: int = 8  # units (sentences, rows) embedded per object; later ones compare by their values only
    min_values: int = 2  # least denominator of the overlap coefficient
    # support: the share of keywords an object supports (no model call; the CPU profile) | llm: ARM's way
    verifier: str = "support"
    verify_prompt: str = "arm_verify"
    verify_rows: int = 5  # units per object shown to the LLM verifier (the paper's k = 5)
    verify_max_new_tokens: int = 16
    verify_samples: int = 1  # llm verifier: completions sampled per draft, each a vote (1: the greedy one)
    verify_temperature: float = 0.7  # their temperature when verify_samples > 1
    min_support: float = 0.5  # support verifier: names objects supporting this share of the keywords
    vote_weight: float = 0.5  # confidence = w * mean vote weight + (1 - w) * softmax(votes)


@dataclass(frozen=True)
class ArmConfig:
    # Keywords: lexical (content-word runs, no model call; the CPU profile, where a 135M model does not follow
    # the `a | b | c` format) | llm (the paper's way: prompts/<keyword_prompt>.txt)
    keywords: str = "lexical"
    keyword_prompt: str = "arm_keywords"
    max_keywords: int = 4
    # The constrained rewrite of each keyword into n-grams of the question's pages (ARM's information alignment).
    # false: each keyword searches by its own words (the "keywords only" row of scripts/bench_web.py).
    align: bool = True
    align_prompt: str = "arm_align"
    ngrams_per_keyword: int = 3  # the longest n-gram list one keyword is rewritten as
    max_n: int = 3  # n-grams of 1..max_n words (ARM: 1-3)
    stem_chars: int = 5  # "related" candidates share a word's first stem_chars letters with the keyword
    # The n-grams a keyword may be rewritten as: related (sharing a stem with it) | all (the index's most frequent);
    # both are capped at max_candidates and both hold only n-grams of the pages.
    candidates: str = "related"
    max_candidates: int = 4000
    align_max_new_tokens: int = 24
    keep_keyword: bool = True  # a keyword's BM25 query is the keyword and its n-grams (false: the n-grams, ARM's)
    align_budget: float = 0.5  # share of the web-retrieval deadline the keyword and alignment calls may use
    # score = lexical_weight * mean over keywords of max-normalised BM25 + (1 - lexical_weight) * cosine
    lexical_weight: float = 0.5
    # The cosine: children (each object's best embedded child, the embeddings the parent/child pathway computes) |
    # objects (each serialised object embedded whole, ARM's way; its measured cost is in
    # docs/results.md "Information alignment (ARM part 1)")
    embed: str = "children"
    top_objects: int = 5  # objects given to the answer step, best first (within web.context_max_tokens)
    structure: StructureConfig = field(default_factory=StructureConfig)
