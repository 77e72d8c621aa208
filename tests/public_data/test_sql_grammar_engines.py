"""The SQL grammar under both structured-output engines vLLM 0.32 can use on g4dn: xgrammar (`compile_lark`, its
default) and llguidance (its `guidance` backend), with a byte-level vocabulary standing in for a model's (as
tests/kg/test_grammar_engines.py does for the KG grammars): every pool example is accepted token by token under its
own question's grammar, and a statement naming what the question does not is rejected."""
from __future__ import annotations

import re

import llguidance
import pytest
import xgrammar

from models.paths import resolve_repo_path
from models.public_data.sql.config import SQLConfig
from models.public_data.sql.grammar import sql_grammar
from models.public_data.sql.schema import describe
from models.public_data.sql.writer import TABLE_GROUPS, load_examples

EXAMPLES = load_examples(resolve_repo_path(SQLConfig().examples))
EOS = 256
VOCAB = [bytes([i]) for i in range(256)] + [b"<eos>"]


def xgrammar_accepts(grammar: str, text: str) -> bool:
    info = xgrammar.TokenizerInfo(VOCAB, vocab_type=xgrammar.VocabType.RAW, stop_token_ids=[EOS])
    matcher = xgrammar.GrammarMatcher(xgrammar.GrammarCompiler(info).compile_lark(grammar))
    return all(matcher.accept_token(t) for t in text.encode()) and matcher.accept_token(EOS)


class _ByteTokenizer:
    eos_token_id, bos_token_id = EOS, None
    tokens = VOCAB

    def __call__(self, text: bytes) -> list[int]:
        return list(text)


def llguidance_accepts(grammar: str, text: str) -> bool:
    tokenizer = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()))
    matcher = llguidance.LLMatcher(tokenizer, llguidance.grammar_from("lark", grammar), log_level=0)
    return matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()


@pytest.fixture(scope="module")
def schema(store_path):
    return describe(store_path)


@pytest.fixture(params=[xgrammar_accepts, llguidance_accepts], ids=["xgrammar", "llguidance"])
def accepts(request):
    return request.param


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
