"""Exact grammar decoding (llguidance token masks) in the HF backend, on the real CPU model (SmolLM2-135M).

Toy Lark grammars check the mechanics (outputs parse, EOS only when the grammar accepts, constrained and
free rows in one `generate` call, determinism); the KG grammars check the outcome that motivated it:
programs for the sample questions compile.
"""
import logging
from dataclasses import replace

import pytest
import torch

import lark  # noqa: E402  (requirements-cpu.txt: a missing package is a broken install, not a skip)
import llguidance  # noqa: E402, F401

from models.config import load_config  # noqa: E402
from models.kg.apis import compile_program  # noqa: E402
from models.kg.pathway import KGPathway, clean_program  # noqa: E402
from models.llm.config import LLMConfig  # noqa: E402
from models.llm.constraints import DecodingConstraint  # noqa: E402
from models.llm.generator import GenerationRequest  # noqa: E402
from models.llm.grammar_decoding import GrammarConstraintProcessor  # noqa: E402
from models.llm.hf_backend import HFGenerator  # noqa: E402
from models.llm.prefix_decoding import PrefixConstraintProcessor  # noqa: E402
from models.types import Query  # noqa: E402

CAPITAL = 'start: "The capital is " CITY "."\nCITY: /[A-Z][a-z]+/\n'
THREE_COLOURS = 'start: COLOUR ", " COLOUR ", " COLOUR\nCOLOUR: /[a-z]+/\n'
YES_NO = 'start: "yes" | "no"\n'


def _ask(question: str, grammar: str | None = None, max_new_tokens: int = 12, **kwargs) -> GenerationRequest:
    constraint = DecodingConstraint(is_valid_prefix=lambda s: True, grammar=grammar) if grammar else None
    return GenerationRequest(({"role": "user", "content": question},), max_new_tokens=max_new_tokens,
                             constraint=kwargs.pop("constraint", constraint), **kwargs)


def _parses(grammar: str, text: str) -> bool:
    try:
        lark.Lark(grammar, start="start").parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


@pytest.fixture(scope="module")
def generator(model_folder):
    """The base model alone (no adapters to train): grammar decoding does not depend on them."""
    return HFGenerator(LLMConfig(path=str(model_folder), dtype="float32"), models_dir="/nonexistent")


def _mixed_batch():
    digits = DecodingConstraint(is_valid_prefix=lambda s: s.isdigit() or s == "", is_complete=str.isdigit)
    return [_ask("What is the capital of Australia?", CAPITAL),
            _ask("What is the capital of Australia?"),
            _ask("Name three colours.", THREE_COLOURS),
            _ask("How many legs does a spider have?", constraint=digits, max_new_tokens=4)]


@pytest.fixture(scope="module")
def mixed(generator):
    """One batch: two grammar rows, a free row and a prefix-checked row (no grammar); with the logits
    processors of every `model.generate` call it took."""
    calls = []
    original = generator.model.generate

    def counting(*args, **kwargs):
        calls.append(kwargs.get("logits_processor"))
        return original(*args, **kwargs)

    generator.model.generate = counting
    try:
        outputs = generator.generate(_mixed_batch())
    finally:
        del generator.model.generate  # back to the class's method
    return outputs, calls


def test_grammar_rows_always_parse_and_end_by_choice(mixed, generator):
    (capital, _, colours, _), _ = mixed
    assert _parses(CAPITAL, capital) and _parses(THREE_COLOURS, colours)
    assert "Canberra" in capital
    # under the token cap: the rows ended by EOS, which the mask allows only once the grammar accepts
    assert generator.count_tokens(capital) < 12 and generator.count_tokens(colours) < 12


def test_constrained_and_free_rows_share_one_generate_call(mixed):
    (_, free, _, digits), calls = mixed
    assert len(calls) == 1
    assert {type(p) for p in calls[0]} == {GrammarConstraintProcessor, PrefixConstraintProcessor}
    assert not _parses(CAPITAL, free) and "Canberra" in free  # the free row was not masked
    assert digits.isdigit()  # the prefix-checked row still gets its own constraint


def test_grammar_decoding_is_deterministic(generator, mixed):
    assert generator.generate(_mixed_batch()) == mixed[0]


