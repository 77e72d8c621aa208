"""Answer-in-context recall keys: the rule for sentence-long gold answers, annotated keys, the spelling rules,
whole-phrase finding. Every gold answer here is written for this test (none is CRAG's)."""
import json

import pytest

from evaluation.experiments.context_recall import answer_keys, found, load_key_annotations, sentence_keys


def test_a_sentence_gives_one_key_per_fact_it_adds_to_the_question():
    example = {"query": "which rivers are the longest in europe?",
               "answer": "the longest rivers in europe are the volga (3,530 km), the danube, and the ural river."}
    assert answer_keys(example) == [("volga",), ("3,530 km",), ("danube",), ("ural",)]  # "river": the question says "rivers"


def test_question_words_stop_words_and_lone_verb_forms_are_no_keys():
    keys = sentence_keys("the tallest tower in tokyo is the skytree, designed by nikken sekkei and opened in 2012.",
                         "what is the tallest tower in tokyo?")
    assert keys == [("skytree",), ("nikken sekkei",), ("2012",)]  # "designed", "opened": no fact on their own
    assert sentence_keys("companies with high yields are acme corp", "which companies have the highest yield?") \
        == [("acme corp",)]  # "high" / "yields" are the question's "highest" / "yield"


def test_false_premise_sentences_and_bare_yes_no_give_no_keys():
    assert answer_keys({"question_type": "false_premise", "query": "when did pluto get its rings?",
                        "answer": "pluto has no known ring system, unlike saturn."}) == []
    assert answer_keys({"answer": "no"}) == [] and answer_keys({"answer": "nan"}) == []


def test_short_answers_have_one_key_of_their_usable_spellings():
    example = {"interaction_id": "x", "answer": "Bong Joon-ho", "alt_ans": ["bong joon ho", "a five word long one",
                                                                            "yes", 7]}
    assert answer_keys(example) == [("bong joon-ho", "bong joon ho")]
    assert answer_keys({"answer": "3"}) == [("3",)] and answer_keys({"answer": "3"}, min_chars=3) == []


def test_annotated_keys_replace_the_rule(tmp_path):
    path = tmp_path / "dev.answer_keys.jsonl"
    path.write_text(json.dumps({"interaction_id": "q1", "answer_keys": ["Volga", "Danube"]}) + "\n\n")
    annotations = load_key_annotations(path)
    example = {"interaction_id": "q1", "answer": "the volga and the danube, among others.",
               "answer_keys": annotations["q1"]}
    assert answer_keys(example) == [("volga",), ("danube",)]
    path.write_text(json.dumps({"interaction_id": "q1", "answer_keys": "volga"}) + "\n")
    with pytest.raises(ValueError, match=r"answer_keys.jsonl:1: not an answer-keys row"):
        load_key_annotations(path)


def test_a_key_is_found_only_as_a_whole_phrase_in_some_text():
    keys = [("3",), ("bong joon-ho", "bong joon ho")]
    assert found(keys, ["it won 3 oscars", "Directed by Bong Joon Ho."]) == 2
    assert found(keys, ["13 wins and 3.5 stars", ""]) == 0
