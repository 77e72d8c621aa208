"""Answer-in-context recall keys: the dev questions' entity keys, the spelling rules, whole-phrase finding."""
from evaluation.context_recall import answer_keys, found


def test_known_dev_questions_have_one_key_per_entity():
    assert answer_keys({"interaction_id": "6a9a6e0f-xxxx", "answer": "a long sentence"}) == [
        ("jennifer aniston",), ("kim kardashian",), ("selena gomez",)]


def test_other_questions_have_one_key_of_their_usable_spellings():
    example = {"interaction_id": "x", "answer": "Bong Joon-ho", "alt_ans": ["bong joon ho", "a five word long one",
                                                                            "yes", 7]}
    assert answer_keys(example) == [("bong joon-ho", "bong joon ho")]
    assert answer_keys({"answer": "no"}) == []
    assert answer_keys({"answer": "3"}) == [("3",)] and answer_keys({"answer": "3"}, min_chars=3) == []


def test_a_key_is_found_only_as_a_whole_phrase_in_some_text():
    keys = [("3",), ("bong joon-ho", "bong joon ho")]
    assert found(keys, ["it won 3 oscars", "Directed by Bong Joon Ho."]) == 2
    assert found(keys, ["13 wins and 3.5 stars", ""]) == 0
