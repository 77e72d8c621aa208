"""Settings of ARM retrieval (seed 003, `web.retriever: arm`); the defaults are the CPU profile's measured choice
(README "ARM retrieval" has the sweep that chose `lexical_weight`, `ngrams_per_keyword` and `candidates`)."""
from __future__ import annotations

from dataclasses import dataclass


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
    # objects (each serialised object embedded whole, ARM's way: 3-10 s per question with MiniLM on one core)
    embed: str = "children"
    top_objects: int = 5  # objects given to the answer step, best first (within web.context_max_tokens)
