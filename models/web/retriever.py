"""The web pathway for a batch: pages -> documents -> parent/child corpus -> recall -> rerank -> chunks.

    select pages ─► extract (text + tables) ─► chunk (parents, children) ─► [BM25 prefilter] ─►
    embed children of the whole batch at once ─► cosine top recall_k children ─► distinct parents in
    hit order ─► rerank (query, parent) ─► top rerank_k parents, best first

Batching: queries, Task-3 snippets, children and rerank pairs of *all* questions of a batch each go
through their model in one call, so a GPU sees full batches and a CPU pays model overheads once.

Failure policy: a page that cannot be parsed is skipped (its snippet stays); a query whose documents
cannot be built gets []; when a batched step fails, every query is retried alone (`per_item`), so only
the query that fails alone loses its web context (logged), never an exception and never its neighbours.

Time: `retrieve` gets the web stage's deadline and every loop checks it. Task-3 snippets are ranked query
by query, and a query not reached in time is ranked by BM25. A page not reached in time is
skipped with a log line (its snippet stays); embedding runs in slices of the embedder's batch size and
stops at the deadline (children left unembedded score 0); past the deadline the reranker is skipped
(the recall order stands). So retrieval ends at its deadline give or take one page or one slice.

ElectricSheep's page processing (§4.1, each off by default): `web.main_content` reads each page's main
content with trafilatura (the configured extractor is its fallback; its paragraphs become the lines of the
text document) and `web.sentence_chunks` makes sentence groups the text parents (`Chunker`). The BM25
prefilter, the recall and the reranker stay the same.

Provenance: `retrieve` returns each query's chunks as web `Evidence` whose provenance says how they were found:
`extractors` (the extractor that read each page; the pipeline's trace shows it) and `stats` (the batch's
`RetrievalStats`: where the call's time went); `ArmRetriever` adds its alignment. The retriever keeps nothing of a
batch: what a call notes while it runs lives in its own `BatchNotes`.

`prefilter_k` (CPU profile) embeds only the children that BM25 ranks highest for the question. Embedding
every child of five real pages (median ~400) with MiniLM takes a median 7.9 s of one CPU core; with the
BM25 top 64 the whole stage takes 1.7 s, at the same answer-in-context recall (`scripts/bench_web.py`).
"""
from __future__ import annotations

import logging
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from models.deadline import Deadline
from models.embedder import Embedder
from models.evidence import Evidence
from models.isolation import per_item
from models.types import Chunk, Query
from models.web.chunker import Chunker, Corpus
from models.web.extraction import BACKENDS, extract_page
from models.web.main_content import extract_main_content
from models.web.lexical import bm25_scores
from models.web.pages import PRESELECTORS, PageSelection, select_pages, snippet_document, snippet_text, unique_pages
from models.web.reranker import Reranker, make_reranker

log = logging.getLogger(__name__)

Hits = list[tuple[int, float]]  # (parent index, best child cosine), in hit order


@dataclass
class RetrievalStats:
    """Where the time of one `retrieve` call went (milliseconds), and how much was embedded: the whole batch's,
    shared by its queries' evidence."""

    extract_ms: float = 0.0  # page selection + HTML extraction
    chunk_ms: float = 0.0
    embed_ms: float = 0.0  # prefilter + query and child embeddings + cosine recall
    rerank_ms: float = 0.0
    structure_ms: float = 0.0  # ARM part 2: compatibility, MIPs, verification (web.arm.structure)
    children: int = 0  # child chunks built
    embedded: int = 0  # distinct child texts embedded
    parents: int = 0


@dataclass
class BatchNotes:
    """What one `retrieve` call notes while it runs: the batch's stats and, per query id, its provenance (the
    extractor of each page read; ARM's alignment). A call that fails for a batch and is retried query by query
    (`per_item`) keeps noting into the same notes."""

    stats: RetrievalStats = field(default_factory=RetrievalStats)
    provenance: dict[str, dict] = field(default_factory=dict)

    def of(self, query: Query) -> dict:
        return self.provenance.setdefault(query.interaction_id, {})

    def evidence(self, query: Query, chunks: Sequence[Chunk]) -> Evidence:
        """The query's chunks with their provenance: `extractors`, `stats`, and what the retriever added."""
        return Evidence("web", tuple(chunks),
                        provenance={"extractors": [], **self.provenance.get(query.interaction_id, {}),
                                    "stats": self.stats})


