"""The pieces behind the contract, each on its own: `per_item`, `safe_text`, stage deadlines, the linear
layout scan, and per-item isolation inside the embedder, the reranker call sites and the router."""
from __future__ import annotations

import numpy as np
import pytest

from models.deadline import STAGES, Deadline, check_stage_budgets, stage_deadline
from models.isolation import per_item
from models.routing.classifier import ClassifierRouter
from models.text import safe_text
from models.types import Query, SearchResult
from models.embedder import Embedder
from models.web.extraction import MAX_TABLE_DEPTH, _nearest_ancestors, extract_page
from tests.robustness.support import clean_items, make_model, nested_tables


# ---------------------------------------------------------------------------------------------- per_item
def _doubler(poison="bad"):
    calls = []

    def run(items):
        calls.append(list(items))
        if poison in items:
            raise ValueError("poisoned")
        return [2 * x for x in items]
    return run, calls


def test_per_item_runs_the_batch_once_when_it_works():
    run, calls = _doubler()
    assert per_item(run, ["a", "b"], lambda _: "") == ["aa", "bb"] and calls == [["a", "b"]]


def test_per_item_retries_alone_and_only_the_failing_item_falls_back():
    run, calls = _doubler()
    assert per_item(run, ["a", "bad", "c"], lambda item: f"<{item}>") == ["aa", "<bad>", "cc"]
    assert calls == [["a", "bad", "c"], ["a"], ["bad"], ["c"]]


def test_per_item_retries_when_the_batch_answers_the_wrong_count():
    def short(items):
        return [1] if len(items) > 1 else [len(items[0])]
    assert per_item(short, ["ab", "c"], lambda _: 0) == [2, 1]


def test_per_item_on_nothing_and_on_one_failing_item():
    run, calls = _doubler()
    assert per_item(run, [], lambda _: "") == [] and calls == []
    assert per_item(run, ["bad"], lambda _: "fallback") == ["fallback"] and calls == [["bad"]]


def test_per_item_says_why_an_item_holds_its_fallback():
    run, _ = _doubler()
    results = per_item(run, ["a", "bad", "c"], lambda _: "", "doubling")
    assert results.reasons == {1: "doubling failed: ValueError: poisoned"}
    assert per_item(run, ["a", "b"], lambda _: "").reasons == {}
    assert per_item(run, ["bad"], lambda _: "", "doubling").reasons == {0: "doubling failed: ValueError: poisoned"}


class _Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def test_per_item_retries_stop_at_the_deadline():
    """A failed batch call of 4 with 2.5 s left and 1 s per retry: 3 retries start (the third at 2 s), the
    fourth would start past the deadline and is not run; its reason names the batch failure and the deadline."""
    clock = _Clock()
    deadline = Deadline(2.5, clock)
    calls = []

    def slow(items):
        calls.append(list(items))
        if len(items) > 1:
            raise RuntimeError("CUDA out of memory")
        clock.now += 1.0
        return [2 * x for x in items]

    results = per_item(slow, ["a", "b", "c", "d"], lambda _: "", "generation", deadline=deadline)
    assert results == ["aa", "bb", "cc", ""] and calls == [["a", "b", "c", "d"], ["a"], ["b"], ["c"]]
    assert list(results.reasons) == [3] and "not run" in results.reasons[3]
    assert "RuntimeError: CUDA out of memory" in results.reasons[3] and "deadline" in results.reasons[3]
    # already past: the batched call is the caller's to start, but no retry runs
    calls.clear()
    late = per_item(slow, ["a", "b"], lambda _: "", deadline=Deadline(0.0, clock))
    assert late == ["", ""] and calls == [["a", "b"]] and sorted(late.reasons) == [0, 1]
    # no deadline: every item is retried, as before
    assert per_item(slow, ["a", "b"], lambda _: "") == ["aa", "bb"]


# ---------------------------------------------------------------------------------------------- safe_text
@pytest.mark.parametrize("raw, safe", [
    ("plain ascii", "plain ascii"),
    ("caf\u00e9 \u6771\u4eac \U0001F600", "caf\u00e9 \u6771\u4eac \U0001F600"),  # normal Unicode is kept
    ("a\ud800b\udfffc", "a\ufffdb\ufffdc"),  # lone surrogates
    ("a\x00b\x07c\x1bd\x7fe", "abcde"),  # NUL and other controls
    ("tab\tnew\nline\r", "tab\tnew\nline\r"),  # whitespace controls stay
    (None, ""), (b"\xff\x00ok", "\ufffdok"), (42, "42"),
])
def test_safe_text(raw, safe):
    assert safe_text(raw) == safe
    safe_text(raw).encode("utf-8")  # always encodable


def test_the_boundary_cleans_every_field():
    from models.crag_model import CragModel

    bad = "\ud800\x00"
    batch = {"interaction_id": [f"i{bad}"], "query": [f"q{bad}?"], "query_time": [f"t{bad}"],
             "search_results": [[{k: f"{k}{bad}" for k in SearchResult.__dataclass_fields__}]]}
    query = CragModel._to_query(batch, 0)
    texts = [query.interaction_id, query.text, query.query_time,
             *(getattr(query.search_results[0], k) for k in SearchResult.__dataclass_fields__)]
    assert all("\x00" not in t and "\ud800" not in t and "\ufffd" in t for t in texts)


# ---------------------------------------------------------------------------------------------- deadlines
def test_child_and_share_never_outlive_the_parent():
    now = [100.0]
    parent = Deadline(10.0, clock=lambda: now[0])
    assert parent.child(3.0).remaining() == 3.0 and parent.child(30.0).remaining() == 10.0
    assert parent.share(0.5).remaining() == 5.0 and parent.share(None).remaining() == 10.0
    now[0] = 112.0
    assert parent.share(0.5).expired() and parent.child(5.0).expired()
    assert Deadline(None).share(0.5).remaining() == float("inf")


