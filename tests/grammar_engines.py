"""The two structured-output engines vLLM 0.32 can use, over a byte-level vocabulary (one token per byte plus an
end-of-sequence token) that stands in for a model's, so a grammar itself is what a test checks: xgrammar (vLLM's
default backend, `GrammarCompiler.compile_lark`) and llguidance (its `guidance` backend). Both CPU wheels are the
versions vllm 0.32.0 pins. Used by the KG grammar tests and the SQL grammar tests."""
from __future__ import annotations

from typing import Mapping

import llguidance
import xgrammar

EOS = 256
VOCAB = [bytes([i]) for i in range(256)] + [b"<eos>"]


class XGrammarEngine:
    """vLLM's xgrammar backend: `compile_lark` once per named grammar and a `GrammarMatcher` per text."""

    def __init__(self, grammars: Mapping[str, str]):
        info = xgrammar.TokenizerInfo(VOCAB, vocab_type=xgrammar.VocabType.RAW, stop_token_ids=[EOS])
        compiler = xgrammar.GrammarCompiler(info)
        self.compiled = {name: compiler.compile_lark(grammar) for name, grammar in grammars.items()}

    def accepts(self, name: str, text: str) -> bool:
        matcher = xgrammar.GrammarMatcher(self.compiled[name])
        return all(matcher.accept_token(t) for t in text.encode()) and matcher.accept_token(EOS)


class _ByteTokenizer:
    eos_token_id, bos_token_id = EOS, None
    tokens = VOCAB

    def __call__(self, text: bytes) -> list[int]:
        return list(text)


class LLGuidanceEngine:
    """vLLM's guidance backend: each grammar validated, then `grammar_from("lark", ...)` and an `LLMatcher` per
    text."""

    def __init__(self, grammars: Mapping[str, str]):
        self.tokenizer = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()))
        self.grammars = dict(grammars)
        for grammar in self.grammars.values():
            assert llguidance.LLMatcher.validate_grammar(llguidance.grammar_from("lark", grammar)) == ""

    def accepts(self, name: str, text: str) -> bool:
        matcher = llguidance.LLMatcher(self.tokenizer, llguidance.grammar_from("lark", self.grammars[name]),
                                       log_level=0)
        return matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()
