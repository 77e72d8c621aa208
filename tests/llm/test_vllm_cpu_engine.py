"""The package's vLLM backend on the real engine: vLLM 0.32.0's CPU build (the version the g4dn image pins), with
SmolLM2-135M and the committed `api_generation` adapter (profile cpu-vllm; tests/vllm_cpu.py).

What the stand-in tests (tests/llm/test_vllm_backend.py) can only assume, checked here on the engine: per-request
`LoRARequest`s mixed in one batch, the KG grammar as structured outputs, n samples with log-probabilities, the
engine driver's abort at a deadline (add, step, abort), the warm-up and the base model standing in for a missing
adapter. One engine for the module.
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import replace

import pytest

from models.config import REPO_ROOT
from models.deadline import Deadline
from models.kg.apis.registry import compile_program
from models.kg.pathway import KGPathway, clean_program
from models.llm.generator import GenerationRequest, completions_of
from models.llm.stand_in import BaseModelStandIn
from models.pathways import KG
from models.sources.base import AnswerPlan
from models.sources.kg import KGSource
from models.types import Query
from tests.vllm_cpu import assert_programs_parse, cpu_vllm_config, cpu_vllm_generator

SAMPLE = REPO_ROOT / "data" / "sample" / "crag_sample.jsonl"
CAPITAL = ({"role": "user", "content": "What is the capital of France?"},)
LONG = ({"role": "user", "content": "Write a long story about a lighthouse keeper. " * 120},)


@pytest.fixture(scope="module")
def engine(model_folder):
    generator = cpu_vllm_generator()
    yield generator
    generator.close()


@pytest.fixture(scope="module")
def kg_requests(engine, cpu_embedder):
    """The cpu-vllm KG pathway's program request for each bundled Task-2 question: the adapter, its short prompt
    and the domain's grammar, exactly what the pipeline sends."""
    config = cpu_vllm_config()
    pathway = KGPathway(config.kg, client=None, embedder=cpu_embedder)
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(row["domain"], pathway.api_request(Query.from_crag(row), row["domain"])) for row in rows]


def test_the_engine_is_vllm_on_cpu(engine):
    import vllm

    assert vllm.__version__ == "0.32.0"
    assert engine.llm.llm_engine.vllm_config.device_config.device_type == "cpu"
    assert engine.adapters.names == ("api_generation",)


def test_a_batch_mixing_base_adapter_and_sampled_requests(engine, kg_requests):
    """Order kept; the base rows equal a base-only call's; the adapter changes its rows; the sampled row draws n."""
    _, kg = kg_requests[0]
    kg_free = replace(kg, constraint=None)  # free decoding: the adapter alone makes the difference
    base_kg = replace(kg_free, adapter=None)
    sampled = GenerationRequest(CAPITAL, max_new_tokens=12, temperature=1.0, n=3, logprobs=True)
    greedy = GenerationRequest(CAPITAL, max_new_tokens=12)
    base_only = list(engine.generate([greedy, base_kg]))
    mixed = engine.generate([greedy, kg_free, sampled, base_kg])
    assert [mixed[0], mixed[3]] == base_only
    assert mixed[1] != mixed[3]  # the same prompt through the LoRA adapter
    assert compile_program(clean_program(mixed[1]), kg_requests[0][0]).statements  # and it writes the API
    assert len(completions_of(mixed, 2)) == 3
    assert list(engine.generate([greedy])) == base_only[:1]  # and again, alone


def _programs_parse(engine, kg_requests) -> int:
    outputs = engine.generate([request for _, request in kg_requests])
    assert not getattr(outputs, "reasons", {})
    assert all(request.constraint is not None and request.constraint.grammar for _, request in kg_requests)
    return assert_programs_parse(outputs, [domain for domain, _ in kg_requests])


def test_every_kg_program_under_the_grammar_parses(engine, kg_requests):
    """The grammar g4dn sends goes to the engine as structured outputs (xgrammar) and every program it lets the
    model write on the Task-2 sample is there and compiles, to at least one statement, with the package's parser
    and the domain's signatures."""
    assert _programs_parse(engine, kg_requests) == len(kg_requests) == 20


@pytest.mark.parametrize("empty", ["", "None"])
def test_the_program_check_fails_when_the_engine_writes_empty_programs(engine, kg_requests, monkeypatch, empty):
    """Planted: the engine's programs come back empty; the check above must then fail."""
    monkeypatch.setattr(engine, "generate", lambda requests, **kwargs: [empty] * len(requests))
    with pytest.raises(AssertionError, match="an empty program"):
        _programs_parse(engine, kg_requests)


