"""The real CPU embedder (MiniLM shipped in a PyPI package), loaded once for the routing tests."""
import os

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")


@pytest.fixture(scope="session")
def embedder():
    from models.config import load_config
    from models.web.embedder import Embedder

    config = load_config("cpu")
    return Embedder.from_config(config.web.embedder, config.models_dir)
