"""The hostile-input matrix through the vLLM backend, over a stand-in engine whose steps take real time.

On the grader a started `LLM.generate` runs to its end; the backend now drives the engine itself and aborts at
the stage deadline (models/llm/vllm_engine.py). Here every LLM call of the pipeline goes through
`VLLMGenerator` over `tests/vllm_stand_in.py`'s engine, each step sleeping `STEP_S` (a T4 step under a long
prefill), and the requests need more steps than a batch has: a KG program 96 (its cap), an answer 5 or, for
about half the questions (by a digest of the prompt), its cap of 48. Each hostile batch (deep nesting, lone surrogates, a 4 MB page, a KG stage slower than the batch, a
trickling KG server) must keep the robustness contract (`run_batch`: one non-empty answer per query, inside the
budget), and the engine must have aborted what it could not finish. The control runs the same engine without
aborts, as `LLM.generate` did, and overruns.
"""
from __future__ import annotations

import hashlib
import time

import pytest

from models.config import load_config
from models.deadline import Deadline
from models.kg.config import KGConfig
from models.kg.pathway import KGPathway
from models.llm.config import LLMConfig
from models.llm.vllm_backend import VLLMGenerator
from models.llm.vllm_engine import EngineDriver
from tests.robustness.support import (COUNTRIES, batch_of, clean_items, make_model, nested_tables, page, page_html,
                                      run_batch)
from tests.robustness.test_kg_hostile import PROGRAM, _EmptyKG, _kg_pathway, trickling_server
from tests.vllm_stand_in import StandInLLM, stand_in_vllm

STEP_S = 0.15
PER_QUESTION_S = 2.0  # 3 questions: a batch has 6 s; a KG program alone would take 14.4 s, a long answer 7.2 s


class RunsToTheEnd(EngineDriver):
    """What `LLM.generate` did: every request started runs to its end, whatever the deadline."""

    def run(self, prompts, params, loras, deadline=None):
        return super().run(prompts, params, loras, Deadline(None))


def _user_text(tokenizer, added) -> str:
    """The last user turn of the prompt (SmolLM2's ChatML template), as the stand-in engine saw it."""
    text = tokenizer.decode(added.prompt["prompt_token_ids"])
    return text.rsplit("<|im_start|>user\n", 1)[-1].split("<|im_end|>", 1)[0]


@pytest.fixture()
def engine_model(cpu_embedder, model_folder, tokenizer, monkeypatch):
    """`make_model` whose LLM is the vLLM backend over the slow stand-in engine: a KG prompt gets `PROGRAM`, an
    answer prompt a digest of itself (equal prompts, equal answers), after 96 / 48 / 5 steps (the caps cut 1000)."""

    def tokens(added) -> int:
        user = _user_text(tokenizer, added)
        if user.rstrip().endswith("API:"):
            return 1000
        return 1000 if int(hashlib.sha1(user.encode()).hexdigest(), 16) % 2 else 5

    def text(added) -> str:
        user = _user_text(tokenizer, added)
        return PROGRAM if user.rstrip().endswith("API:") else "answer " + hashlib.sha1(user.encode()).hexdigest()[:12]

    monkeypatch.setattr(StandInLLM, "tokenizer", tokenizer)
    monkeypatch.setattr(StandInLLM, "engine_options", dict(step_s=STEP_S, tokens=tokens, text=text))

    def build(driver=EngineDriver, **overrides):
        cpu = load_config("cpu")  # its adapters (the pipeline asks for the KG one), served by the stand-in
        config = LLMConfig(backend="vllm", path=str(model_folder), device="cuda", adapters=cpu.llm.adapters)
        generator = VLLMGenerator(config, cpu.models_dir, vllm=stand_in_vllm(), gpu_count=lambda: 1)
        generator.driver = driver(generator.llm.llm_engine)
        model = make_model(cpu_embedder, generator=generator, per_question_s=PER_QUESTION_S, **overrides)
        return model, generator.llm.llm_engine

    return build


def _hostile_batches():
    items = clean_items()
    country, capital = COUNTRIES[1]
    deep = page(country, capital, 9, html=page_html(country, capital, extra=nested_tables(3000)))
    bad = "\ud800\x00\udfff"
    poisoned_pages = [page(country, capital, i, name=f"{country}{bad}", snippet=f"capital {bad} {capital}",
                           html=page_html(country, capital, extra=f"<p>{bad}</p>")) for i in range(2)]
    filler = "<div><p>" + "lorem ipsum dolor sit amet " * 40 + "</p></div>"
    huge = page_html(country, capital, extra=filler * (4_000_000 // len(filler)))
    return {
        "clean": items,
        "nested tables x3000": [items[0], (items[1][0], [deep, items[1][1][1]]), items[2]],
        "lone surrogates everywhere": [items[0], (items[1][0] + bad, poisoned_pages), items[2]],
        "4 MB page": [items[0], (items[1][0], [page(country, capital, 0, html=huge), items[1][1][1]]), items[2]],
    }


@pytest.mark.parametrize("case", list(_hostile_batches()))
def test_web_hostile_batches_through_the_slow_engine_stay_in_budget(engine_model, case):
    model, engine = engine_model()
    run_batch(f"{case} (vLLM stand-in, {STEP_S} s steps)", model, batch_of(_hostile_batches()[case]))
    assert engine.aborted  # the long answers did not fit: the engine was stopped, not waited for
    assert not engine.running


@pytest.mark.parametrize("case", list(_hostile_batches()))
def test_hostile_batches_with_sampled_answers_stay_in_budget(engine_model, case):
    """`answering.samples: 3`: every answer request has a sampled request (n = 3) beside it, with log-probabilities
    on the greedy one; the engine decodes three sequences for it, and the deadline still holds."""
    model, engine = engine_model(**{"answering.samples": 3})
    run_batch(f"{case}, 3 sampled answers each (vLLM stand-in, {STEP_S} s steps)", model,
              batch_of(_hostile_batches()[case]))
    asked = [a.params.kwargs for batch in engine.batches for a in batch]
    assert any(k.get("n") == 3 for k in asked) and any(k.get("logprobs") == 1 for k in asked)
    assert not engine.running


def test_a_kg_stage_slower_than_the_batch_is_aborted_and_the_web_answers(engine_model):
    model, engine = engine_model(kg=KGPathway(KGConfig(), _EmptyKG()), task=2)
    run = run_batch(f"KG generation slower than the batch (vLLM stand-in, {STEP_S} s steps)", model,
                    batch_of(clean_items()))
    assert engine.aborted and not engine.running
    assert model.pipeline.last_run.stage_seconds["kg"] < 0.6 * run.budget
    assert "web" in run.sources  # the answers that fitted came from the web


def test_a_trickling_kg_server_through_the_slow_engine_stays_in_budget(engine_model):
    with trickling_server(0.5) as url:
        model, engine = engine_model(kg=_kg_pathway(url), task=2)
        run_batch(f"trickling KG server (vLLM stand-in, {STEP_S} s steps)", model, batch_of(clean_items(2)))
    assert not engine.running


def test_the_control_without_aborts_overruns_the_same_batch(engine_model):
    """The test can fail: the same engine driven as `LLM.generate` drove it goes past the budget."""
    model, _ = engine_model(driver=RunsToTheEnd)
    batch = batch_of(clean_items())
    started = time.monotonic()
    model.batch_generate_answer(batch)  # not `run_batch`: this batch is meant to break the contract
    assert time.monotonic() - started > len(batch["query"]) * PER_QUESTION_S
