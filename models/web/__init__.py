"""The web pathway (db3 §2.2/§3.1): HTML -> text and tables -> parent/child chunks -> recall -> rerank ->
`<DOC>` context. The pipeline uses the three names below; the modules are readable on their own:
`extraction` -> `pages` -> `chunker` -> `embedder` -> `lexical` / `reranker` -> `retriever` -> `context`."""
from models.web.context import format_context
from models.web.embedder import Embedder
from models.web.retriever import WebRetriever

__all__ = ["Embedder", "WebRetriever", "format_context"]
