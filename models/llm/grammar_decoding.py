"""Exact grammar-constrained decoding inside transformers `generate`, with llguidance token masks.

A constraint that carries a Lark `grammar` is enforced exactly: before each step llguidance computes, for
every constrained row, the set of vocabulary tokens that keep the row's text inside the grammar (a
bitmask), every other logit becomes -inf, and the token the model then picks is fed back to the row's
matcher. Nothing is left to luck: unlike the top-k prefix search (`prefix_decoding.py`, the fallback for
constraints without a grammar), a row is never stranded on a prefix whose continuations the model ranks
low, so every finished row parses.

Design decisions:
- End of sequence is ours, not llguidance's: its EOS bits are cleared and the model's own end ids (a
  generation config may list several) are allowed exactly when the matcher accepts. A matcher that has
  stopped (nothing may follow) therefore offers only EOS, so the row ends at once.
- Stop strings may follow a complete program: the request's language is `grammar` then at most one of
  its stop strings (the grammar nested unchanged, see `_with_stop_strings`). Few-shot prompts end their
  examples with a blank line, so that is how a base model says "done"; masking it out left the model only
  a newline, which the grammar reads as "another statement follows", and programs ran on to the token cap.
  The backend's stopping criterion ends the row at the stop string and cuts it off, as for free rows.
- A row ends for good once it emits EOS; later steps (transformers pads finished rows) are not fed to its
  matcher. A matcher that errs anyway (an invalid grammar, a token it refused) ends its row with EOS, so
  that request returns "" and the caller's parser decides, instead of the whole batch failing.
- Grammars are compiled once per generator (`GrammarDecoder`, LRU-cached) and each row gets a
  `deep_copy` of the compiled matcher: the KG pathway sends the same five domain grammars every batch.
- The mask is applied with plain tensor ops (bit unpacking), not `llguidance.torch`'s `torch.compile`d
  kernel, which would compile with a C++ toolchain on first use on CPU.
- llguidance is optional: `GrammarDecoder.load` returns None (logged once) when it cannot be imported,
  and the backend falls back to prefix checks.
"""
from __future__ import annotations

import functools
import json
import logging
from typing import Sequence

import torch
from transformers import LogitsProcessor

log = logging.getLogger(__name__)

_BITS = torch.arange(32, dtype=torch.int32)


@functools.cache
def _import_llguidance():
    """The llguidance modules, or None (logged once per process) when the package is not importable."""
    try:
        import llguidance
        import llguidance.hf
        import llguidance.torch
    except ImportError as exc:
        log.warning("llguidance is not importable (%s): grammar constraints fall back to prefix checks", exc)
        return None
    return llguidance


class GrammarDecoder:
    """What a generator keeps for grammar decoding: the llguidance view of its tokenizer and the
    compiled grammars. Build it with `load`; make one `GrammarConstraintProcessor` per `generate` call."""

    def __init__(self, llguidance, ll_tokenizer, eos_token_ids: Sequence[int], cache_size: int = 16):
        if not eos_token_ids:
            raise ValueError("grammar decoding needs at least one end-of-sequence token id")
        self.llguidance = llguidance
        self.ll_tokenizer = ll_tokenizer
        self.eos_token_ids = tuple(eos_token_ids)
        self.executor = llguidance.LLExecutor()
        self.compiled = functools.lru_cache(maxsize=cache_size)(self._compile)

    @classmethod
    def load(cls, hf_tokenizer, eos_token_ids: Sequence[int]) -> "GrammarDecoder | None":
        """The decoder for `hf_tokenizer` (~1 s: llguidance indexes the whole vocabulary), or None (logged)
        when llguidance is not installed or cannot read the tokenizer (a slow, non-`tokenizers` one):
        grammar decoding is an improvement the backend can do without, never a reason not to start.

        Raises:
            ValueError: no end-of-sequence id.
        """
        llguidance = _import_llguidance()
        if llguidance is None:
            return None
        try:
            ll_tokenizer = llguidance.hf.from_tokenizer(hf_tokenizer, eos_token=list(eos_token_ids))
        except Exception as exc:  # noqa: BLE001 - whatever the Rust side rejects, prefix checks still work
            log.warning("llguidance cannot use this tokenizer (%s): grammar constraints fall back to prefix "
                        "checks", exc)
            return None
        return cls(llguidance, ll_tokenizer, eos_token_ids)

    def _compile(self, grammar: str, stop: tuple[str, ...]):
        """A fresh matcher for the Lark `grammar` followed by at most one stop string (callers deep-copy
        it), or None if it does not compile."""
        llg = self.llguidance
        matcher = llg.LLMatcher(self.ll_tokenizer, _with_stop_strings(llg, grammar, stop), log_level=0)
        if matcher.is_error():
            log.error("grammar rejected by llguidance, its rows will return nothing: %s", matcher.get_error())
            return None
        return matcher

    def fill_masks(self, matchers: list[tuple], bitmask: torch.Tensor) -> None:
        """Writes each `(matcher, row)`'s allowed-token bits into `bitmask[row]` (rows in parallel)."""
        self.llguidance.torch.fill_next_token_bitmask_par(self.executor, matchers, bitmask)

    def processor(self, grammars: Sequence[str | None], prompt_length: int,
                  stop: Sequence[str] = ()) -> "GrammarConstraintProcessor":
        """A logits processor for one batch: `grammars[i]` constrains row i (None = row untouched).

        Args:
            grammars: one Lark grammar (or None) per batch row.
            prompt_length: padded prompt length; generated ids start there (left padding).
            stop: the batch's stop strings; each may follow a complete program (the backend's stopping
                criterion then ends the row and cuts the stop string off).
        """
        stop = tuple(s for s in stop if s)
        matchers = []
        for grammar in grammars:
            compiled = self.compiled(grammar, stop) if grammar is not None else None
            matchers.append(compiled.deep_copy() if compiled is not None else None)
        failed = [i for i, (g, m) in enumerate(zip(grammars, matchers)) if g is not None and m is None]
        return GrammarConstraintProcessor(self, matchers, prompt_length, failed_rows=failed)


