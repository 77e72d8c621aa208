"""ARM retrieval for a batch (the ARM paper §3.1-3.2.1): the same pages and chunks as the parent/child pathway,
scored by information alignment instead of recall + rerank.

    select pages ─► extract ─► chunk (as WebRetriever) ─► objects: each parent (text chunk, table piece with
    its header, snippet) serialised with its page title ─► n-gram index per question ─► keywords ─►
    constrained rewrite into index n-grams (one LLM call for the batch) ─► per keyword, max-normalised BM25
    of its n-grams over the objects; lexical = their mean ─► cosine = the best cosine of the object's
    embedded children (question embedding; the BM25 top `web.prefilter_k` children, as today), or with
    `arm.embed: objects` the cosine of the serialised object itself (ARM's way; its cost is measured in docs/results.md) ─►
    score = w * lexical + (1 - w) * cosine ─► top `arm.top_objects`, best first

An object's lexical score rewards covering several keywords, which is what list questions need ("which
companies ... highest ... dividend yield": a table of stocks with a dividend-yield column matches all three).
Each query's evidence carries its alignment in its provenance: `arm` (the keywords, their n-grams and each chosen
object's scores: the trace shows it) and `scores` (every object's `ObjectScores` and the objects, which
scripts/bench_retrievers.py sweeps the weight on).

Failure and time policy are WebRetriever's: a query that fails alone gets [], the keyword and alignment calls
get `arm.align_budget` of the deadline (keywords not aligned in time search by their own words), embedding
stops at the deadline (children left unembedded score 0).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from models.deadline import Deadline
from models.types import Chunk, Query
from models.web.arm.alignment import Aligner, Alignment
from models.web.arm.keywords import KeywordExtractor
from models.web.arm.ngrams import NgramIndex
from models.web.arm.object_sets import ObjectSetSelector, Ranked
from models.web.arm.verification import make_verifier
from models.web.chunker import Corpus
from models.web.lexical import bm25_scores_many, normalise
from models.web.reranker import make_reranker
from models.web.retriever import BatchNotes, RetrievalStats, WebRetriever, _timed, _with_score


@dataclass
class ObjectScores:
    """One query's alignment and the scores of every object (aligned with `corpus.parents`)."""

    keywords: list[Alignment] = field(default_factory=list)
    lexical: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    cosine: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    score: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.float32))
    chosen: list[int] = field(default_factory=list)  # object indices given as context, best first
    structure: dict = field(default_factory=dict)  # part 2's trace (ObjectSetSelector), when it ran

    def trace(self, objects: Sequence[Chunk]) -> dict:
        """The keywords, their n-grams, and each chosen object's page and scores (`objects`: the query's parents)."""
        return {"keywords": [{"keyword": a.keyword, "ngrams": list(a.ngrams)} for a in self.keywords],
                "objects": [{"source": objects[i].source[:200], "lexical": round(float(self.lexical[i]), 3),
                             "cosine": round(float(self.cosine[i]), 3), "score": round(float(self.score[i]), 3)}
                            for i in self.chosen],
                **({"structure": self.structure} if self.structure else {})}


def serialise(parent: Chunk, title: str) -> str:
    """An object as ARM indexes it: the page title, then the content (tables already start with it)."""
    return parent.text if not title or parent.text.startswith("Page name:") else f"{title}\n{parent.text}"


EMBED = ("children", "objects")


