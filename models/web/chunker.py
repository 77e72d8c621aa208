"""Documents -> parent chunks -> child chunks, with the parent of every child (db3 §3.1).

This is the relation LangChain's `ParentDocumentRetriever` keeps (small children are searched, their larger
parents are returned), without its per-query Chroma collection, which db3 rebuilt for every question:
here the relation is two flat arrays, `children[i]` and `parent_of[i]`, built once per query in
microseconds and embedded for the whole batch at once.

- Text documents are split into parents by langchain's `RecursiveCharacterTextSplitter` (sentence ends,
  then spaces), then each parent into children by a second splitter, so **every child's text is a
  substring of its parent** (tested).
- Tables and snippets are their own parents (a table is only readable with its header): a table longer
  than `table_parent_chars` is cut between rows, and every piece repeats the page name and the header.
- A parent whose text was already seen (duplicate pages under different URLs) is dropped.
- With `web.sentence_chunks` (ElectricSheep §4.1) the text parents are sentence groups instead
  (`models.web.sentence_chunker`; a text document's lines are its paragraphs); children, tables, snippets,
  the BM25 prefilter and the reranker stay as they are, so only the unit of context changes.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from langchain_text_splitters import RecursiveCharacterTextSplitter

from models.types import Chunk
from models.web.sentence_chunker import SentenceChunker

# Extracted text has no newlines (whitespace is collapsed); tables are one row per line.
_SEPARATORS = ["\n", ". ", "? ", "! ", "; ", ", ", " ", ""]
_TABLE_HEAD_LINES = 3  # "Page name: ...", the header row, the --- separator (see extraction.markdown_table)


@dataclass(frozen=True)
class Corpus:
    """Parents (returned as context) and children (searched), for one query.

    Attributes:
        parents: parent chunks, in document order.
        children: child texts; `children[i]` is a substring of `parents[parent_of[i]].text`.
        parent_of: index into `parents` for each child.
    """

    parents: tuple[Chunk, ...] = ()
    children: tuple[str, ...] = ()
    parent_of: tuple[int, ...] = ()


def _splitter(size: int, overlap: int) -> RecursiveCharacterTextSplitter:
    if size <= 0 or not 0 <= overlap < size:
        raise ValueError(f"chunk size must be positive and overlap in [0, size), got size={size} overlap={overlap}")
    return RecursiveCharacterTextSplitter(chunk_size=size, chunk_overlap=overlap, separators=_SEPARATORS,
                                          keep_separator="end", strip_whitespace=True)


def split_table(table: str, max_chars: int) -> list[str]:
    """A Markdown table cut between rows into pieces of about `max_chars`, each repeating its head lines.

    A single row longer than the budget is kept whole in its own piece (the parent is then longer than
    `max_chars`; children still cover it).
    """
    lines = table.split("\n")
    head, rows = lines[:_TABLE_HEAD_LINES], lines[_TABLE_HEAD_LINES:]
    if len(table) <= max_chars or not rows:
        return [table]
    head_chars = sum(len(line) + 1 for line in head)
    pieces, current, size = [], [], head_chars
    for row in rows:
        if current and size + len(row) + 1 > max_chars:
            pieces.append("\n".join(head + current))
            current, size = [], head_chars
        current.append(row)
        size += len(row) + 1
    pieces.append("\n".join(head + current))
    return pieces


class Chunker:
    """Splits a query's documents into a `Corpus`; sizes are in characters."""

    def __init__(self, parent_size: int = 700, parent_overlap: int = 100, child_size: int = 200,
                 child_overlap: int = 50, table_parent_chars: int = 1400,
                 sentence_groups: SentenceChunker | None = None):
        self._parents = _splitter(parent_size, parent_overlap)
        self._children = _splitter(child_size, child_overlap)
        self.table_parent_chars = table_parent_chars
        self.sentence_groups = sentence_groups  # None: character-sized text parents (db3)

    @classmethod
    def from_config(cls, cfg, sentence_groups: bool = False) -> "Chunker":
        """Built from a `WebConfig`; `sentence_groups`: text parents by `web.sentence_chunks`."""
        groups = SentenceChunker(cfg.sentence_chunks) if sentence_groups else None
        return cls(cfg.parent_chunk_size, cfg.parent_chunk_overlap, cfg.child_chunk_size,
                   cfg.child_chunk_overlap, cfg.table_parent_chars, sentence_groups=groups)

    def _parent_texts(self, document: Chunk) -> list[str]:
        if document.kind == "table":
            return split_table(document.text, self.table_parent_chars)
        if document.kind == "snippet":
            return [document.text]
        if self.sentence_groups is not None:
            return self.sentence_groups.groups(self.sentence_groups.sentences(document.text.split("\n")))
        return self._parents.split_text(document.text)

    def split(self, documents: Sequence[Chunk]) -> Corpus:
        """Parents and children of `documents` (kinds "text", "table", "snippet"); empty ones are skipped."""
        parents: list[Chunk] = []
        children: list[str] = []
        parent_of: list[int] = []
        seen: set[str] = set()
        for document in documents:
            for text in (t.strip() for t in self._parent_texts(document)):
                if not text or text in seen:
                    continue
                seen.add(text)
                index = len(parents)
                parents.append(Chunk(text, document.source, document.kind))
                for child in self._children.split_text(text):
                    children.append(child)
                    parent_of.append(index)
        return Corpus(tuple(parents), tuple(children), tuple(parent_of))
