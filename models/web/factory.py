"""`web.retriever` -> the web pathway's retriever: parent_child (db3's recall + rerank, `retriever.py`) or arm
(ARM's information alignment, `arm/retriever.py`). Both take the same pages and chunks and return
each query's chunks best first, so the Source seam and the context step do not know which one ran."""
from __future__ import annotations

from models.web.retriever import WebRetriever

RETRIEVERS = ("parent_child", "arm")


def make_web_retriever(cfg, models_dir: str, embedder, generator=None, prompts=None):
    """The configured retriever.

    Raises:
        ValueError: an unknown `web.retriever`, or arm without an LLM.
        ModelNotFoundError: a configured model folder is missing.
    """
    if cfg.retriever == "parent_child":
        return WebRetriever.from_config(cfg, models_dir, embedder=embedder)
    if cfg.retriever == "arm":
        from models.web.arm.retriever import ArmRetriever

        return ArmRetriever.from_config(cfg, models_dir, embedder, generator=generator, prompts=prompts)
    raise ValueError(f"unknown web.retriever {cfg.retriever!r}; expected one of {list(RETRIEVERS)}")
