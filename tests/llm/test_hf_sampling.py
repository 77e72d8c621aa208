"""Sampling and log-probabilities in the HF backend, on the real CPU model (SmolLM2-135M): n completions per
request, the model's own token log-probabilities, greedy output unchanged by asking for them, a sampled request
under the KG grammar still parses, and a deadline holds with n > 1."""
import time
from dataclasses import replace

import pytest

from models.config import load_config
from models.deadline import Deadline
from models.kg.apis import compile_program
from models.kg.pathway import KGPathway, clean_program
from models.llm.config import LLMConfig
from models.llm.generator import GenerationRequest, completions_of
from models.llm.hf_backend import HFGenerator
from models.types import Query

AUSTRALIA = ({"role": "user", "content": "What is the capital of Australia?"},)
COLOURS = ({"role": "user", "content": "Name a colour."},)


@pytest.fixture(scope="module")
def generator(model_folder):
    return HFGenerator(LLMConfig(path=str(model_folder), dtype="float32"), models_dir="/nonexistent")


def _ask(messages=AUSTRALIA, **kwargs):
    return GenerationRequest(messages, max_new_tokens=kwargs.pop("max_new_tokens", 10), **kwargs)


def test_greedy_output_is_the_same_with_log_probabilities_and_they_are_the_models_own(generator, tokenizer):
    [plain] = generator.generate([_ask()])
    results = generator.generate([_ask(logprobs=True)])
    assert results == [plain]
    [completion] = completions_of(results, 0)
    lps = completion.token_logprobs
    assert completion.text == plain and lps and all(lp <= 0 for lp in lps)
    assert abs(len(lps) - len(tokenizer.encode(plain, add_special_tokens=False))) <= 1
    assert -3 < completion.mean_logprob <= 0 and 0 < completion.probability <= 1


def test_a_sampled_request_draws_n_completions_and_the_first_is_the_plain_result(generator):
    results = generator.generate([_ask(COLOURS, temperature=1.2, n=4, logprobs=True)])
    drawn = completions_of(results, 0)
    assert len(drawn) == 4 and results[0] == drawn[0].text
    assert all(c.token_logprobs for c in drawn if c.text)
    assert len({c.text for c in drawn}) > 1  # at this temperature four draws differ
    again = generator.generate([_ask(COLOURS, temperature=1.2, n=4, logprobs=True)])  # seeded by llm.seed
    assert [c.text for c in completions_of(again, 0)] == [c.text for c in drawn]


def test_greedy_with_n_returns_n_copies_and_a_mixed_batch_keeps_its_order(generator):
    [greedy] = generator.generate([_ask()])
    results = generator.generate([_ask(n=2), _ask(COLOURS, temperature=1.0, n=3), _ask(logprobs=True)])
    assert [c.text for c in completions_of(results, 0)] == [greedy, greedy]  # greedy: copies of one completion
    assert len(completions_of(results, 1)) == 3 and results[1] == completions_of(results, 1)[0].text
    assert results[2] == greedy and completions_of(results, 2)[0].token_logprobs


def test_sampled_kg_programs_under_the_grammar_still_parse(generator):
    config = load_config("cpu").kg
    pathway = KGPathway(replace(config, icl_k=1, api_max_new_tokens=40, api_adapter=None, api_prompt=""), client=None)
    request = pathway.api_request(Query("q", "what is the capital of australia?", "03/01/2024, 10:00:00 PT", ()),
                                  "open")
    assert request.constraint.grammar
    results = generator.generate([replace(request, temperature=1.0, n=4, logprobs=True)])
    drawn = completions_of(results, 0)
    assert len(drawn) == 4
    for completion in drawn:
        assert completion.text, "a sampled program was empty"
        compile_program(clean_program(completion.text), "open")  # raises KGError when it does not parse


def test_a_deadline_holds_with_n_above_one(generator):
    started = time.monotonic()
    assert generator.generate([_ask(COLOURS, temperature=1.0, n=4)], deadline=Deadline(0.0)) == [""]
    assert time.monotonic() - started < 0.5
    started = time.monotonic()
    results = generator.generate([_ask(COLOURS, temperature=1.0, n=4, max_new_tokens=1024)] * 4,
                                 deadline=Deadline(1.0))
    assert time.monotonic() - started < 2.5 and len(results) == 4
    assert all(isinstance(r, str) for r in results)
