"""Source selection (the OmniRetrieval paper, section 2.2): the embedding selector, the LLM selector, how a choice is made."""
import json

import numpy as np
import pytest

from models.config import load_config
from models.llm.prompts import PromptLibrary
from models.omni.config import SourceSelectionConfig
from models.omni.selection import (EmbeddingSourceSelector, LLMSourceSelector, choose, load_example_questions,
                                   make_source_selector, parse_source_names)
from models.sources import kg, public_data, sql, web
from tests.stand_ins import ReplyingGenerator, user_text
from tests.stand_ins import ServesAnyAdapter

DESCRIPTORS = [public_data.DESCRIPTOR, kg.DESCRIPTOR, sql.DESCRIPTOR, web.DESCRIPTOR]
NAMES = [d.name for d in DESCRIPTORS]


class WordEmbedder:
    """One axis per topic word; a text's vector counts its topic words (L2-normalised, never zero)."""

    AXES = ("oscar", "film", "count", "stock", "news", "other")

    def __init__(self, fail=False):
        self.fail, self.calls = fail, 0

    def encode(self, texts, is_query=False):
        self.calls += 1
        if self.fail:
            raise RuntimeError("embedder down")
        rows = []
        for text in texts:
            v = np.array([text.lower().count(w) for w in self.AXES[:-1]] + [0.1], dtype=float)
            rows.append(v / np.linalg.norm(v))
        return np.stack(rows)


def selector(examples, **overrides):
    config = SourceSelectionConfig(**{"min_score": 0.3, "descriptor_weight": 0.0, **overrides})
    return EmbeddingSourceSelector(config, WordEmbedder(), examples)


EXAMPLES = {"public_data": ["who won the oscar", "oscar winner"], "kg": ["film director", "film year"],
            "sql": ["count oscar films", "count films"], "web": ["news today", "news about"]}


def test_choose_keeps_the_top_k_above_the_floor_then_the_always_sources():
    config = SourceSelectionConfig(k=2, min_score=0.3, always=("web",))
    choice = choose({"public_data": 0.2, "kg": 0.9, "sql": 0.5, "web": 0.1}, NAMES, config, "embedding")
    assert choice.engaged == ("kg", "sql", "web")  # web is engaged on top of k, whatever its score
    assert choice.scores["web"] == 0.1 and choice.how == "embedding"
    # below the floor: only the best one, which is always engaged
    low = choose({"public_data": 0.1, "kg": 0.2, "sql": 0.0, "web": 0.0}, NAMES, config, "embedding")
    assert low.engaged == ("kg", "web")
    # ties keep the profile's order
    tie = choose({n: 0.5 for n in NAMES}, NAMES, SourceSelectionConfig(k=2, always=()), "embedding")
    assert tie.engaged == ("public_data", "kg")
    assert tie.as_trace() == {"how": "embedding", "engaged": ["public_data", "kg"],
                              "scores": {n: 0.5 for n in NAMES}}


def test_the_embedding_selector_engages_the_sources_whose_examples_are_nearest():
    s = selector(EXAMPLES, k=1, always=())
    picks = s.select(["which film year", "count the films", "any news"], DESCRIPTORS)
    assert [p.engaged for p in picks] == [("kg",), ("sql",), ("web",)]
    assert picks[0].scores["kg"] > picks[0].scores["web"]


def test_a_source_without_examples_is_scored_by_its_descriptor():
    s = selector({"kg": ["film"]}, k=4, always=(), descriptor_weight=0.25)
    scores = s.scores("film news", DESCRIPTORS)
    e = s.embedder
    q = e.encode(["film news"])[0]
    knows = {d.name: float(e.encode([d.knows])[0] @ q) for d in DESCRIPTORS}
    assert scores["web"] == pytest.approx(knows["web"])  # no examples: the descriptor alone
    example = float(e.encode(["film"])[0] @ q)
    assert scores["kg"] == pytest.approx(0.75 * example + 0.25 * knows["kg"])
    # the descriptors are embedded once, not per question
    calls = e.calls
    s.scores("another film", DESCRIPTORS)
    assert e.calls == calls + 1


def test_a_failing_embedder_engages_every_source():
    s = EmbeddingSourceSelector(SourceSelectionConfig(), WordEmbedder(fail=True), EXAMPLES)
    choice = s.select(["anything"], DESCRIPTORS)[0]
    assert choice.engaged == tuple(NAMES) and choice.how.startswith("failed: every source")


