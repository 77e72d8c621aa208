"""The Lark grammar for constrained decoding: it accepts exactly the canonical programs the checker accepts.

Checked with the `lark` parser (Earley, as llguidance parses) and with llguidance itself (the engine behind
vLLM's guidance backend; a byte-level vocabulary stands in for a model's): every pool program is accepted
token by token, rule-breaking programs are rejected, and for mutated programs grammar acceptance implies a
successful compile (so a grammar-constrained generation always compiles) while every compiled program's
canonical form is accepted.
"""
from __future__ import annotations

import lark
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.kg.apis import compile_program, signatures
from models.kg.language.ast import format_program
from models.kg.language.errors import KGError
from models.kg.language.grammar import lark_grammar
from models.kg.language.signature import TEXT, Param, Signature
from tests.kg.kg_support import DOMAINS, POOL, program_texts

GRAMMARS = {d: lark_grammar(signatures(d)) for d in DOMAINS}
PARSERS = {d: lark.Lark(g, start="start") for d, g in GRAMMARS.items()}


def accepts(domain: str, text: str) -> bool:
    try:
        PARSERS[domain].parse(text)
    except lark.exceptions.LarkError:
        return False
    return True


@pytest.mark.parametrize("record", POOL, ids=lambda r: r["query"][:40])
def test_pool_programs_are_in_the_grammar(record):
    text = format_program(compile_program(record["program"], record["domain"]))
    assert accepts(record["domain"], text)


@pytest.mark.parametrize("domain, text", [
    ("movie", 'get_movie(*)["title"]'),  # * on the first line
    ("movie", 'get_movie("a")\nget_movie_person_cast(*, *)'),  # two stars
    ("movie", 'sort(None, year)'),  # sort first
    ("movie", 'ALL get_movie_person_cast("a", None)'),  # ALL on a non-searching function
    ("movie", 'AVG get_movie("a")["len"]'),
    ("movie", 'AVG get_movie("a")'),
    ("movie", 'get_movie("a")["len"]["title"]'),
    ("movie", "get_movie(2010)"),  # wrong argument kind
    ("movie", 'get_movie_person_cast("a")'),  # missing argument
    ("movie", "get_movie('a')"),  # not canonical: single quotes
    ("movie", 'get_movie("a") '),  # not canonical: trailing space
    ("open", 'get_movie("a")'),  # another domain's function
])
def test_rule_breaking_programs_are_rejected(domain, text):
    assert not accepts(domain, text)


def test_optional_and_star_arguments_are_spelled_out():
    grammar = lark_grammar({"f": Signature("f", (Param("a", TEXT, required=False), Param("b", TEXT, required=False)))})
    assert 'f_f_0: "f(" (STRING (", " STRING)?)? ")"' in grammar
    parser = lark.Lark(grammar, start="start")
    for text in ("f()", 'f("a")', 'f("a", "b")', 'f("a")\nf(*)', 'f("a")\nf("b", *)'):
        parser.parse(text)
    with pytest.raises(lark.exceptions.LarkError):
        parser.parse('f("a")\nf(*, *)')


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(program_texts, st.sampled_from(DOMAINS))
def test_grammar_and_checker_agree(text, domain):
    try:
        program = compile_program(text, domain)
    except KGError:
        assert not accepts(domain, text)  # what the grammar generates always compiles
        return
    assert accepts(domain, format_program(program))  # and every compiled program has a canonical form in it


class _ByteTokenizer:
    """One token per byte plus an end-of-sequence token: the grammar is checked, not a real vocabulary."""

    eos_token_id, bos_token_id = 256, None
    tokens = [bytes([i]) for i in range(256)] + [b"<eos>"]

    def __call__(self, text: bytes) -> list[int]:
        return list(text)


def test_llguidance_accepts_the_grammar_and_the_pool():
    import llguidance

    tokenizer = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()))
    for domain in DOMAINS:
        assert llguidance.LLMatcher.validate_grammar(llguidance.grammar_from("lark", GRAMMARS[domain])) == ""
    matchers = {d: llguidance.LLMatcher(tokenizer, llguidance.grammar_from("lark", GRAMMARS[d]), log_level=0)
                for d in DOMAINS}
    for record in POOL:
        matcher = matchers[record["domain"]]
        matcher.reset()
        text = format_program(compile_program(record["program"], record["domain"]))
        assert matcher.consume_tokens(list(text.encode())), (text, matcher.get_error())
        assert matcher.is_accepting(), text
    matchers["movie"].reset()
    assert not matchers["movie"].consume_tokens(list(b"get_movie(*)"))