def test_stage_budgets_are_checked_and_applied():
    check_stage_budgets({stage: 0.5 for stage in STAGES})
    for bad in ({"kgg": 0.5}, {"kg": 0.0}, {"kg": 1.5}):
        with pytest.raises(ValueError):
            check_stage_budgets(bad)
    deadline = Deadline(10.0)
    assert stage_deadline(deadline, {"kg": 0.25}, "kg").remaining() <= 2.5
    assert stage_deadline(deadline, {"kg": 0.25}, "route").remaining() > 9.0


def test_an_unknown_stage_in_the_profile_fails_at_start_up(cpu_embedder):
    with pytest.raises(ValueError, match="unknown stage"):
        make_model(cpu_embedder, **{"pipeline.stage_budgets": {"kgg": 0.5}})


# ---------------------------------------------------------------------------------------------- extraction
class _Node:
    def __init__(self, tag, parent=None):
        self.tag, self.parent = tag, parent


def test_the_layout_scan_walks_each_node_once_whatever_the_depth():
    chain, nodes = None, []
    for i in range(30_000):  # table > tr > td > table > ... : 10,000 nested tables
        chain = _Node(("table", "tr", "td")[i % 3], chain)
        nodes.append(chain)
    walked = []

    def parent(node):
        walked.append(node)
        return node.parent

    tables = [n for n in nodes if n.tag == "table"]
    nearest = _nearest_ancestors(tables, frozenset({"table"}), parent, id, lambda n: n.tag)
    assert nearest[0] is None and nearest[5] == id(tables[4])
    assert len(walked) <= len(nodes)  # linear: the quadratic scan walked ~n^2 / 2 nodes


@pytest.mark.parametrize("backend", ["selectolax", "bs4"])
def test_nested_tables_past_the_depth_cap_stay_text_and_shallow_data_tables_are_read(backend):
    deep = extract_page(f"<p>intro</p>{nested_tables(MAX_TABLE_DEPTH + 5)}", "P", backend=backend)
    assert "deep cell" in deep.text and not deep.tables
    shallow = extract_page(f"<p>intro</p>{nested_tables(3)}", "P", backend=backend)
    assert "deep cell" not in shallow.text and "deep cell" in shallow.tables[0]


@pytest.mark.parametrize("backend", ["selectolax", "bs4"])
def test_nested_buttons_are_dropped_unless_they_hold_blocks(backend):
    html = ("<button>b1<button>b2</button></button>"
            "<button><button><div>kept inside</div></button></button><p>body</p>")
    page = extract_page(html, backend=backend)
    assert "kept inside" in page.text and "body" in page.text and "b1" not in page.text


# ---------------------------------------------------------------------------------------------- components
class _PickyModel:
    """A sentence-transformers stand-in whose tokenizer rejects a lone surrogate (as MiniLM's does)."""

    def get_embedding_dimension(self):
        return 3

    def encode(self, texts, **kwargs):
        if any("\ud800" in t for t in texts):
            raise TypeError("TextEncodeInput must be Union[...]")
        return np.array([[1.0, 0.0, 0.0]] * len(texts))


def test_the_embedder_gives_a_rejected_text_a_zero_row_and_keeps_its_neighbours():
    vectors = Embedder(_PickyModel()).encode(["a", "\ud800", "c"])
    assert vectors.tolist() == [[1, 0, 0], [0, 0, 0], [1, 0, 0]]


def test_the_router_routes_a_query_its_classifier_rejects_to_open():
    class Classifier:
        def predict(self, texts, embedder):
            if any("poison" in t for t in texts):
                raise RuntimeError("cannot classify")
            return ["movie"] * len(texts)

    queries = [Query(f"i{k}", text) for k, text in enumerate(["a", "poison", "c"])]
    assert ClassifierRouter(Classifier(), None).route(queries) == ["movie", "open", "movie"]


def test_a_reranker_failing_on_one_query_costs_only_its_order(cpu_embedder):
    model = make_model(cpu_embedder, **{"web.rerank_k": 2})
    web = model.pipeline.web
    real = web.reranker.score_many

    def picky(items):
        if any("france" in query for query, _ in items):
            raise RuntimeError("reranker down for this one")
        return real(items)

    queries = [Query(f"id{i}", q, "", tuple(SearchResult.from_raw(p) for p in pages))
               for i, (q, pages) in enumerate(clean_items())]
    clean = [e.items for e in web.retrieve(queries)]
    web.reranker.score_many = picky
    hostile = [e.items for e in web.retrieve(queries)]
    texts = [[c.text for c in r] for r in (hostile[0], hostile[2])]
    assert texts == [[c.text for c in r] for r in (clean[0], clean[2])]
    assert len(hostile[1]) == 2  # recall order, cut to rerank_k


def test_generation_starts_only_the_rows_whose_prefill_fits_the_time_left():
    from types import SimpleNamespace

    from models.llm.hf_backend import HFGenerator

    fits = HFGenerator._rows_that_fit
    backend = SimpleNamespace(prefill_tokens_per_s=100.0)  # tokens per second, as measured
    lengths = [100, 200, 300, 1000]  # a group sorted shortest first; padded cost = rows x longest
    assert fits(backend, lengths, Deadline(10.0)) == 3  # 3 x 300 = 900 tokens = 9 s; 4 x 1000 = 40 s
    assert fits(backend, lengths, Deadline(0.5)) == 0
    assert fits(backend, lengths, Deadline(None)) == 4
    assert fits(SimpleNamespace(prefill_tokens_per_s=None), lengths, Deadline(0.5)) == 4  # not measured yet
