"""The web pathway (db3 §2.2/§3.1): HTML -> text and tables -> parent/child chunks -> recall -> rerank ->
`<DOC>` context. The pipeline uses the two names below; the modules are readable on their own:
`extraction` -> `pages` -> `chunker` -> `lexical` / `reranker` -> `retriever` (or `arm/`, by `factory`) ->
`context` (the embedder it
reads with is the shared `models.embedder`)."""
from models.web.context import format_context
from models.web.factory import RETRIEVERS, make_web_retriever
from models.web.retriever import WebRetriever

__all__ = ["RETRIEVERS", "WebRetriever", "format_context", "make_web_retriever"]
