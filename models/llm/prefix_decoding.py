"""Enforcing a `DecodingConstraint` by prefix checks inside transformers `generate` (the HF backend's
fallback: constraints that carry a Lark `grammar` are enforced exactly by `grammar_decoding.py` whenever
llguidance is importable; this search serves constraints given only as predicates, or no llguidance).

Greedy search over a pruned vocabulary: at each step the candidates are the `top_k` highest-scoring
tokens, tried in descending score order; the first whose appended text keeps `is_valid_prefix` true wins
and every other logit is masked. End-of-sequence is a candidate only when the text so far `is_complete`.
When none of the top k qualifies, the row is ended: the output so far is returned and the caller's parser
decides. Trying candidates lazily (best first) usually costs one or two decodes per step, not k. Without
backtracking this can strand a row: with SmolLM2-135M on the KG prompts it ended every program after `A`
(no top-64 token continued `ALL`/`AVG`), which is why grammars get exact masks instead.

Because it is a logits processor, constrained and free requests share one batched `generate` call (rows
whose constraint is None pass through untouched), and the deadline's `max_time` still applies.
"""
from __future__ import annotations

from typing import Sequence

import torch
from transformers import LogitsProcessor

from models.llm.constraints import DecodingConstraint


class PrefixConstraintProcessor(LogitsProcessor):
    """Masks every token but the best one that keeps each constrained row a valid prefix."""

    def __init__(self, tokenizer, constraints: Sequence[DecodingConstraint | None], prompt_length: int,
                 eos_token_ids: Sequence[int], top_k: int = 64):
        """
        Args:
            tokenizer: decodes the generated ids of a row.
            constraints: one per batch row (None = unconstrained).
            prompt_length: padded prompt length; generated ids start there (left padding).
            eos_token_ids: the ids that end a generation (the model's generation config may list several).
            top_k: candidates tried per step before giving up on a row.
        """
        self.tokenizer = tokenizer
        self.constraints = list(constraints)
        self.prompt_length = prompt_length
        self.eos_ids = set(eos_token_ids)
        self.top_k = top_k
        if not self.eos_ids:
            raise ValueError("constrained decoding needs at least one end-of-sequence token id")

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        for row, constraint in enumerate(self.constraints):
            if constraint is None:
                continue
            generated = input_ids[row, self.prompt_length:].tolist()
            choice = self._choose(constraint, generated, scores[row])
            scores[row] = torch.full_like(scores[row], float("-inf"))
            scores[row, choice] = 0.0
        return scores

    def _choose(self, constraint: DecodingConstraint, generated: list[int], row_scores: torch.Tensor) -> int:
        fallback_eos = min(self.eos_ids)
        if generated and generated[-1] in self.eos_ids:
            return fallback_eos  # finished rows keep emitting padding; nothing to check
        text = self.tokenizer.decode(generated, skip_special_tokens=True)
        for token in torch.topk(row_scores, min(self.top_k, row_scores.shape[-1])).indices.tolist():
            if token in self.eos_ids:
                if constraint.is_complete(text):
                    return token
                continue
            extended = self.tokenizer.decode(generated + [token], skip_special_tokens=True)
            # a token that adds no text (a special token) would let the row loop forever on a valid prefix
            if extended != text and constraint.is_valid_prefix(extended):
                return token
        return fallback_eos
