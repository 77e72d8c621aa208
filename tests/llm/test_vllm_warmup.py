"""Warm-up at `UserModel()` (g4dn): one request per adapter and per grammar reaches the engine before any batch.

The g4dn profile over a models directory of fake weights; the LLM is the vLLM backend over the stand-in engine
(tests/vllm_stand_in.py) with SmolLM2's tokenizer; the KG pathway is the real one (its five domain grammars).
"""
from __future__ import annotations

import logging

import pytest

from models.config import MODELS_DIR_ENV, load_config
from models.crag_model import CragModel
from models.kg.pathway import KGPathway
from models.llm.vllm_backend import VLLMGenerator
from models.pipeline import Pipeline
from models.parts import Parts
from models.types import DOMAINS
from tests.fake_weights import fake_models_dir
from tests.vllm_stand_in import StandInLLM, stand_in_vllm


class _Unused:
    """A component the warm-up must not touch (the web retriever, the router)."""

    def __getattr__(self, name):
        raise AssertionError(f"the warm-up used {name}")


@pytest.fixture()
def g4dn_model(tmp_path, monkeypatch, model_folder, tokenizer, cpu_embedder):
    """`CragModel` over the g4dn profile with the vLLM backend on the stand-in engine."""
    monkeypatch.setenv(MODELS_DIR_ENV, str(tmp_path / "models"))
    fake_models_dir(tmp_path / "models", load_config("g4dn"))
    config = load_config("g4dn", {"llm.path": str(model_folder)})
    monkeypatch.setattr(StandInLLM, "tokenizer", tokenizer)

    def build(**overrides):
        llm = config.llm.__class__(**{**config.llm.__dict__, **overrides})
        generator = VLLMGenerator(llm, config.models_dir, vllm=stand_in_vllm(), gpu_count=lambda: 4)
        kg = KGPathway(config.kg, client=_Unused(), embedder=cpu_embedder)
        pipeline = Pipeline(Parts(config.__class__(**{**config.__dict__, "llm": llm}), generator=generator,
                                  web=_Unused(), router=_Unused(), kg=kg))
        return CragModel(pipeline.config, pipeline=pipeline)

    return build


def test_warm_up_sends_one_request_per_adapter_and_per_grammar(g4dn_model, caplog):
    with caplog.at_level(logging.INFO, logger="models.warmup"):
        model = g4dn_model()
    engine = model.pipeline.generator.llm.llm_engine
    [batch] = engine.batches  # one call, at construction
    unconstrained = [a for a in batch if "structured_outputs" not in a.params.kwargs]
    constrained = [a for a in batch if "structured_outputs" in a.params.kwargs]
    adapters = [a.lora and a.lora.lora_name for a in unconstrained]
    assert sorted(adapters, key=str) == sorted([None, *model.config.llm.adapters], key=str)
    kg = model.pipeline.kg
    grammars = [a.params.kwargs["structured_outputs"].kwargs["grammar"] for a in constrained]
    assert sorted(grammars) == sorted(kg.constraint(domain).grammar for domain in DOMAINS)
    assert {a.lora.lora_name for a in constrained} == {model.config.kg.api_adapter}
    assert all(a.params.kwargs["max_tokens"] <= 2 for a in batch)
    report = model.warm_up
    assert report.grammars == [("kg", domain) for domain in DOMAINS] and report.failed == {}
    assert any(r.getMessage().startswith("warm-up: 9 requests (4 adapters with the base model, 5 grammars) in")
               for r in caplog.records)


def test_no_warm_up_when_the_profile_says_so(g4dn_model):
    model = g4dn_model(warm_up=False)
    assert model.warm_up is None and model.pipeline.generator.llm.llm_engine.batches == []


def test_a_failing_warm_up_request_is_reported_and_start_up_goes_on(g4dn_model, monkeypatch):
    """A grammar the engine rejects fails alone: reported, logged, and the model still starts."""
    monkeypatch.setattr(StandInLLM, "engine_options", dict(reject=lambda added: added.position == 5))
    model = g4dn_model()
    assert list(model.warm_up.failed) == [5] and "grammar cannot be compiled" in model.warm_up.failed[5]
    assert model.batch_generate_answer is not None
