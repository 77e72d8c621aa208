"""The shared embedder on the packaged MiniLM."""
import numpy as np
import pytest

from models.config import load_config
from models.embedder import Embedder, EmbedderConfig
from models.paths import ModelNotFoundError


@pytest.fixture(scope="module")
def embedder(minilm_path):
    return Embedder.from_config(EmbedderConfig(), models_dir="/nonexistent")


def test_rows_are_float32_unit_vectors(embedder):
    vectors = embedder.encode(["Canberra is the capital of Australia.", "", "Arsenal 3-1 Liverpool"])
    assert vectors.dtype == np.float32 and vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert embedder.encode([]).shape == (0, 384)


def test_similar_meaning_scores_higher(embedder):
    query = embedder.encode(["what is the capital of australia?"], is_query=True)[0]
    near, far = embedder.encode(["Canberra is the capital city of Australia.", "Arsenal beat Liverpool 3-1."])
    assert query @ near > query @ far + 0.3


def test_matches_the_packaged_sentence_transformers_model(embedder, minilm_path):
    from sentence_transformers import SentenceTransformer
    reference = SentenceTransformer(str(minilm_path), device="cpu")
    texts = ["Bohemian Rhapsody was released in 1975.", "Die Schweiz grenzt an Italien."]
    expected = reference.encode(texts, normalize_embeddings=True)
    assert np.allclose(embedder.encode(texts), expected, atol=1e-5)


def test_query_instruction_is_prepended_to_queries_only(embedder):
    instructed = Embedder(embedder.model, query_instruction="Represent this sentence: ")
    as_query = instructed.encode(["coldplay members"], is_query=True)
    assert np.allclose(as_query, embedder.encode(["Represent this sentence: coldplay members"]), atol=1e-6)
    assert np.allclose(instructed.encode(["coldplay members"]), embedder.encode(["coldplay members"]), atol=1e-6)


def test_pooling_comes_from_the_profile(minilm_path, embedder):
    cls = Embedder.from_config(EmbedderConfig(pooling="cls"), models_dir="/nonexistent")
    text = ["Jean Dujardin won best actor for The Artist."]
    assert not np.allclose(cls.encode(text), embedder.encode(text), atol=1e-3)


def test_configuration_errors(tmp_path):
    with pytest.raises(ModelNotFoundError, match=f"embedder was not found at {tmp_path}/BAAI/bge-base-en-v1.5"):
        Embedder.from_config(EmbedderConfig(path="BAAI/bge-base-en-v1.5"), models_dir=str(tmp_path))
    with pytest.raises(ValueError, match="unknown embedder.pooling 'sum'"):
        Embedder.from_config(EmbedderConfig(pooling="sum"), models_dir=str(tmp_path))
    with pytest.raises(ModelNotFoundError, match=f"embedder was not found at {tmp_path}/BAAI/bge-base-en-v1.5"):
        Embedder.from_config(load_config("g4dn").embedder, str(tmp_path))
