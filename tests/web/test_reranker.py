"""Rerankers: hybrid dense+BM25 and the FlagReranker cross-encoder path."""
import numpy as np
import pytest

from models.paths import ModelNotFoundError
from models.web.config import RerankerConfig
from models.web.lexical import bm25_scores, normalise
from models.web.reranker import HybridReranker, make_reranker

PASSAGES = ["The Eiffel Tower is 330 m tall.", "The Statue of Liberty is 93 m tall.",
            "Paris hosts many museums.", ""]


def test_hybrid_blends_cosine_and_bm25(hashing_embedder):
    query = "how tall is the eiffel tower"
    dense = HybridReranker(hashing_embedder, dense_weight=1.0).score(query, PASSAGES)
    lexical = HybridReranker(hashing_embedder, dense_weight=0.0).score(query, PASSAGES)
    both = HybridReranker(hashing_embedder, dense_weight=0.5).score(query, PASSAGES)
    vectors = hashing_embedder.encode(PASSAGES)
    assert np.allclose(dense, vectors @ hashing_embedder.encode([query])[0], atol=1e-6)
    assert np.allclose(lexical, normalise(bm25_scores(query, PASSAGES)), atol=1e-6)
    assert np.allclose(both, 0.5 * np.array(dense) + 0.5 * np.array(lexical), atol=1e-6)
    assert int(np.argmax(both)) == 0


def test_score_many_matches_score(hashing_embedder):
    reranker = HybridReranker(hashing_embedder)
    items = [("eiffel tower height", PASSAGES), ("no passages", []), ("statue of liberty", PASSAGES[:2])]
    assert reranker.score_many(items) == [reranker.score(q, p) for q, p in items]
    assert reranker.score_many([]) == []


def test_hybrid_settings(hashing_embedder):
    with pytest.raises(ValueError, match="dense_weight must be in"):
        HybridReranker(hashing_embedder, dense_weight=1.5)
    with pytest.raises(ValueError, match="needs the shared embedder"):
        make_reranker(RerankerConfig(kind="hybrid"), "/nonexistent")
    with pytest.raises(ValueError, match="unknown reranker kind 'colbert'"):
        make_reranker(RerankerConfig(kind="colbert"), "/nonexistent")
    with pytest.raises(ModelNotFoundError, match="reranker was not found at /nonexistent/BAAI/bge-reranker-v2-m3"):
        make_reranker(RerankerConfig(kind="flag", path="BAAI/bge-reranker-v2-m3"), "/nonexistent")


@pytest.fixture(scope="module")
def cross_encoder_dir(minilm_path, tmp_path_factory):
    """A cross-encoder folder built from the packaged MiniLM body: random head, plumbing only."""
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    folder = tmp_path_factory.mktemp("cross-encoder")
    AutoModelForSequenceClassification.from_pretrained(str(minilm_path), num_labels=1).save_pretrained(folder)
    AutoTokenizer.from_pretrained(str(minilm_path)).save_pretrained(folder)
    return folder


def test_flag_reranker_path(cross_encoder_dir):
    reranker = make_reranker(RerankerConfig(kind="flag", path=str(cross_encoder_dir), batch_size=4), "/unused")
    scores = reranker.score("how tall is the eiffel tower", PASSAGES[:3])
    assert len(scores) == 3 and all(0.0 <= s <= 1.0 for s in scores)
    items = [("eiffel tower", PASSAGES[:3]), ("nothing", []), ("statue", PASSAGES[1:2])]
    batched = reranker.score_many(items)
    assert [len(s) for s in batched] == [3, 0, 1]
    # one flat batch through the model gives each query what it gets alone
    assert np.allclose(batched[0], reranker.score("eiffel tower", PASSAGES[:3]), atol=1e-4)
    assert np.allclose(batched[2], reranker.score("statue", PASSAGES[1:2]), atol=1e-4)
    assert reranker.score_many([("q", [])]) == [[]]
