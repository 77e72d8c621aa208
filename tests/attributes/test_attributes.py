"""Static/dynamic predictor: labelled data, the embedding classifier, LLM self-consistency, policies."""
from __future__ import annotations

import json
from dataclasses import replace

import pytest

from models.attributes import (AttributeConfig, AttributeDataError, AttributePredictor, LLMAttributePredictor,
                               binary_label, load_attribute_labels, load_or_train)
from models.attributes.llm import parse_vote, vote
from models import crag_data
from tests.packaged import crag_file_if_present
from tests.stand_ins import ReplyingGenerator, user_text

EXAMPLES = [("who wrote hamlet?", "static"), ("what year did ww2 end?", "static"), ("who painted guernica?", "static"),
            ("what is the stock price of tsla today?", "dynamic"), ("who leads the nba standings now?", "dynamic"),
            ("what is the current fed rate?", "dynamic")]


@pytest.mark.parametrize("value, label", [("static", "static"), ("slow-changing", "dynamic"), ("Real-Time", "dynamic"),
                                          ("fast-changing", "dynamic"), ("", None), (None, None), ("stable", None)])
def test_binary_label(value, label):
    assert binary_label(value) == label


def test_bundled_training_data_is_usable_and_never_contains_evaluation_questions():
    texts, labels = load_attribute_labels(AttributeConfig().training_data)
    assert len(texts) >= 300 and set(labels) == {"static", "dynamic"}
    assert labels.count("dynamic") >= 100
    sample, _ = load_attribute_labels(["data/sample/crag_sample.jsonl"])
    assert not {t.lower() for t in sample} & {t.lower() for t in texts}
    dev_file = crag_file_if_present(crag_data.DEV_FILE)  # CRAG's dev questions, read here, never copied
    if dev_file is not None:
        from evaluation.data import load_examples

        dev = {" ".join(e["query"].lower().split()) for e in load_examples(dev_file)}
        assert len(dev) == 10 and not dev & {" ".join(t.lower().split()) for t in texts}


def test_loader_skips_unlabelled_rows_and_rejects_bad_files(tmp_path):
    good = tmp_path / "a.jsonl"
    good.write_text("\n".join(json.dumps(r) for r in [
        {"query": "q1", "static_or_dynamic": "real-time"}, {"query": "q1", "static_or_dynamic": "static"},
        {"query": "q2"}, {"query": "", "static_or_dynamic": "static"}, {"query": "q3", "static_or_dynamic": "static"}]))
    assert load_attribute_labels([good]) == (["q1", "q3"], ["dynamic", "static"])
    with pytest.raises(AttributeDataError, match="does not exist"):
        load_attribute_labels([tmp_path / "missing.jsonl"])
    (tmp_path / "bad.jsonl").write_text("{not json\n")
    with pytest.raises(AttributeDataError, match="bad.jsonl:1"):
        load_attribute_labels([tmp_path / "bad.jsonl"])
    (tmp_path / "empty.jsonl").write_text(json.dumps({"query": "q"}) + "\n")
    with pytest.raises(AttributeDataError, match="no labelled questions"):
        load_attribute_labels([tmp_path / "empty.jsonl"])


def test_classifier_trains_caches_and_predicts(cpu_embedder, tmp_path):
    config = AttributeConfig(enabled=True, classifier_path=str(tmp_path / "sd.joblib"))
    predictor = AttributePredictor.from_config(config, embedder=cpu_embedder)
    assert (tmp_path / "sd.joblib").exists()
    assert predictor.predict(["what is the current stock price of microsoft?", "who wrote the novel moby dick?",
                              "who is leading the la liga table right now?", "when did the roman empire fall?"]) == [
        "dynamic", "static", "dynamic", "static"]
    assert load_or_train(config, cpu_embedder).trained_on == predictor.classifier.trained_on  # from the cache


def test_llm_predictor_votes_over_completions_sampled_from_one_prompt():
    replies = iter(["dynamic", "Static.", "static", "I think it is static", "no idea"])
    generator = ReplyingGenerator(lambda request: next(replies))
    config = AttributeConfig(method="llm", few_shot=2, samples=5, temperature=0.8)
    predictor = LLMAttributePredictor(config, generator, EXAMPLES + [("who wrote hamlet?", "static")])
    assert predictor.predict(["who wrote hamlet?"]) == ["static"]
    [request] = generator.requests  # one request, its five completions are the votes
    assert request.n == 5 and request.temperature == 0.8
    assert "Question: who wrote hamlet?" not in request.messages[0]["content"]  # never its own example
    assert user_text(request).startswith("Question: who wrote hamlet?")
    again = LLMAttributePredictor(config, ReplyingGenerator(lambda r: "static"), EXAMPLES + [("who wrote hamlet?", "static")])
    again.predict(["who wrote hamlet?"])
    assert again.generator.requests[0].messages == request.messages  # seeded: the same question, the same prompt


def test_votes_and_failures_lean_dynamic():
    assert parse_vote("Static or dynamic: STATIC") == "static" and parse_vote("unsure") is None
    assert vote(["static", "dynamic"]) == "dynamic" and vote([None, None]) == "dynamic"
    assert vote(["static", None, "static", "dynamic"]) == "static"

    def broken(request):
        raise RuntimeError("down")
    predictor = LLMAttributePredictor(AttributeConfig(method="llm"), ReplyingGenerator(broken), EXAMPLES)
    assert predictor.predict(["a", "b"]) == ["dynamic", "dynamic"]
    with pytest.raises(ValueError, match="both classes"):
        LLMAttributePredictor(AttributeConfig(method="llm"), ReplyingGenerator(broken), EXAMPLES[:3])


@pytest.mark.parametrize("policy, label, kg, action", [
    ("idk", "dynamic", False, "idk"), ("idk", "dynamic", True, "answer"), ("idk", "static", False, "answer"),
    ("verify", "dynamic", False, "verify"), ("none", "dynamic", False, "answer")])
def test_actions(policy, label, kg, action):
    predictor = AttributePredictor(replace(AttributeConfig(method="llm"), dynamic_policy=policy),
                                   llm=LLMAttributePredictor(AttributeConfig(), ReplyingGenerator(str), EXAMPLES))
    assert predictor.action(label, has_kg_evidence=kg) == action


def test_config_is_checked():
    with pytest.raises(ValueError, match="method"):
        AttributePredictor(AttributeConfig(method="svm"))
    with pytest.raises(ValueError, match="dynamic_policy"):
        AttributePredictor(AttributeConfig(dynamic_policy="refuse"))
    with pytest.raises(ValueError, match="needs a classifier"):
        AttributePredictor(AttributeConfig())
