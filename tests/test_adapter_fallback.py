"""A missing LoRA adapter is not fatal: its stages run on the base model with their in-context prompts.

The end-to-end test is what a fresh clone submitted to the grader does: `UserModel()` over the g4dn profile with
the weights there (fake ones: tests/fake_weights.py) and no adapter folder, on the vLLM backend over the stand-in
engine (tests/vllm_stand_in.py), answering a batch of the bundled sample.
"""
from __future__ import annotations

import logging
import shutil
from itertools import islice

import pytest

from models.adapter_fallback import IN_CONTEXT_EXAMPLES, TRAIN_COMMAND, without_missing_adapters
from models.answering.llm_calls import generate_traced
from models.config import MODELS_DIR_ENV, load_config
from models.llm.adapters import AdapterNames
from models.llm.errors import AdapterNotFoundError, UnknownAdapterError
from models.llm.generator import GenerationRequest
from models.llm.stand_in import BaseModelStandIn, with_stand_ins
from models.run import QueryState
from models.types import Query
from tests.fake_weights import fake_models_dir

G4DN_ADAPTERS = ("web_answer", "api_generation", "kg_answer")


@pytest.fixture()
def g4dn_without_adapters(tmp_path, monkeypatch):
    """The g4dn profile over fake weights (LLM, embedder, reranker) with no adapter folder at all."""
    models = tmp_path / "models"
    monkeypatch.setenv(MODELS_DIR_ENV, str(models))
    fake_models_dir(models, load_config("g4dn"))
    shutil.rmtree(models / "adapters")
    return load_config


def test_missing_adapters_are_left_out_and_logged_with_the_command_that_trains_them(g4dn_without_adapters, caplog):
    config = g4dn_without_adapters("g4dn")
    with caplog.at_level(logging.WARNING, logger="models.adapter_fallback"):
        started, missing = without_missing_adapters(config)
    assert sorted(missing) == sorted(G4DN_ADAPTERS) and all("not found at" in why for why in missing.values())
    assert started.llm.adapters == {}
    assert started.pipeline.answer_adapter == "web_answer"  # the stages keep their names: the stand-in maps them
    assert started.kg == config.kg  # g4dn already asks with the described API and 4 similar examples
    assert any(TRAIN_COMMAND in r.getMessage() for r in caplog.records)
    assert sum("is missing" in r.getMessage() for r in caplog.records) == 3


def test_an_adapter_prompt_falls_back_to_the_described_api_with_examples(tmp_path):
    """The cpu profile asks its adapter with a short request (no API description, no examples); without the
    adapter the base model gets the domain's described prompt and similar examples, as cpu-server does."""
    config = load_config("cpu", {"llm.adapters.api_generation": str(tmp_path / "gone")})
    assert config.kg.api_prompt and config.kg.icl_k == 0
    started, missing = without_missing_adapters(config)
    assert list(missing) == ["api_generation"]
    assert started.kg.api_prompt == "" and started.kg.icl_k == IN_CONTEXT_EXAMPLES
    assert started.kg.api_adapter == "api_generation"


def test_nothing_changes_when_every_adapter_is_there():
    cpu = load_config("cpu")
    assert without_missing_adapters(cpu) == (cpu, {})  # the CPU adapter ships


def test_nothing_changes_when_adapters_are_required_or_served(g4dn_without_adapters):
    required = g4dn_without_adapters("g4dn", {"llm.require_adapters": True})
    assert without_missing_adapters(required) == (required, {})
    served = g4dn_without_adapters("g4dn-server")
    assert without_missing_adapters(served) == (served, {})


def test_require_adapters_restores_the_start_up_error(g4dn_without_adapters):
    from models.llm.adapters import AdapterRegistry

    config = g4dn_without_adapters("g4dn", {"llm.require_adapters": True})
    with pytest.raises(AdapterNotFoundError, match="LoRA adapter 'web_answer'"):
        AdapterRegistry(config.llm.adapters, config.models_dir)


