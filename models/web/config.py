"""Settings of the web pathway (one section of a profile). Defaults are db3's."""
from __future__ import annotations

from dataclasses import dataclass

from models.web.arm.config import ArmConfig
from models.web.main_content import MainContentConfig
from models.web.sentence_chunker import SentenceChunkConfig


@dataclass(frozen=True)
class RerankerConfig:
    kind: str = "hybrid"  # flag: FlagEmbedding FlagReranker (cross-encoder) | hybrid: dense cosine + BM25
    path: str = ""  # cross-encoder dir for kind=flag, e.g. BAAI/bge-reranker-v2-m3
    fp16: bool = False
    batch_size: int = 16
    max_length: int = 512  # tokens of (query, passage) for the cross-encoder
    device: str = "cpu"
    dense_weight: float = 0.5  # hybrid only: weight of cosine vs. normalised BM25


@dataclass(frozen=True)
class WebConfig:
    # parent_child: db3's recall + rerank (retriever.py) | arm: ARM's information alignment (arm/)
    retriever: str = "parent_child"
    extraction_backend: str = "bs4"  # bs4 | selectolax
    max_page_tokens: int = 12000  # db3's page cap (approximate tokens: words and punctuation)
    max_table_tokens: int = 4000  # all tables of one page together (ElectricSheep's "max table length")
    max_html_chars: int = 3_000_000  # HTML beyond this is not parsed (a 10 MB page costs at most this)
    parent_chunk_size: int = 700  # characters
    parent_chunk_overlap: int = 100
    child_chunk_size: int = 200
    child_chunk_overlap: int = 50
    # Longer tables are cut between rows, each piece repeating the header. Twice a text parent: table rows
    # are mostly digits, which cost ~2x the tokens per character of prose in the LLM's context.
    table_parent_chars: int = 1400
    prefilter_k: int = 0  # >0: only the top-k children by BM25 are embedded (CPU speed); 0: all (db3)
    recall_k: int = 50  # child chunks recalled by cosine
    rerank_k: int = 10  # parents kept after reranking
    task3_top_pages: int = 5  # pages fully processed; with more (Task 3), chosen by snippet preselection
    task3_preselect: str = "reranker"  # reranker (db3) | bm25 (APEX): how snippets are ranked
    context_max_tokens: int = 4000  # of the LLM's tokenizer
    reranker: RerankerConfig = RerankerConfig()
    # ElectricSheep §4.1 (off by default): trafilatura main content, sentence-group chunks.
    main_content: MainContentConfig = MainContentConfig()
    sentence_chunks: SentenceChunkConfig = SentenceChunkConfig()
    arm: ArmConfig = ArmConfig()  # read when retriever is arm
