"""Server faults through the whole model: the LLM behind a scripted OpenAI-compatible server on 127.0.0.1 that is
down, slow past the deadline, failing with 500, answering malformed JSON, or not serving the model asked for (404)
for one question of the batch. The contract holds (`run_batch`: one non-empty answer per query, inside the
budget), the affected question is "i don't know" with the fault in its trace, and its neighbours are answered as
the server answered them."""
from __future__ import annotations

import json

import pytest

from models.llm.config import LLMConfig, ServerConfig
from models.llm.openai_backend import OpenAIGenerator
from tests.llm.test_openai_backend import Script, scripted_server
from tests.robustness.support import batch_of, clean_items, make_model, run_batch

PER_QUESTION_S = 3.0
FAULTS = {  # what the server does for the question about france: (status, text, delay_s)
    "slow past the deadline": (200, json.dumps({"choices": [{"text": "late"}]}), 30.0),
    "500": (500, "internal error", 0.0),
    "malformed JSON": (200, "{not json", 0.0),
    "unknown model (404)": (404, '{"error": "The model `smollm2` does not exist."}', 0.0),
}


def _reply(fault):
    def reply(body, n):
        if "capital of france" in body["prompt"].rsplit("Question:", 1)[-1]:
            return fault
        return 200, json.dumps({"choices": [{"text": "i don't know"}]}), 0.0
    return reply


def _model(cpu_embedder, url):
    settings = ServerConfig(base_url=url, model="smollm2", api_key_env="", adapter_models={"api_generation": "x"},
                            retries=2, backoff_s=0.05, startup_wait_s=0.5)
    generator = OpenAIGenerator(LLMConfig(backend="openai", server=settings), "models")
    return make_model(cpu_embedder, generator=generator, per_question_s=PER_QUESTION_S)


@pytest.mark.parametrize("fault", list(FAULTS))
def test_a_server_fault_costs_only_its_question_and_stays_in_budget(cpu_embedder, fault):
    script = Script(models=["smollm2", "x"], reply=_reply(FAULTS[fault]))
    with scripted_server(script) as url:
        model = _model(cpu_embedder, url)
        run_batch(f"server: {fault}", model, batch_of(clean_items()))
    france = model.last_answers[1]
    assert france.text == "i don't know"
    errors = [call.get("error", "") for call in france.trace.get("llm_calls", [])]
    assert any(errors), france.trace
    for neighbour in (model.last_answers[0], model.last_answers[2]):
        assert not any(call.get("error") for call in neighbour.trace.get("llm_calls", []))


def test_a_server_that_is_down_answers_every_question_idk_in_budget(cpu_embedder):
    script = Script(models=["smollm2", "x"])
    with scripted_server(script) as url:
        model = _model(cpu_embedder, url)
    run = run_batch("server down after start-up", model, batch_of(clean_items()))
    assert run.answers == ["i don't know"] * 3
