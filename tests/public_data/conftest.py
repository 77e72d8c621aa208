"""Shared fixtures: the real CPU embedder (MiniLM from a PyPI package) and a store built from data/public."""
import os

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

from models.paths import resolve_repo_path  # noqa: E402
from models.public_data import PublicStore, build_database  # noqa: E402


@pytest.fixture(scope="session")
def embedder(cpu_embedder):
    return cpu_embedder


@pytest.fixture(scope="session")
def store_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("public") / "public.sqlite"
    build_database(resolve_repo_path("data/public"), path)
    return path


@pytest.fixture(scope="session")
def store(store_path):
    return PublicStore(store_path)
