"""The SQL grammar under both structured-output engines vLLM 0.32 can use on g4dn: xgrammar (`compile_lark`, its
default) and llguidance (its `guidance` backend), with a byte-level vocabulary standing in for a model's
(tests/grammar_engines.py, shared with the KG grammar tests): every pool example is accepted token by token under
its own question's grammar, and a statement naming what the question does not is rejected."""
from __future__ import annotations

import re

import pytest

from models.paths import resolve_repo_path
from models.public_data.sql.config import SQLConfig
from models.public_data.sql.grammar import sql_grammar
from models.public_data.sql.schema import describe
from models.public_data.sql.writer import TABLE_GROUPS, load_examples
from tests.grammar_engines import LLGuidanceEngine, XGrammarEngine

EXAMPLES = load_examples(resolve_repo_path(SQLConfig().examples))


@pytest.fixture(scope="module")
def schema(store_path):
    return describe(store_path)


@pytest.fixture(params=[XGrammarEngine, LLGuidanceEngine], ids=["xgrammar", "llguidance"])
def accepts(request):
    """`accepts(grammar, text)` under one engine (each question has its own grammar)."""
    return lambda grammar, text: request.param({"q": grammar}).accepts("q", text)


def test_vllm_reads_the_grammar_as_lark(schema):
    grammar = sql_grammar(schema, TABLE_GROUPS["movie"], "which film is longer, the king's speech or hugo?",
                          schema.categorical())
    assert not any("::=" in re.sub(r"(#|//).*$", "", line) for line in grammar.split("\n"))


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.question[:40])
def test_every_pool_example_is_accepted(schema, accepts, example):
    grammar = sql_grammar(schema, TABLE_GROUPS[example.domain], example.question, schema.categorical())
    assert accepts(grammar, example.sql), example.sql


@pytest.mark.parametrize("text", [
    "SELECT COUNT(*) FROM movie_credits WHERE person = 'steven spielberg'",  # not the question's words
    "SELECT COUNT(*) FROM movie_credits WHERE release_year = 2011",          # not the question's number
    "SELECT COUNT(*) FROM movie_credits WHERE person LIKE '%david fincher%'; DROP TABLE movies",
    "SELECT COUNT(*) FROM movie_credits WHERE person LIKE '%david fincher%",  # unfinished
])
def test_statements_outside_the_question_are_rejected(schema, accepts, text):
    grammar = sql_grammar(schema, TABLE_GROUPS["movie"], "how many films did david fincher direct before 2000",
                          schema.categorical())
    assert accepts(grammar, "SELECT COUNT(*) FROM movie_credits WHERE person LIKE '%david fincher%' AND "
                            "job = 'director' AND release_year < 2000")
    assert not accepts(grammar, text)
