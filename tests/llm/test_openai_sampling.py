"""Sampling and log-probabilities in the OpenAI-compatible backend, against the scripted server of
test_openai_backend.py: what each body asks for, every choice parsed, llama.cpp's n calls with distinct seeds."""
from __future__ import annotations

import json

import pytest

from models.deadline import Deadline
from models.llm.config import LLMConfig, ServerConfig
from models.llm.generator import Completion, GenerationRequest, completions_of
from models.llm.openai_backend import OpenAIGenerator
from tests.llm.test_openai_backend import Script, scripted_server

USER = ({"role": "user", "content": "What is the capital of Australia?"},)


def _generator(url, temperature=0.0, **server):
    settings = dict(base_url=url, model="smollm2", adapter_models={}, retries=0, backoff_s=0.05, api_key_env="",
                    startup_wait_s=0.5)
    settings.update(server)
    return OpenAIGenerator(LLMConfig(backend="openai", temperature=temperature, seed=7,
                                     server=ServerConfig(**settings)), "models")


def _completions_reply(body, call):
    """Each asked-for choice ("n", default 1) with text "seed S choice k" and, when asked, token_logprobs."""
    choices = []
    for k in range(body.get("n", 1)):
        choice = {"index": k, "text": f"seed {body.get('seed')} choice {k}"}
        if body.get("logprobs"):
            choice["logprobs"] = {"tokens": ["a", "b"], "token_logprobs": [-0.5, -0.25 * (k + 1)]}
        choices.append(choice)
    return 200, json.dumps({"choices": choices[::-1]}), 0.0  # out of order: the backend sorts by index


def _chat_reply(body, call):
    choice = {"index": 0, "message": {"role": "assistant", "content": "Canberra"}}
    if body.get("logprobs"):
        choice["logprobs"] = {"content": [{"token": "Can", "logprob": -0.125}, {"token": "berra", "logprob": -0.5}]}
    return 200, json.dumps({"choices": [choice]}), 0.0


def test_completions_endpoint_vllm_dialect_sends_n_and_reads_every_choice_with_logprobs():
    script = Script(models=("smollm2",), reply=_completions_reply)
    with scripted_server(script) as url:
        results = _generator(url, dialect="vllm").generate(
            [GenerationRequest(USER), GenerationRequest(USER, temperature=0.7, n=2, logprobs=True)])
    plain, sampled = sorted(script.bodies, key=lambda b: "n" in b)
    assert plain["temperature"] == 0.0 and not {"n", "seed", "logprobs"} & set(plain)
    assert sampled["temperature"] == 0.7 and sampled["n"] == 2 and sampled["seed"] == 7 and sampled["logprobs"] == 1
    assert list(results) == ["seed None choice 0", "seed 7 choice 0"] and 0 not in results.completions
    assert completions_of(results, 1) == (Completion("seed 7 choice 0", (-0.5, -0.25)),
                                          Completion("seed 7 choice 1", (-0.5, -0.5)))


def test_chat_endpoint_reads_logprobs_content():
    script = Script(models=("smollm2",), reply=_chat_reply)
    with scripted_server(script) as url:
        results = _generator(url, endpoint="chat").generate([GenerationRequest(USER, logprobs=True)])
    assert script.bodies[0]["logprobs"] is True
    assert completions_of(results, 0) == (Completion("Canberra", (-0.125, -0.5)),)


def test_llamacpp_dialect_draws_n_samples_as_n_calls_with_distinct_seeds():
    script = Script(models=("smollm2",), reply=_completions_reply)
    with scripted_server(script) as url:
        generator = _generator(url, temperature=0.8, dialect="llamacpp")
        results = generator.generate([GenerationRequest(USER, n=3)], deadline=Deadline(10))
        greedy = generator.generate([GenerationRequest(USER, n=2, temperature=0.0)])
    assert sorted(b["seed"] for b in script.bodies[:3]) == [7, 8, 9] and all("n" not in b for b in script.bodies)
    assert [c.text for c in completions_of(results, 0)] == [f"seed {s} choice 0" for s in (7, 8, 9)]
    assert results[0] == "seed 7 choice 0"
    assert len(script.bodies) == 4 and [c.text for c in completions_of(greedy, 0)] == ["seed None choice 0"] * 2


@pytest.mark.parametrize("logprobs", [None, {"token_logprobs": ["x"]}, {"content": [{"token": "a"}]}, "nope"])
def test_malformed_logprobs_keep_the_completion_without_them(logprobs):
    reply = json.dumps({"choices": [{"index": 0, "text": "Canberra", "logprobs": logprobs}]})
    script = Script(models=("smollm2",), reply=lambda body, call: (200, reply, 0.0))
    with scripted_server(script) as url:
        results = _generator(url).generate([GenerationRequest(USER, logprobs=True)])
    assert list(results) == ["Canberra"] and results.reasons == {}
    assert completions_of(results, 0) == (Completion("Canberra"),)