@contextmanager
def _timed(stats: RetrievalStats, field: str, clock):
    start = clock()
    try:
        yield
    finally:
        setattr(stats, field, getattr(stats, field) + (clock() - start) * 1000)


class WebRetriever:
    """Turns each query's search results into its best chunks."""

    def __init__(self, cfg, embedder: Embedder, reranker: Reranker, chunker: Chunker | None = None,
                 clock=time.perf_counter):
        if cfg.extraction_backend not in BACKENDS:
            raise ValueError(f"unknown web.extraction_backend {cfg.extraction_backend!r}; expected {list(BACKENDS)}")
        if cfg.task3_preselect not in PRESELECTORS:
            raise ValueError(f"unknown web.task3_preselect {cfg.task3_preselect!r}; expected {list(PRESELECTORS)}")
        self.cfg = cfg
        self.embedder = embedder
        self.reranker = reranker
        self.chunker = chunker or Chunker.from_config(cfg)
        # ElectricSheep's sentence-group parents, for the tasks `web.sentence_chunks` names
        self.group_chunker = Chunker.from_config(cfg, sentence_groups=True) if cfg.sentence_chunks.enabled else None
        self.clock = clock  # of `RetrievalStats`; the benchmark passes time.process_time (CPU time)

    @classmethod
    def from_config(cls, cfg, models_dir: str, embedder: Embedder) -> "WebRetriever":
        """Builds the pathway from a `WebConfig` around the shared `embedder` (the profile's `embedder` section).

        Raises:
            ModelNotFoundError: a configured model folder is missing.
            ValueError: an unknown backend, preselector or reranker kind.
        """
        return cls(cfg, embedder, make_reranker(cfg.reranker, models_dir, embedder))

    # ------------------------------------------------------------------ the batch
    def retrieve(self, queries: Sequence[Query], task: int = 1, deadline: Deadline | None = None) -> list[Evidence]:
        """Each query's web `Evidence`: its best chunks, best first (none for a query without usable pages), and
        their provenance (the module docstring).

        A chunk's `score` is the reranker's, or its best child's cosine when there were no more than
        `rerank_k` parents to choose from (db3 skips the reranker then).

        Args:
            queries: the batch.
            task: 3 ranks the snippets of up to 50 pages to choose which to read; 1 and 2 read the
                first `task3_top_pages` pages in the given order.
            deadline: the web stage's; see the module docstring (None: unbounded).
        """
        deadline = deadline or Deadline(None)
        notes = BatchNotes()
        found = per_item(lambda batch: self._retrieve(batch, task, deadline, notes), list(queries), lambda _: [],
                         "web retrieval", deadline=deadline)
        return [notes.evidence(query, chunks) for query, chunks in zip(queries, found)]

    def _retrieve(self, queries: Sequence[Query], task: int, deadline: Deadline, notes: BatchNotes
                  ) -> list[list[Chunk]]:
        corpora = self._corpora(queries, task, deadline, notes)
        with _timed(notes.stats, "embed_ms", self.clock):
            hits = self._recall(queries, corpora, deadline, notes.stats)
        with _timed(notes.stats, "rerank_ms", self.clock):
            return self._rerank(queries, corpora, hits, deadline)

    # ------------------------------------------------------------------ pages -> documents
    def _corpora(self, queries: Sequence[Query], task: int, deadline: Deadline, notes: BatchNotes) -> list[Corpus]:
        """Each query's parents and children: pages selected, extracted (timed as extract) and chunked (chunk)."""
        stats = notes.stats
        with _timed(stats, "extract_ms", self.clock):
            selections = self._select(queries, task, deadline)
            documents = []
            for query, selection in zip(queries, selections):
                docs, extractors = self._documents(query, selection, task, deadline)
                if extractors:
                    notes.of(query).setdefault("extractors", []).extend(extractors)
                documents.append(docs)
        with _timed(stats, "chunk_ms", self.clock):
            corpora = [self._split(q, docs, task) for q, docs in zip(queries, documents)]
        stats.children += sum(len(c.children) for c in corpora)
        stats.parents += sum(len(c.parents) for c in corpora)
        return corpora

    def _select(self, queries: Sequence[Query], task: int, deadline: Deadline) -> list[PageSelection]:
        top = self.cfg.task3_top_pages
        pages = [unique_pages(q.search_results) for q in queries]
        ranked = [i for i, p in enumerate(pages) if task == 3 and len(p) > top]
        scores: dict[int, list[float]] = {}
        if ranked and self.cfg.task3_preselect == "reranker":
            items = [(queries[i].text, [snippet_document(p) for p in pages[i]]) for i in ranked]
            # a bounded stage ranks query by query while its deadline allows; the rest (and a query whose
            # snippets the reranker fails on) fall back to BM25 (None)
            bounded = deadline.remaining() != float("inf")
            groups = [[k] for k in range(len(items))] if bounded else [list(range(len(items)))]
            for group in groups:
                if deadline.expired():
                    log.warning("web deadline reached: %d queries' snippets ranked by BM25", len(items) - len(scores))
                    break
                ranked_scores = per_item(self.reranker.score_many, [items[k] for k in group], lambda _: None,
                                         "snippet ranking", deadline=deadline)
                scores.update((ranked[k], score) for k, score in zip(group, ranked_scores))
        # Tasks 1/2 (db3): the first pages in the search engine's order, i.e. scores falling with the rank.
        search_order = [[-rank for rank in range(len(p))] for p in pages]
        return [select_pages(q, top, scores.get(i) if i in ranked else search_order[i])  # None: BM25
                for i, q in enumerate(queries)]

    def _documents(self, query: Query, selection: PageSelection, task: int, deadline: Deadline
                   ) -> tuple[list[Chunk], list[str]]:
        """The query's documents (page texts, tables, snippets) and the extractor that read each page it parsed."""
        main_content = self.cfg.main_content.enabled and task in self.cfg.main_content.tasks
        documents, extractors = [], []
        for page in selection.full:
            if deadline.expired():  # no time to parse this page: its snippet still speaks for it
                log.warning("query %s: page %r skipped: web deadline reached", query.interaction_id,
                            page.page_url[:200])
                documents.append(Chunk(snippet_document(page), page.page_url, "snippet"))
                continue
            try:
                text, tables, extractor = self._extract(page, main_content)
            except Exception:  # one unparsable page must not cost the query its other pages
                log.warning("query %s: page %r could not be parsed", query.interaction_id, page.page_url[:200],
                            exc_info=True)
                documents.append(Chunk(snippet_text(page), page.page_url, "text"))
                continue
            # db3 prepends the snippet: the search engine's summary is often the densest passage. (Main
            # content keeps paragraphs as lines; the snippet is then a paragraph of its own.)
            extractors.append(extractor)
            joint = "\n" if main_content else " "
            documents.append(Chunk(f"{snippet_text(page)}{joint}{text}".strip(), page.page_url, "text"))
            documents.extend(Chunk(table, page.page_url, "table") for table in tables)
        documents.extend(Chunk(snippet_document(p), p.page_url, "snippet") for p in selection.snippet_only)
        return [d for d in documents if d.text], extractors

    def _extract(self, page, main_content: bool) -> tuple[str, tuple[str, ...], str]:
        """A page's text (paragraphs as lines with main content), its Markdown tables, and the extractor that
        read it."""
        if main_content:
            content = extract_main_content(page.page_result, page.page_name, self.cfg.main_content)
            return "\n".join(content.paragraphs), content.tables, content.source
        page_text = extract_page(page.page_result, page.page_name, backend=self.cfg.extraction_backend,
                                 max_html_chars=self.cfg.max_html_chars, max_page_tokens=self.cfg.max_page_tokens,
                                 max_table_tokens=self.cfg.max_table_tokens)
        return page_text.text, page_text.tables, self.cfg.extraction_backend

    def _split(self, query: Query, documents: list[Chunk], task: int) -> Corpus:
        use_groups = self.group_chunker is not None and task in self.cfg.sentence_chunks.tasks
        try:
            corpus = (self.group_chunker if use_groups else self.chunker).split(documents)
        except Exception:
            log.warning("query %s: documents could not be chunked", query.interaction_id, exc_info=True)
            return Corpus()
        return corpus

    # ------------------------------------------------------------------ recall
    def _candidates(self, query: Query, corpus: Corpus, lexical_query: str | None = None) -> list[int]:
        """Indices of the children to embed: all, or the top `prefilter_k` by BM25 for `lexical_query` (default:
        the question)."""
        every = list(range(len(corpus.children)))
        k = self.cfg.prefilter_k
        if k <= 0 or len(every) <= k:
            return every
        scores = bm25_scores(lexical_query or query.text, corpus.children)
        return sorted(np.argsort(-scores, kind="stable")[:k].tolist())

    def _recall(self, queries: Sequence[Query], corpora: list[Corpus], deadline: Deadline,
                stats: RetrievalStats) -> list[Hits]:
        candidates = [self._candidates(q, c) for q, c in zip(queries, corpora)]
        cosines = self._cosines(queries, [[c.children[i] for i in chosen] for c, chosen in zip(corpora, candidates)],
                                deadline, stats)
        hits = []
        for corpus, chosen, cosine in zip(corpora, candidates, cosines):
            best_first = np.argsort(-cosine, kind="stable")[:self.cfg.recall_k]
            parents: dict[int, float] = {}  # insertion order = hit order; first hit = best cosine
            for j in best_first:
                parents.setdefault(corpus.parent_of[chosen[j]], float(cosine[j]))
            hits.append(list(parents.items()))
        return hits

    def _cosines(self, queries: Sequence[Query], texts: list[list[str]], deadline: Deadline,
                 stats: RetrievalStats) -> list[np.ndarray]:
        """Per query, the cosine of each of its `texts` to the question. Each distinct text of the batch is embedded
        once (`stats.embedded` counts them), while the deadline allows (texts left over score 0)."""
        rows: dict[str, int] = {}  # distinct text -> row of the embedding matrix
        for own in texts:
            for text in own:
                rows.setdefault(text, len(rows))
        stats.embedded = len(rows)
        if not rows:
            return [np.zeros(0, dtype=np.float32) for _ in queries]
        query_vectors = self.embedder.encode([q.text for q in queries], is_query=True)
        vectors = self._encode_until(list(rows), deadline, query_vectors.shape[1])
        return [vectors[[rows[t] for t in own]] @ query_vector if own else np.zeros(0, dtype=np.float32)
                for own, query_vector in zip(texts, query_vectors)]

    def _encode_until(self, texts: list[str], deadline: Deadline, dimension: int) -> np.ndarray:
        """Embeddings of `texts`, one embedder batch at a time while the deadline allows; zero rows after."""
        vectors = np.zeros((len(texts), dimension), dtype=np.float32)
        step = len(texts) if deadline.remaining() == float("inf") else max(1, getattr(self.embedder, "batch_size", 64))
        for start in range(0, len(texts), step):
            if deadline.expired():
                log.warning("web deadline reached: %d of %d child chunks not embedded", len(texts) - start, len(texts))
                break
            vectors[start:start + step] = self.embedder.encode(texts[start:start + step])
        return vectors

    # ------------------------------------------------------------------ rerank
    def _rerank(self, queries: Sequence[Query], corpora: list[Corpus], hits: list[Hits],
                deadline: Deadline) -> list[list[Chunk]]:
        k = self.cfg.rerank_k
        over = [i for i, h in enumerate(hits) if len(h) > k]  # db3: k parents or fewer are all kept
        if over and deadline.expired():
            log.warning("web deadline reached: reranking skipped for %d queries (recall order kept)", len(over))
            over = []
        items = [(queries[i].text, [corpora[i].parents[p].text for p, _ in hits[i]]) for i in over]
        scored = dict(zip(over, per_item(self.reranker.score_many, items, lambda _: None, "reranking",
                                         deadline=deadline)))
        results = []
        for i, (corpus, query_hits) in enumerate(zip(corpora, hits)):
            if scored.get(i) is not None:
                ranked = sorted(zip((p for p, _ in query_hits), scored[i]), key=lambda ps: -ps[1])[:k]
            else:  # few enough parents, no time, or the reranker failed on this query: recall order
                ranked = query_hits[:k]
            results.append([_with_score(corpus.parents[p], score) for p, score in ranked])
        return results


def _with_score(chunk: Chunk, score: float) -> Chunk:
    return Chunk(chunk.text, chunk.source, chunk.kind, float(score))