def test_n_samples_and_log_probabilities_reach_the_completions(engine):
    request = GenerationRequest(CAPITAL, max_new_tokens=10, temperature=1.0, n=3, logprobs=True)
    outputs = engine.generate([request, replace(request, temperature=0.0)])
    sampled, greedy = completions_of(outputs, 0), completions_of(outputs, 1)
    assert len(sampled) == 3 and all(c.token_logprobs and c.min_logprob <= c.mean_logprob <= 0 for c in sampled)
    assert len({c.text for c in sampled}) >= 2  # at temperature 1 three draws of 10 tokens differ
    assert len(greedy) == 3 and len({c.text for c in greedy}) == 1  # greedy: drawn once, copied n times
    assert outputs[1] == greedy[0].text and greedy[0].token_logprobs
    # one log-probability per generated token: the text's, plus the end-of-turn token when the model stopped
    assert 0 <= len(greedy[0].token_logprobs) - engine.count_tokens(greedy[0].text) <= 1


def test_log_probabilities_reach_the_answer_gate(engine, cpu_embedder):
    """The answer step asks for log-probabilities and samples; the verifier's scores and the gate's features
    carry them (measured, not the 'unmeasured' marker)."""
    from models.verify.gate import features
    from tests.robustness.support import batch_of, clean_items, make_model

    model = make_model(cpu_embedder, generator=engine, per_question_s=30.0,
                       **{"answering.samples": 2, "answering.logprobs": True})
    model.batch_generate_answer(batch_of(clean_items(2)))
    scored = [a["verifier"]["scores"] for answer in model.last_answers for a in answer.trace.get("attempts", [])
              if a.get("verifier", {}).get("scores", {}).get("mean_logprob") is not None]
    assert scored, "no attempt carried the answer's log-probabilities"
    feats = features(scored[0], rules_accepted=False)
    assert feats["has_mean_logprob"] == 1.0 and feats["has_min_logprob"] == 1.0


def test_a_deadline_aborts_the_unfinished_and_the_engine_answers_the_next_call(engine):
    before = list(engine.generate([GenerationRequest(CAPITAL, max_new_tokens=8)]))
    started = time.monotonic()
    outputs = engine.generate([GenerationRequest(LONG, max_new_tokens=1500)] * 4, deadline=Deadline(3.0))
    seconds = time.monotonic() - started
    assert list(outputs) == [""] * 4
    assert all("aborted at the stage deadline" in outputs.reasons[i] for i in range(4))
    assert not engine.llm.llm_engine.has_unfinished_requests()
    # within the deadline plus one step: a step of 4 requests here is well under a second once decoding
    assert seconds < 3.0 + 2.0, seconds
    assert list(engine.generate([GenerationRequest(CAPITAL, max_new_tokens=8)])) == before


def test_an_expired_deadline_adds_nothing(engine):
    outputs = engine.generate([GenerationRequest(CAPITAL)], deadline=Deadline(0.0))
    assert list(outputs) == [""] and not engine.llm.llm_engine.has_unfinished_requests()


def test_a_request_the_engine_rejects_costs_only_itself(engine):
    """A prompt over the window is cut by the chat formatter; a grammar the engine cannot compile is rejected at
    add_request (structured outputs are validated then), and its neighbours still answer."""
    from models.llm.constraints import DecodingConstraint

    bad = GenerationRequest(CAPITAL, max_new_tokens=4,
                            constraint=DecodingConstraint(is_valid_prefix=lambda _: True, grammar="start: (("))
    outputs = engine.generate([GenerationRequest(CAPITAL, max_new_tokens=4), bad])
    assert outputs[0] and outputs[1] == ""
    assert "vLLM rejected the request" in outputs.reasons[1]


def test_the_warm_up_on_the_engine(engine, cpu_embedder, caplog):
    """The start-up warm-up (models/warmup.py): one request per adapter and the base model, one per grammar of the
    KG source, all through the engine, none failed."""
    from models.warmup import warm_up

    config = cpu_vllm_config()
    source = KGSource(KGPathway(config.kg, client=None, embedder=cpu_embedder), AnswerPlan(KG, "kg_answer"))
    with caplog.at_level(logging.INFO, logger="models.warmup"):
        report = warm_up(engine, engine.adapters.names, [source])
    assert report.adapters == [None, "api_generation"]
    assert len(report.grammars) == 5 and not report.failed


def test_a_missing_adapter_is_answered_by_the_base_model(engine):
    stand_in = BaseModelStandIn(engine, {"web_answer": "no folder (test)"})
    request = GenerationRequest(CAPITAL, max_new_tokens=8)
    assert list(stand_in.generate([replace(request, adapter="web_answer")])) == list(engine.generate([request]))


def test_yaml_still_reads_dates_after_structured_outputs(engine, kg_requests):
    """lm-format-enforcer, imported by vLLM for structured outputs, makes PyYAML read timestamps as strings
    process-wide; the backend puts PyYAML's own reading back (models/llm/vllm_backend.py)."""
    import datetime

    import yaml

    engine.generate([kg_requests[0][1]])
    assert yaml.safe_load("day: 2010-07-15")["day"] == datetime.date(2010, 7, 15)
