"""One conversion from a CRAG record to the model's `Query`, for the grader's batches, the evaluator's tools and
training alike."""
import pytest

from models.crag_model import CragModel
from models.types import Query, SearchResult


def test_a_record_becomes_a_safe_query():
    record = {"interaction_id": "id\ud8001", "query": "  who\x00 directed inception? ", "query_time": None,
              "search_results": [{"page_name": "A\x07", "page_result": b"<p>x\xff</p>"}, "not a page"],
              "answer": "gold never reaches the model"}
    query = Query.from_crag(record)
    assert query.interaction_id == "id\ufffd1" and query.text == "who directed inception?" and query.query_time == ""
    assert query.search_results == (SearchResult(page_name="A", page_result="<p>x\ufffd</p>"), SearchResult())


@pytest.mark.parametrize("bad", [{}, {"query": ""}, {"query": "   "}, {"query": 42}])
def test_a_record_without_a_query_is_rejected(bad):
    with pytest.raises(ValueError, match="empty or not a string"):
        Query.from_crag(bad)


def test_the_grader_batch_row_is_the_same_conversion():
    record = {"interaction_id": "a", "query": "q?", "query_time": "03/01/2024, 10:00:00 PT",
              "search_results": [{"page_url": "u"}]}
    batch = {k: [v, "other"] for k, v in record.items()}
    assert CragModel._to_query(batch, 0) == Query.from_crag(record)
    assert CragModel._to_query({"query": ["x"]}, 0).interaction_id == "item-0"  # no id column: its position
