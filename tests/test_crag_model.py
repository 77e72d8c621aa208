"""The grader contract: one answer per query, in order, never an exception, deadline respected."""
import time

import pytest

from models.config import load_config
from models.crag_model import CragModel
from models.types import IDK, Answer


class EchoPipeline:
    """Answers each query with its own text (so order is checkable); records what it received."""

    def __init__(self, fail=False, delay=0.0):
        self.fail, self.delay, self.seen, self.deadlines = fail, delay, [], []

    def answer(self, queries, deadline=None):
        self.seen.append(list(queries))
        self.deadlines.append(deadline)
        if self.fail:
            raise RuntimeError("boom")
        time.sleep(self.delay)
        return [Answer(f"answer to {q.text}", "web") for q in queries]


def model(pipeline, **overrides):
    return CragModel(load_config("cpu", overrides), pipeline=pipeline)


def batch(*queries, **columns):
    n = len(queries)
    base = {"interaction_id": [f"id{i}" for i in range(n)], "query": list(queries),
            "search_results": [[] for _ in range(n)], "query_time": ["03/01/2024, 10:00:00 PT"] * n}
    base.update(columns)
    return base


def test_answers_in_order_one_per_query():
    out = model(EchoPipeline()).batch_generate_answer(batch("a?", "b?", "c?"))
    assert out == ["answer to a?", "answer to b?", "answer to c?"]


@pytest.mark.parametrize("bad_batch", [
    batch("a?", "", "c?"),                                      # empty query
    batch("a?", None, "c?"),                                    # None query
    batch("a?", "b?", "c?", search_results=[None, "junk", [1, None, {"page_result": b"\xff\xfe"}]]),
    batch("a?", "b?", "c?", query_time=[None, 5]),              # short / wrong-typed column
    {"query": ["a?", "b?", "c?"]},                              # missing keys
])
def test_malformed_items_never_lose_a_prediction(bad_batch):
    out = model(EchoPipeline()).batch_generate_answer(bad_batch)
    assert len(out) == 3
    assert out[0] == "answer to a?" and out[2] == "answer to c?"
    assert all(isinstance(a, str) and a for a in out)


def test_bad_item_gets_idk_and_others_are_answered():
    out = model(EchoPipeline()).batch_generate_answer(batch("a?", "  ", "c?"))
    assert out == ["answer to a?", IDK, "answer to c?"]


def test_pages_are_normalised():
    pipeline = EchoPipeline()
    huge = "<p>" + "x" * 10_000_000 + "</p>"
    model(pipeline).batch_generate_answer(batch("a?", search_results=[[{"page_result": b"\xff<b>hi</b>"},
                                                                     {"page_result": huge}, None, 7]]))
    pages = pipeline.seen[0][0].search_results
    assert len(pages) == 4 and pages[0].page_result.endswith("<b>hi</b>") and pages[2].page_result == ""


def test_pipeline_failure_answers_idk_for_everyone():
    assert model(EchoPipeline(fail=True)).batch_generate_answer(batch("a?", "b?")) == [IDK, IDK]


def test_empty_batch():
    assert model(EchoPipeline()).batch_generate_answer(batch()) == []


def test_deadline_is_batch_size_times_budget_minus_margin():
    pipeline = EchoPipeline()
    model(pipeline, **{"pipeline.per_question_budget_s": 10.0, "pipeline.deadline_margin_s": 2.0}) \
        .batch_generate_answer(batch("a?", "b?", "c?"))
    assert 27.0 < pipeline.deadlines[0].remaining() <= 28.0


def test_batch_size_is_clamped():
    assert model(EchoPipeline(), **{"pipeline.batch_size": 64}).get_batch_size() == 16
    assert model(EchoPipeline(), **{"pipeline.batch_size": 0}).get_batch_size() == 1


def test_user_config_binds_the_model():
    from models.user_config import UserModel

    assert UserModel is CragModel


def test_a_rejected_item_keeps_a_trace_saying_why():
    from models.crag_model import CragModel
    from models.config import load_config

    class Echo:
        def answer(self, queries, deadline=None):
            from models.types import Answer
            return [Answer("x", "web", trace={"why": "supported"}) for _ in queries]

    model = CragModel(load_config("cpu"), pipeline=Echo())
    answers = model.batch_generate_answer({"interaction_id": ["a", "b"], "query": ["q?", ""],
                                           "search_results": [[], []], "query_time": ["", ""]})
    assert answers == ["x", "i don't know"]
    assert model.last_answers[0].trace["why"] == "supported"
    assert model.last_answers[1].trace["why"].startswith("item rejected: query 1 is empty")
