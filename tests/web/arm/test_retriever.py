"""ArmRetriever with fake models: objects and titles, scoring, trace, time and failure policy, the factory, and
the web source's trace."""
from dataclasses import replace

import numpy as np
import pytest

from models.deadline import Deadline
from models.types import Query, SearchResult
from models.web import make_web_retriever
from models.web.arm.config import ArmConfig
from models.web.arm.retriever import ArmRetriever, serialise
from models.web.config import WebConfig
from models.types import Chunk
from tests.web.test_retriever import KeywordReranker
from tests.stand_ins import ServesAnyAdapter

CFG = WebConfig(extraction_backend="selectolax", child_chunk_size=60, child_chunk_overlap=0, prefilter_k=0,
                arm=ArmConfig(top_objects=2, lexical_weight=0.5))


class EchoGenerator(ServesAnyAdapter):
    """Writes the first candidate n-gram of each request's constraint (what a model would pick first)."""

    def __init__(self):
        self.calls = 0

    def generate(self, requests, deadline=None):
        self.calls += 1
        out = []
        for r in requests:
            grammar = r.constraint.grammar
            out.append(grammar.split("NGRAM: ")[1].split(" | ")[0].strip().strip('"'))
        return out


def page(url, title, body):
    return SearchResult(page_name=title, page_url=url, page_snippet="", page_result=f"<html><body>{body}</body></html>")


def query(qid="q1"):
    pages = (page("u1", "High margin stocks", "<p>Costco keeps a profit margin of 2.9 percent.</p>"),
             page("u2", "Cooking", "<p>Boil the pasta for ten minutes in salted water.</p>"),
             page("u3", "Fashion", "<p>H&M has a profit margin of 6.5 percent and many customers.</p>"))
    return Query(qid, "which retailers have the widest profit margin?", "", pages)


def make(hashing_embedder, cfg=CFG, generator=None):
    return ArmRetriever(cfg, hashing_embedder, KeywordReranker("zzz"), generator or EchoGenerator())


def test_objects_are_scored_by_alignment_and_cosine_and_traced(hashing_embedder):
    retriever = make(hashing_embedder)
    [evidence] = retriever.retrieve([query()])
    chunks = evidence.items
    assert len(chunks) == 2 and {c.source for c in chunks} == {"u1", "u3"}
    assert chunks[0].score >= chunks[1].score
    trace = evidence.provenance["arm"]
    assert [k["keyword"] for k in trace["keywords"]] == ["retailers", "widest profit margin"]
    assert trace["keywords"][1]["ngrams"]  # aligned to an n-gram of the pages
    for obj in trace["objects"]:
        assert set(obj) == {"source", "lexical", "cosine", "score"}
        assert obj["score"] == pytest.approx(0.5 * obj["lexical"] + 0.5 * obj["cosine"], abs=1e-3)
    scores, parents = evidence.provenance["scores"]
    assert len(scores.lexical) == len(scores.cosine) == len(parents)
    assert not [name for name in vars(retriever) if name.startswith("last_")]  # nothing of the batch stays


def test_the_weight_decides_between_lexical_and_cosine(hashing_embedder):
    lexical_only = make(hashing_embedder, replace(CFG, arm=replace(CFG.arm, lexical_weight=1.0, top_objects=3)))
    scores, _ = lexical_only.retrieve([query()])[0].provenance["scores"]
    assert np.allclose(scores.score, scores.lexical)


def test_titles_are_part_of_the_serialised_object():
    assert serialise(Chunk("Boil pasta.", "u2", "text"), "Cooking") == "Cooking\nBoil pasta."
    table = "Page name: X\n| a |\n| --- |\n| 1 |"
    assert serialise(Chunk(table, "u", "table"), "X") == table


def test_unaligned_and_object_embedding_variants(hashing_embedder):
    gen = EchoGenerator()
    unaligned = make(hashing_embedder, replace(CFG, arm=replace(CFG.arm, align=False)), generator=gen)
    [evidence] = unaligned.retrieve([query()])
    assert gen.calls == 0 and all(not k["ngrams"] for k in evidence.provenance["arm"]["keywords"])
    objects = make(hashing_embedder, replace(CFG, arm=replace(CFG.arm, embed="objects")))
    chunks = objects.retrieve([query()])[0].items
    assert {c.source for c in chunks} == {"u1", "u3"}
    with pytest.raises(ValueError):
        make(hashing_embedder, replace(CFG, arm=replace(CFG.arm, embed="pixels")))


def test_an_expired_deadline_skips_alignment_but_still_answers(hashing_embedder):
    gen = EchoGenerator()
    retriever = make(hashing_embedder, generator=gen)
    deadline = Deadline(0.0)
    out = retriever.retrieve([query()], deadline=deadline)
    assert gen.calls == 0 and len(out) == 1


def test_a_failing_llm_or_bad_input_never_raises(hashing_embedder, caplog):
    class Broken(ServesAnyAdapter):
        def generate(self, requests, deadline=None):
            raise RuntimeError("boom")

    retriever = make(hashing_embedder, generator=Broken())
    empty = Query("q2", "", "", ())
    out = retriever.retrieve([query(), empty])
    assert len(out[0].items) == 2 and out[1].items == ()


def test_factory_builds_the_configured_retriever(hashing_embedder, tmp_path):
    from models.web.retriever import WebRetriever

    cfg = replace(CFG, reranker=replace(CFG.reranker, kind="hybrid"))
    assert type(make_web_retriever(cfg, str(tmp_path), hashing_embedder)) is WebRetriever
    arm = make_web_retriever(replace(cfg, retriever="arm"), str(tmp_path), hashing_embedder, generator=EchoGenerator())
    assert isinstance(arm, ArmRetriever)
    with pytest.raises(ValueError, match="needs the LLM"):
        make_web_retriever(replace(cfg, retriever="arm"), str(tmp_path), hashing_embedder)
    with pytest.raises(ValueError, match="unknown web.retriever"):
        make_web_retriever(replace(cfg, retriever="bm42"), str(tmp_path), hashing_embedder)


def test_the_web_source_traces_the_alignment(hashing_embedder):
    from types import SimpleNamespace

    from models.sources.web import WebSource

    retriever = make(hashing_embedder)
    [evidence] = retriever.retrieve([query()])
    source = WebSource(retriever, answer=None)
    state = SimpleNamespace(query=query(), trace={})
    source.trace(state, evidence, run=SimpleNamespace(task=1))
    assert state.trace["arm"]["keywords"][0]["keyword"] == "retailers"


def test_structure_alignment_chooses_the_set_and_traces_it(hashing_embedder):
    from models.web.arm.config import StructureConfig

    structure = StructureConfig(enabled=True, base_objects=2, expansion_steps=(0, 1), k=2)
    retriever = make(hashing_embedder, replace(CFG, arm=replace(CFG.arm, top_objects=2, structure=structure)))
    [evidence] = retriever.retrieve([query()])
    chunks, provenance = evidence.items, evidence.provenance
    # The stage's clock is read, never asserted positive: CI's clock can advance in steps coarser than the stage.
    assert len(chunks) == 2 and provenance["stats"].structure_ms >= 0
    trace = provenance["arm"]["structure"]
    assert len(trace["drafts"]) == 2 and trace["chosen"] == provenance["scores"][0].chosen
    assert [o["source"] for o in provenance["arm"]["objects"]] == [c.source for c in chunks]
