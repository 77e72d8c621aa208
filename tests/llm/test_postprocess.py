"""Table-driven cases for `clean_answer` / `is_idk`."""
import pytest

from models.llm.postprocess import clean_answer, is_idk
from models.types import IDK, INVALID

CASES = [
    # (raw generation, expected answer)
    ("Canberra", "Canberra"),
    ("  The Eiffel Tower.  ", "The Eiffel Tower."),
    ("Jean Dujardin", "Jean Dujardin"),  # case kept (db3 lowercased everything)
    ("Answer: Canberra", "Canberra"),
    ("answer:\n\nBong Joon Ho", "Bong Joon Ho"),
    ("assistant\n\nSouth Africa", "South Africa"),
    ("<|start_header_id|>assistant<|end_header_id|>\n\n1975<|eot_id|>", "1975"),
    ("Canberra<|im_end|>\n<|im_start|>user\nAnd the capital of France?", "Canberra"),
    ("<|im_start|>assistant\n182.63<|im_end|>", "182.63"),
    ("\"the matrix\"", "the matrix"),
    ("France, Germany,\n  Italy, Austria and Liechtenstein", "France, Germany, Italy, Austria and Liechtenstein"),
    ("Answer Me", "Answer Me"),
    ("The Matrix (1999) Question: which movie came out earlier? Answer: The Matrix", "The Matrix (1999)"),
    ("Canberra\n\nAustralia's capital was chosen in 1908 as a compromise.", "Canberra"),
    ("Answer: Canberra\nQuery: what is the capital of France?", "Canberra"),  # a title that starts with a label word is not a label
    ("a-ha", "a-ha"),
    # every phrasing of "I don't know"
    ("i don't know", IDK),
    ("I don't know.", IDK),
    ("I don\u2019t know", IDK),
    ("I don`t know", IDK),
    ("I dont know", IDK),
    ("I do not know the answer.", IDK),
    ("I'm not sure about that.", IDK),
    ("It cannot be determined from the context.", IDK),
    ("The answer can't be determined.", IDK),
    ("There is no information about this in the context.", IDK),
    ("The context does not provide enough information. I don't know.", IDK),
    ("", IDK),
    ("   \n ", IDK),
    (None, IDK),
    ("<|eot_id|>", IDK),
    # false premises
    ("invalid question", INVALID),
    ("Invalid question.", INVALID),
    ("This is an invalid question: Taylor Swift never released a rap album.", INVALID),
    ("The question is based on a false premise.", INVALID),
    # both: "i don't know" wins (costs 0 when wrong; a wrong "invalid question" costs 1)
    ("Invalid question, or I don't know.", IDK),
]


@pytest.mark.parametrize("raw, expected", CASES)
def test_clean_answer(raw, expected):
    assert clean_answer(raw) == expected


def test_grader_trim_applies_to_answers_only():
    calls = []

    def trim(text):
        calls.append(text)
        return text[:5]

    assert clean_answer("Canberra is the capital", trim) == "Canbe"
    assert clean_answer("I don't know", trim) == IDK
    assert clean_answer("invalid question", trim) == INVALID
    assert calls == ["Canberra is the capital"]


def test_trim_to_nothing_is_idk():
    assert clean_answer("Canberra", lambda text: "  ") == IDK


@pytest.mark.parametrize("text, expected", [
    ("i don't know", True), ("I Don\u2019t Know", True), ("", True), (None, True), ("not sure", True),
    ("Canberra", False), ("invalid question", False), ("knowledge graph", False),
])
def test_is_idk(text, expected):
    assert is_idk(text) is expected