def test_end_of_sequence_is_masked_until_the_grammar_accepts(generator, tokenizer):
    processor = generator.grammar_decoder.processor([YES_NO], prompt_length=0)
    eos = generator.eos_token_ids[0]
    scores = torch.zeros((1, generator.model.config.vocab_size))
    scores[0, eos] = 100.0  # the model wants to stop at once
    first = processor(torch.zeros((1, 0), dtype=torch.long), scores.clone())
    allowed = torch.isfinite(first[0]).nonzero().flatten().tolist()
    assert eos not in allowed and allowed
    assert all("yes".startswith(tokenizer.decode([t])) or "no".startswith(tokenizer.decode([t])) for t in allowed)
    yes = torch.tensor([tokenizer.encode("yes", add_special_tokens=False)])
    after = processor(yes, scores.clone())
    assert torch.isfinite(after[0]).nonzero().flatten().tolist() == [eos]  # complete: only the end remains


def test_a_stop_string_may_follow_a_complete_program_only(generator, tokenizer):
    grammar = 'start: LINE ("\\n" LINE)*\nLINE: /get\\([a-z]+\\)/\n'
    processor = generator.grammar_decoder.processor([grammar], prompt_length=0, stop=("\n\n",))
    blank_line = tokenizer.encode("\n\n", add_special_tokens=False)
    assert len(blank_line) == 1  # one token, so allowed-or-not is a single mask bit
    scores = torch.zeros((1, generator.model.config.vocab_size))
    unfinished = processor(torch.tensor([tokenizer.encode("get(ab", add_special_tokens=False)]), scores.clone())
    assert not torch.isfinite(unfinished[0, blank_line[0]])
    processor = generator.grammar_decoder.processor([grammar], prompt_length=0, stop=("\n\n",))
    complete = processor(torch.tensor([tokenizer.encode("get(ab)", add_special_tokens=False)]), scores.clone())
    assert torch.isfinite(complete[0, blank_line[0]])


def test_a_grammar_llguidance_rejects_costs_only_its_own_row(generator, caplog):
    with caplog.at_level(logging.ERROR, logger="models.llm.grammar_decoding"):
        broken, free = generator.generate([_ask("Say hi.", "start: undefined_rule\n", max_new_tokens=4),
                                           _ask("Say hi.", max_new_tokens=4)])
    assert broken == "" and free
    assert "grammar rejected by llguidance" in caplog.text


def test_without_llguidance_grammars_fall_back_to_prefix_checks(generator, monkeypatch):
    grammar_row = DecodingConstraint(is_valid_prefix=lambda s: True, grammar=YES_NO)
    predicate_row = DecodingConstraint(is_valid_prefix=lambda s: True)
    exact = generator._constraint_processors([grammar_row, predicate_row, None], 10, ())
    assert [type(p) for p in exact] == [GrammarConstraintProcessor, PrefixConstraintProcessor]
    assert exact[0].rows == [0] and exact[1].constraints == [None, predicate_row, None]
    monkeypatch.setattr(generator, "grammar_decoder", None)
    [fallback] = generator._constraint_processors([grammar_row, predicate_row, None], 10, ())
    assert isinstance(fallback, PrefixConstraintProcessor)
    assert fallback.constraints == [grammar_row, predicate_row, None]


# sample questions (data/sample/crag_sample.jsonl); with one in-context example the model finishes each
# program well inside the token cap, so "compiles" is about the grammar, not about a cut
KG_QUESTIONS = {
    "finance": "what was the closing price of aapl on 2024-02-27?",
    "open": "what is the capital of australia?",
}
KG_QUESTIONS_SLOW = {  # longer prompts: together with the above, every domain
    "sports": "how many points did the golden state warriors score on 2022-10-18?",
    "movie": "when was the movie inception released?",
    "music": "in what year was the song bohemian rhapsody released?",
}


def _assert_kg_programs_compile(generator, questions: dict[str, str]) -> None:
    config = load_config("cpu").kg
    # the base model (the fixture has no adapters) asked with the prompt that describes the API
    pathway = KGPathway(replace(config, icl_k=1, api_max_new_tokens=40, api_adapter=None, api_prompt=""), client=None)
    requests = [pathway.api_request(Query(f"q{i}", text, "03/01/2024, 10:00:00 PT", ()), domain)
                for i, (domain, text) in enumerate(questions.items())]
    assert all(r.constraint.grammar for r in requests)  # the exact path, not the prefix fallback
    programs = generator.generate(requests)
    for (domain, _), program in zip(questions.items(), programs):
        assert program, f"no program for {domain}"
        compile_program(clean_program(program), domain)  # raises KGError on a program that does not compile


def test_kg_programs_compile(generator):
    _assert_kg_programs_compile(generator, KG_QUESTIONS)


@pytest.mark.slow
def test_kg_programs_compile_in_the_other_domains(generator):
    _assert_kg_programs_compile(generator, KG_QUESTIONS_SLOW)