def _with_stop_strings(llguidance, grammar: str, stop: tuple[str, ...]) -> str:
    """The llguidance grammar of `grammar` optionally followed by one of `stop`.

    The grammar is nested unchanged (llguidance's `@name` reference to a second grammar of the request),
    so its own `start` rule and terminals need no renaming.
    """
    if not stop:
        return llguidance.LLMatcher.grammar_from_lark(grammar)
    ends = " | ".join(json.dumps(s, ensure_ascii=False) for s in stop)
    top = f"start: @program STOP_TEXT?\nSTOP_TEXT: {ends}\n"
    return json.dumps({"grammars": [{"lark_grammar": top}, {"name": "program", "lark_grammar": grammar}]})


class GrammarConstraintProcessor(LogitsProcessor):
    """Masks, per constrained row, every token that would leave the row's grammar."""

    def __init__(self, decoder: GrammarDecoder, matchers: list, prompt_length: int,
                 failed_rows: Sequence[int] = ()):
        """
        Args:
            decoder: the generator's `GrammarDecoder` (tokenizer, executor, end ids).
            matchers: one fresh llguidance `LLMatcher` per batch row (None = unconstrained row).
            prompt_length: padded prompt length; generated ids start there.
            failed_rows: rows whose grammar did not compile: they end at once (empty output).
        """
        self.decoder = decoder
        self.matchers = matchers
        self.prompt_length = prompt_length
        self.eos_ids = torch.tensor(decoder.eos_token_ids)
        self.rows = [i for i, m in enumerate(matchers) if m is not None]
        self.failed_rows = list(failed_rows)
        self.consumed = [0] * len(matchers)  # generated tokens already fed to each row's matcher
        self.done = [False] * len(matchers)
        n_words = (decoder.ll_tokenizer.vocab_size + 31) // 32
        self.bitmask = torch.zeros((len(matchers), n_words), dtype=torch.int32)

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        live = [row for row in self.rows if self._advance(row, input_ids[row, self.prompt_length:].tolist())]
        if live:
            self.decoder.fill_masks([(self.matchers[row], row) for row in live], self.bitmask)
            allowed = self._allowed(live, scores.shape[-1])
            accepting = torch.tensor([self.matchers[row].is_accepting() for row in live])
            allowed[:, self.eos_ids] = accepting.unsqueeze(-1)
            # a row with nothing allowed (cannot happen for a valid grammar) ends rather than picks at random
            allowed[~allowed.any(dim=-1), self.eos_ids[0]] = True
            scores[live] = scores[live].masked_fill(~allowed.to(scores.device), float("-inf"))
        for row in self.failed_rows + [row for row in self.rows if self.done[row]]:
            scores[row] = float("-inf")
            scores[row, self.eos_ids[0]] = 0.0  # finished or failed: only the end (transformers pads anyway)
        return scores

    def _advance(self, row: int, generated: list[int]) -> bool:
        """Feeds the row's new tokens to its matcher; False once the row has ended (EOS or an error)."""
        matcher = self.matchers[row]
        for token in generated[self.consumed[row]:]:
            if self.done[row]:
                break
            if token in self.decoder.eos_token_ids:
                self.done[row] = True
            elif not matcher.consume_token(token):
                # happens after a stop string ended the row (transformers then pads with a non-EOS id)
                log.debug("grammar matcher refused token %d on row %d: %s", token, row, matcher.get_error())
                self.done[row] = True
        self.consumed[row] = len(generated)
        return not self.done[row]

    def _allowed(self, live: list[int], vocab_size: int) -> torch.Tensor:
        """Boolean [len(live), vocab_size] of the tokens the rows' bitmasks allow (ids beyond the
        tokenizer's vocabulary, padding rows of the embedding matrix, are never allowed)."""
        bits = ((self.bitmask[live].unsqueeze(-1) >> _BITS) & 1).flatten(1).bool()
        allowed = torch.zeros((len(live), vocab_size), dtype=torch.bool)
        width = min(vocab_size, bits.shape[-1], self.decoder.ll_tokenizer.vocab_size)
        allowed[:, :width] = bits[:, :width]
        return allowed
