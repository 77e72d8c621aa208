"""Fixtures shared across test folders."""
import pytest


@pytest.fixture(scope="session")
def cpu_embedder():
    """The CPU profile's real embedder (MiniLM shipped in a PyPI package), loaded once per test session."""
    from models.config import load_config
    from models.web.embedder import Embedder

    config = load_config("cpu")
    return Embedder.from_config(config.web.embedder, config.models_dir)
