"""Entity matching: exact, normalised, containment, spelling, then embeddings; nothing rather than a guess."""
from __future__ import annotations

import numpy as np

from models.kg.apis.matching import EntityMatcher

MOVIES = ["Inception: The Cobol Job", "Inception", "The Inception of Time"]
COMPANIES = ["Apple Hospitality REIT Inc. Common Shares", "Apple Inc. Common Stock", "Pineapple Energy Inc."]


def test_stages_in_order():
    matcher = EntityMatcher()
    assert matcher.pick("Inception", MOVIES) == ["Inception"]
    assert matcher.pick("inception!", MOVIES) == ["Inception"]
    assert matcher.pick("apple", COMPANIES) == ["Apple Inc. Common Stock"]  # closest length among containments
    assert matcher.pick("incepton", MOVIES) == ["Inception"]  # spelling
    assert matcher.pick("interstellar", MOVIES) == []
    assert matcher.pick("", MOVIES) == [] and matcher.pick("x", []) == []


def test_records_with_several_names():
    records = [{"title": "Parasite", "original_title": "기생충"}, {"title": "Parasites", "original_title": ""}]
    names = lambda r: (r["title"], r["original_title"])  # noqa: E731
    assert EntityMatcher().pick("기생충", records, names) == [records[0]]


def test_all_keeps_every_textual_match():
    films = ["The Maze Runner", "Maze Runner: The Scorch Trials", "The Runner", "Maze Runner: The Death Cure"]
    assert EntityMatcher().pick("maze runner", films, all_matches=True) == [  # closest names first
        "The Maze Runner", "Maze Runner: The Death Cure", "Maze Runner: The Scorch Trials"]


class _Embedder:
    """Two-dimensional toy vectors: 'stone' words point one way, the rest the other."""

    def encode(self, texts, is_query=True):
        vectors = np.array([[1.0, 0.2] if "stone" in t.lower() else [0.1, 1.0] for t in texts])
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_embedding_is_the_last_resort():
    candidates = ["Harry Potter and the Philosopher's Stone", "Harry Potter and the Chamber of Secrets"]
    query = "the sorcerer's stone"
    assert EntityMatcher().pick(query, candidates) == []
    assert EntityMatcher(_Embedder(), 0.9).pick(query, candidates) == [candidates[0]]
    assert EntityMatcher(_Embedder(), 1.01).pick(query, candidates) == []  # below the threshold: nothing


def test_a_failing_embedder_only_loses_its_stage():
    class Broken:
        def encode(self, texts, is_query=True):
            raise RuntimeError("no GPU")

    assert EntityMatcher(Broken()).pick("zzz", ["Inception"]) == []