class ArmRetriever(WebRetriever):
    """Turns each query's search results into its best objects by ARM's information alignment.

    Args:
        cfg: `WebConfig` (its `arm` section; pages, chunk sizes and `prefilter_k` as the parent/child pathway).
        embedder: the shared embedder.
        generator: the LLM (the constrained rewrite; keywords too with `arm.keywords: llm`).
        prompts: the prompt library.
    """

    def __init__(self, cfg, embedder, reranker, generator, prompts=None, clock=time.perf_counter):
        super().__init__(cfg, embedder, reranker, clock=clock)  # the reranker ranks Task-3 snippets only
        if cfg.arm.embed not in EMBED:
            raise ValueError(f"unknown web.arm.embed {cfg.arm.embed!r}; expected {list(EMBED)}")
        self.arm = cfg.arm
        self.keywords = KeywordExtractor(cfg.arm, generator, prompts)
        self.aligner = Aligner(cfg.arm, generator, prompts) if cfg.arm.align else None
        structure = cfg.arm.structure
        self.sets = ObjectSetSelector(structure, make_verifier(structure, generator, prompts, cfg.arm.stem_chars)) \
            if structure.enabled else None

    @classmethod
    def from_config(cls, cfg, models_dir: str, embedder, generator=None, prompts=None) -> "ArmRetriever":
        """Raises:
            ModelNotFoundError: the Task-3 snippet reranker's model folder is missing.
            ValueError: an unknown keyword kind or candidate set, or no LLM.
        """
        if generator is None:
            raise ValueError("web.retriever arm needs the LLM (the constrained rewrite)")
        return cls(cfg, embedder, make_reranker(cfg.reranker, models_dir, embedder), generator, prompts)

    def _retrieve(self, queries: Sequence[Query], task: int, deadline: Deadline, notes: BatchNotes
                  ) -> list[list[Chunk]]:
        stats = notes.stats
        corpora = self._corpora(queries, task, deadline, notes)
        objects = [serialise_all(q, c.parents) for q, c in zip(queries, corpora)]
        with _timed(stats, "rerank_ms", self.clock):  # the alignment takes the reranker's place
            alignments = self._align(queries, objects, deadline)
            lexical = [_lexical(a, texts, q.text, self.arm.keep_keyword)
                       for a, texts, q in zip(alignments, objects, queries)]
        with _timed(stats, "embed_ms", self.clock):
            if self.arm.embed == "objects":  # each serialised object (title + content, ARM §3.1) embedded whole
                cosine = [c.astype(np.float32) for c in self._cosines(queries, objects, deadline, stats)]
            else:
                cosine = self._cosine(queries, corpora, alignments, deadline, stats)
        w = self.arm.lexical_weight
        all_scores = []
        for aligned, lex, cos in zip(alignments, lexical, cosine):
            scores = ObjectScores(aligned, lex, cos, w * lex + (1 - w) * cos)
            scores.chosen = np.argsort(-scores.score, kind="stable")[:self.arm.top_objects].tolist()
            all_scores.append(scores)
        if self.sets is not None:
            with _timed(stats, "structure_ms", self.clock):
                self._choose_sets(queries, corpora, objects, all_scores, deadline)
        results = []
        for query, corpus, scores in zip(queries, corpora, all_scores):
            notes.of(query).update(arm=scores.trace(corpus.parents), scores=(scores, corpus.parents))
            results.append([_with_score(corpus.parents[i], scores.score[i]) for i in scores.chosen])
        return results

    def _choose_sets(self, queries: Sequence[Query], corpora: list[Corpus], objects: list[list[str]],
                     all_scores: list[ObjectScores], deadline: Deadline) -> None:
        """Part 2: each query's `chosen` replaced by the object set structure alignment and voting choose."""
        vectors = self.embedder.encode([q.text for q in queries], is_query=True) \
            if self.sets.verifier.needs_rendering else [None] * len(queries)
        items = [Ranked(q.text, c.parents, page_titles(q, c.parents), texts, s.score, tuple(s.keywords), v)
                 for q, c, texts, s, v in zip(queries, corpora, objects, all_scores, vectors)]
        dimension = self.embedder.dimension
        choices = self.sets.choose(items, lambda texts: self._encode_until(list(texts), deadline, dimension),
                                   self.arm.top_objects, deadline)
        for scores, choice in zip(all_scores, choices):
            scores.chosen, scores.structure = choice.chosen, choice.trace

    def _align(self, queries: Sequence[Query], objects: list[list[str]], deadline: Deadline) -> list[list[Alignment]]:
        """Each query's keywords with their n-grams (unaligned when `arm.align` is off or time ran out)."""
        budget = deadline.share(self.arm.align_budget)
        keywords = self.keywords.extract([q.text for q in queries], deadline=budget)
        if self.aligner is None or budget.expired():
            return [[Alignment(k) for k in ks] for ks in keywords]
        indexes = [NgramIndex(texts, self.arm.max_n, self.arm.stem_chars) for texts in objects]
        return self.aligner.align([(q.text, ks, ix) for q, ks, ix in zip(queries, keywords, indexes)],
                                  deadline=budget)

    def _cosine(self, queries: Sequence[Query], corpora: list[Corpus], alignments: list[list[Alignment]],
                deadline: Deadline, stats: RetrievalStats) -> list[np.ndarray]:
        """Per query, each object's best child cosine to the question (0 for objects with no child embedded). The
        children embedded are the BM25 top `prefilter_k` for the question and its aligned n-grams."""
        chosen = [self._candidates(q, c, " ".join([q.text] + [a.query() for a in aligned]))
                  for q, c, aligned in zip(queries, corpora, alignments)]
        sims = self._cosines(queries, [[c.children[i] for i in picked] for c, picked in zip(corpora, chosen)],
                             deadline, stats)
        cosine = [np.zeros(len(c.parents), dtype=np.float32) for c in corpora]
        for out, corpus, picked, sim in zip(cosine, corpora, chosen, sims):
            np.maximum.at(out, [corpus.parent_of[i] for i in picked], sim.astype(np.float32))
        return cosine


def _lexical(alignment: list[Alignment], objects: list[str], question: str, keep_keyword: bool) -> np.ndarray:
    """Mean over keywords of the max-normalised BM25 of the keyword's n-grams (the question's own BM25 when
    there is no keyword)."""
    if not objects:
        return np.zeros(0, dtype=np.float32)
    queries = [a.query(keep_keyword) for a in alignment] or [question]
    per_keyword = bm25_scores_many(queries, objects)
    return np.mean([normalise(row) for row in per_keyword], axis=0).astype(np.float32)


def page_titles(query: Query, parents: Sequence[Chunk]) -> list[str]:
    """The page title of each object."""
    titles = {p.page_url: p.page_name or "" for p in query.search_results}
    return [titles.get(parent.source, "") for parent in parents]


def serialise_all(query: Query, parents: Sequence[Chunk]) -> list[str]:
    """The query's objects serialised with their pages' titles (what the index, BM25 and `embed: objects` read)."""
    return [serialise(parent, title) for parent, title in zip(parents, page_titles(query, parents))]
