"""Shared test support for the KG language tests: the example pool, Hypothesis strategies for program
strings (random characters, token soup, mutated pool programs), and a stand-in embedder.

Mutations of real programs (insert, delete or replace a character or a whole token) stay close to the
language, so they reach deep parser states that random text never does.
"""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
from hypothesis import strategies as st

from models.text import kg_match_key

POOL_PATH = Path(__file__).resolve().parents[2] / "data" / "kg" / "icl_pool.jsonl"
POOL = [json.loads(line) for line in POOL_PATH.read_text(encoding="utf-8").splitlines() if line.strip()]
PROGRAMS = [record["program"] for record in POOL]
DOMAINS = ("movie", "music", "finance", "sports", "open")

_CHARS = list("()[],:*-+\"'\\;\n \tabcdegilmnoprstvxyz_0123456789.@{}#$é")
_TOKENS = ["get_movie", "get_person", "get_open", "get_stock_price", "get_nba_on_date", "get_song", "(", ")", "[",
           "]", ", ", ":", "*", "-", '"x"', "'y'", "12", "3.5", "None", "ALL ", "AVG ", "sort", "eq", "neq", "ge",
           "le", '["len"]', "[:2]", '["name"]', "\n", ";", " ", "true", "false", '"', "'", "\\", "len", "year"]


def _mutate(text: str, edits: list[tuple[int, str, str]]) -> str:
    for position, action, piece in edits:
        at = position % (len(text) + 1)
        if action == "insert":
            text = text[:at] + piece + text[at:]
        elif action == "delete":
            text = text[:at] + text[at + len(piece):]
        else:
            text = text[:at] + piece + text[at + 1:]
    return text


_EDIT = st.tuples(st.integers(0, 400), st.sampled_from(["insert", "delete", "replace"]),
                  st.sampled_from(_CHARS + _TOKENS))
random_text = st.text(alphabet=st.sampled_from(_CHARS), max_size=80)
token_soup = st.lists(st.sampled_from(_TOKENS), max_size=30).map("".join)
mutated_programs = st.builds(_mutate, st.sampled_from(PROGRAMS), st.lists(_EDIT, min_size=1, max_size=4))
program_texts = st.one_of(random_text, token_soup, mutated_programs)


class BagOfWords:
    """A deterministic stand-in embedder: normalised word-hash counts."""

    def encode(self, texts, is_query=True):
        vectors = np.zeros((len(texts), 64))
        for row, text in enumerate(texts):
            for word in kg_match_key(text).split():
                vectors[row, sum(map(ord, word)) % 64] += 1
        return vectors / np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-9)
