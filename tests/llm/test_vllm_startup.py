"""The g4dn start-up order: nothing initialises CUDA in this process before the vLLM engine exists.

vLLM starts its tensor-parallel workers as new processes (fork unless VLLM_WORKER_MULTIPROC_METHOD=spawn),
and a worker forked from a parent that has initialised CUDA fails ("Cannot re-initialize CUDA in forked
subprocess"). No GPU is needed to hold the order: every function of `torch.cuda` (and the two C entry points
behind it) is replaced by a recorder, `vllm` and its NVML by stand-ins that record too
(tests/cuda_recorder.py), and the g4dn profile is built against a models directory of fake weights. One event
log; the engine's construction must come before any `torch.cuda` call.
"""
from __future__ import annotations

import pytest
import torch

from models.config import MODELS_DIR_ENV, load_config
from models.llm.generator import make_generator
from tests.cuda_recorder import calls_before_engine, cuda_events  # noqa: F401 - cuda_events is a fixture
from tests.fake_weights import fake_models_dir


@pytest.fixture()
def g4dn(tmp_path, monkeypatch):
    """The g4dn profile over a models directory of fake weights."""
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path / "models"))
    fake_models_dir(tmp_path / "models", load_config("g4dn"))
    return load_config("g4dn")


def test_the_g4dn_generator_builds_its_engine_before_any_cuda_call(cuda_events, g4dn):
    generator = make_generator(g4dn.llm, g4dn.models_dir)
    assert calls_before_engine(cuda_events) == []
    assert ("nvml", "nvmlDeviceGetCount") in cuda_events  # the GPU probe went through NVML
    assert generator.llm.engine_args["tensor_parallel_size"] == 4
    assert sorted(generator._lora_requests) == sorted(g4dn.llm.adapters)


def test_the_pipeline_builds_the_llm_before_any_cuda_model(cuda_events, g4dn, monkeypatch):
    """`Pipeline.from_config` builds the generator first: the embedder and the reranker go to CUDA after."""
    from models.embedder import Embedder
    from models.pipeline import Pipeline

    class Built(Exception):
        """Stops the assembly once the first component after the LLM is asked for."""

    def embedder(cls, config, models_dir):
        torch.cuda.is_available()  # what a CUDA embedder does first: recorded, and it must come after
        raise Built

    monkeypatch.setattr(Embedder, "from_config", classmethod(embedder))
    with pytest.raises(Built):
        Pipeline.from_config(g4dn)
    assert calls_before_engine(cuda_events) == []
    assert ("cuda", "is_available") in cuda_events  # the recorder sees a probe made after the engine


def test_the_recorder_catches_a_torch_probe(cuda_events):
    """The guard can fail: a probe through torch before the engine is seen (what the backend used to do)."""
    torch.cuda.is_available()
    cuda_events.append(("engine", "model"))
    assert calls_before_engine(cuda_events) == ["is_available"]
