"""BM25 name search of the mock server (`mock_api/search.py`), checked against `rank_bm25` itself and
against hand-worked `fast_bm25` cases."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mock_api.search import FastBM25Index, NameSearch, OkapiIndex, normalize

rank_bm25 = pytest.importorskip("rank_bm25")


@pytest.mark.parametrize("raw, expected", [
    ("The Matrix: Reloaded!", "the matrix reloaded"),
    ("Lana_Wachowski", "lana wachowski"),
    ("  Bong   Joon-ho ", "bong joonho"),
    ("Texas Hold 'Em", "texas hold em"),
])
def test_normalize_matches_the_official_rule(raw, expected):
    assert normalize(raw) == expected


def _official_okapi(names: list[str], query: str, n: int = 10) -> list[str]:
    """What the official open/movie/finance servers do with rank_bm25 (stable argsort for determinism)."""
    corpus = [name.split() for name in names]
    scores = rank_bm25.BM25Okapi(corpus).get_scores(query.split())
    top = np.argsort(scores, kind="stable")[::-1][:n]
    return [" ".join(corpus[i]) for i in top if scores[i] != 0]


_VOCABULARY = ["red", "apple", "pear", "inc", "the", "matrix", "club", "fight"]
_names = st.lists(st.lists(st.sampled_from(_VOCABULARY), min_size=1, max_size=4).map(" ".join),
                  min_size=1, max_size=30)
_queries = st.lists(st.sampled_from(_VOCABULARY + ["unknown"]), min_size=1, max_size=3).map(" ".join)


@settings(max_examples=300, deadline=None)
@given(names=_names, query=_queries)
def test_okapi_ranking_equals_rank_bm25(names, query):
    assert OkapiIndex(names).search(query) == _official_okapi(names, query)


def test_okapi_prefers_the_shorter_exact_title():
    index = OkapiIndex(["inception", "inception the cobol job", "the matrix", "fight club", "memento"])
    assert index.search("inception") == ["inception", "inception the cobol job"]
    assert index.search("nothing here") == []


def _fillers(count: int) -> list[str]:
    return [f"filler{i:03d}" for i in range(count)]


def test_fast_bm25_needs_a_surviving_token():
    with pytest.raises(ValueError, match="at least 83 distinct"):
        FastBM25Index(_fillers(82))
    FastBM25Index(_fillers(83))  # ln((83 - 1 + 0.5) / 1.5) > 4: every unique token survives


def test_fast_bm25_drops_low_idf_tokens():
    index = FastBM25Index(_fillers(81) + ["red apple", "red pear"])  # "red": idf ln(81.5/2.5) = 3.48 <= 4
    assert index.search("red") == []
    assert index.search("red pear") == ["red pear"]


def test_fast_bm25_ties_keep_first_scored_order_and_scores_rank():
    index = FastBM25Index(sorted(_fillers(148) + ["red apple", "red pear"]))  # "red": ln(148.5/2.5) = 4.08
    assert index.search("red") == ["red apple", "red pear"]
    assert index.search("pear red") == ["red pear", "red apple"]


def test_name_search_returns_every_key_of_a_normalised_name_once():
    search = NameSearch(["AC/DC", "ACDC", "Coldplay", "Queen", "Queen Latifah", "Queens of the Stone Age"])
    assert search.search("acdc") == ["AC/DC", "ACDC"]
    assert search.search("Queen!") == ["Queen", "Queen Latifah"]
    finance = NameSearch(["Apple Inc.", "Apple Inc", "Pear Corp", "Plum Ltd", "Fig Co"], OkapiIndex, dedupe=False)
    assert finance.search("apple") == ["Apple Inc.", "Apple Inc"]