def test_parse_source_names_reads_known_names_in_order_once():
    assert parse_source_names("kg, web, kg", NAMES) == ["kg", "web"]
    assert parse_source_names("Public data then SQL.", NAMES) == ["public_data", "sql"]
    assert parse_source_names("the atlas", NAMES) == []
    assert parse_source_names(None, NAMES) == []


def test_the_llm_selector_reads_the_catalog_and_falls_back_when_it_names_nothing():
    generator = ReplyingGenerator(lambda r: "sql, public_data" if "how many" in user_text(r) else "no idea")
    fallback = selector(EXAMPLES, k=1, always=())
    s = LLMSourceSelector(SourceSelectionConfig(k=2, always=("web",)), generator, PromptLibrary(), fallback)
    s.warm_up()  # start-up embeds the fallback's pools, so a batch does not
    assert fallback._pools is not None and set(fallback._pools) == set(EXAMPLES)
    named, unparsed = s.select(["how many oscars did x win", "film year of x"], DESCRIPTORS)
    assert named.engaged == ("sql", "public_data", "web") and named.how == "llm"
    assert named.scores["sql"] > named.scores["public_data"] > named.scores["kg"] == 0.0
    assert unparsed.how == "llm, unparsed: embedding" and unparsed.engaged == ("kg",)
    # the model saw every descriptor and the question
    system = generator.requests[0].messages[0]["content"]
    assert all(f"- {d.name}: {d.knows}" in system for d in DESCRIPTORS)
    assert "how many oscars did x win" in user_text(generator.requests[0])


def test_the_llm_selector_without_a_fallback_engages_every_source_on_a_failed_call():
    class Broken(ServesAnyAdapter):
        def generate(self, requests, deadline=None):
            raise RuntimeError("engine down")

    s = LLMSourceSelector(SourceSelectionConfig(), Broken(), PromptLibrary())
    choice = s.select(["q"], DESCRIPTORS)[0]
    assert choice.engaged == tuple(NAMES) and "RuntimeError" in choice.how


def test_example_files_are_read_and_bad_ones_named(tmp_path):
    good = tmp_path / "good.jsonl"
    good.write_text(json.dumps({"query": "a?"}) + "\n\n" + json.dumps({"question": "b?"}) + "\n")
    assert load_example_questions([str(good)]) == ["a?", "b?"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    with pytest.raises(ValueError, match="bad.jsonl:1: not JSON"):
        load_example_questions([str(bad)])
    empty = tmp_path / "empty.jsonl"
    empty.write_text(json.dumps({"answer": "x"}) + "\n")
    with pytest.raises(ValueError, match="empty.jsonl:1: no \"query\""):
        load_example_questions([str(empty)])
    with pytest.raises(ValueError, match="cannot read"):
        load_example_questions([str(tmp_path / "missing.jsonl")])


def test_the_profiles_example_files_exist_and_hold_questions():
    config = load_config("cpu").omni.selection
    for name, paths in config.examples.items():
        assert len(load_example_questions(paths)) >= 25, name


def test_make_source_selector_checks_its_kind_and_parts():
    with pytest.raises(ValueError, match="unknown omni.selection.kind"):
        make_source_selector(SourceSelectionConfig(kind="oracle"))
    with pytest.raises(ValueError, match="needs the embedder"):
        make_source_selector(SourceSelectionConfig(kind="embedding"))
    with pytest.raises(ValueError, match="needs the generator"):
        make_source_selector(SourceSelectionConfig(kind="llm"))
    llm = make_source_selector(SourceSelectionConfig(kind="llm"), generator=object(), prompts=PromptLibrary())
    assert isinstance(llm, LLMSourceSelector) and llm.fallback is None


def test_with_minilm_aggregate_and_kg_questions_engage_their_sources(cpu_embedder):
    """The CPU profile's selector on questions of none of its example pools."""
    s = EmbeddingSourceSelector.from_config(load_config("cpu").omni.selection, cpu_embedder)
    sql_question, kg_question, open_question = s.select(
        ["how many best picture nominations did the film mank receive at the academy awards",
         "who is the lead singer of the band radiohead",
         "what is the tallest mountain in south america"], DESCRIPTORS)
    assert {"sql", "public_data"} & set(sql_question.engaged[:2]), sql_question
    assert "kg" in kg_question.engaged, kg_question
    assert open_question.engaged[0] == "web", open_question