class _Recording:
    """A backend serving one adapter; records what it was asked."""

    adapters = AdapterNames({"served": "<served>"})
    missing_adapters = {}

    def __init__(self):
        self.asked = []

    def generate(self, requests, *, deadline=None):
        self.asked.append([r.adapter for r in requests])
        return [f"out {i}" for i in range(len(requests))]

    def count_tokens(self, text):
        return len(text.split())

    def truncate_tokens(self, text, max_tokens):
        return text


def _request(adapter):
    return GenerationRequest(({"role": "user", "content": "q"},), adapter=adapter)


def test_the_stand_in_sends_a_missing_adapters_requests_to_the_base_model():
    inner = _Recording()
    generator = BaseModelStandIn(inner, {"web_answer": "not found"})
    outputs = generator.generate([_request("web_answer"), _request("served"), _request(None)])
    assert outputs == ["out 0", "out 1", "out 2"]
    assert inner.asked == [[None, "served", None]]
    assert generator.adapters.names == ("served",)  # the warm-up loads real adapters only
    generator.adapters.require(["web_answer", "served", None])
    with pytest.raises(UnknownAdapterError, match="'typo'"):
        generator.generate([_request("typo")])
    assert generator.count_tokens("a b c") == 3 and generator.inner is inner


def test_the_trace_says_which_adapter_the_base_model_stood_in_for():
    generator = BaseModelStandIn(_Recording(), {"web_answer": "not found"})
    states = [QueryState(Query(str(i), "q")) for i in range(2)]
    generate_traced(generator, "answer", [(states[0], _request("web_answer")), (states[1], _request("served"))],
                    deadline=None)
    [missing_call], [served_call] = states[0].trace["llm_calls"], states[1].trace["llm_calls"]
    assert missing_call["adapter"] is None and missing_call["adapter_missing"] == "web_answer"
    assert served_call["adapter"] == "served" and "adapter_missing" not in served_call


def test_user_model_over_g4dn_without_adapters_starts_and_answers_a_batch(g4dn_without_adapters, monkeypatch,
                                                                         model_folder, tokenizer, cpu_embedder):
    """`UserModel()` as the grader builds it: `Pipeline.from_config` with the g4dn profile, no adapter folder."""
    from evaluation.data import batched, grader_view, load_examples
    from models import pipeline as pipeline_module
    from models.crag_model import CragModel
    from models.embedder import Embedder
    from models.llm.vllm_backend import VLLMGenerator
    from tests.vllm_stand_in import StandInLLM, stand_in_vllm

    built = []

    def stand_in_engine(config, models_dir, missing=None):  # make_generator, over the stand-in vLLM
        built.append(VLLMGenerator(config, models_dir, vllm=stand_in_vllm(), gpu_count=lambda: 4))
        return with_stand_ins(built[-1], missing)

    monkeypatch.setattr(StandInLLM, "tokenizer", tokenizer)
    monkeypatch.setattr(pipeline_module, "make_generator", stand_in_engine)
    monkeypatch.setattr(Embedder, "from_config", classmethod(lambda cls, config, models_dir: cpu_embedder))
    config = g4dn_without_adapters("g4dn", {"llm.path": str(model_folder), "web.reranker.kind": "hybrid",
                                            "web.reranker.device": "cpu", "pipeline.task": 1})
    model = CragModel(config)

    [generator] = built
    assert generator.llm.engine_args.get("enable_lora") is None  # no LoRA slots reserved for absent adapters
    assert isinstance(model.pipeline.generator, BaseModelStandIn)
    assert model.warm_up.adapters == [None]  # the base model only: nothing to load
    [batch] = list(islice(batched(load_examples("data/sample/crag_sample.jsonl"), 4), 1))
    answers = model.batch_generate_answer(grader_view(batch))
    assert len(answers) == 4 and all(isinstance(a, str) and a for a in answers)
    engine_batches = generator.llm.llm_engine.batches[1:]  # after the warm-up
    assert engine_batches and all(added.lora is None for batch_ in engine_batches for added in batch_)
    calls = [call for answer in model.last_answers for call in answer.trace["llm_calls"]]
    stood_in = [c for c in calls if c.get("adapter_missing")]
    assert stood_in and {c["adapter_missing"] for c in stood_in} <= set(G4DN_ADAPTERS)
    assert all(c["adapter"] is None for c in stood_in)
