"""The grader's 75-token trim: exact with the real tokenizer, conservative without it."""
import bz2
import json
import re

import pytest

from models import crag_data
from models.paths import ModelNotFoundError
from models.trim import RuleTrimmer, Trimmer, load_grader_trim
from tests.packaged import crag_file

LONG_ANSWER = ("The Golden State Warriors beat the Los Angeles Lakers 123 to 109 on October 18, 2022, at the Chase "
               "Center in San Francisco, where Stephen Curry scored 33 points and the team received its 2022 "
               "championship rings before the game, which opened the NBA season; Andrew Wiggins added 20 points "
               "and Jordan Poole 12, while LeBron James led the Lakers with 31 points and 14 rebounds.")


@pytest.fixture(scope="module")
def real():
    from tokenizers import Tokenizer

    return Tokenizer.from_file(str(crag_file(crag_data.TOKENIZER) / "tokenizer.json"))


def n_tokens(tokenizer, text: str) -> int:
    return len(tokenizer.encode(text).ids) - 1  # minus BOS


def test_exact_trim_keeps_75_tokens_of_a_long_answer(real):
    trim = load_grader_trim(crag_data.GRADER_TOKENIZER)
    ids = real.encode(LONG_ANSWER).ids
    assert ids[0] == 1 and len(ids) - 1 > 75
    expected = real.decode(ids[1:76]).strip()
    trimmed = trim(LONG_ANSWER)
    assert trimmed == expected
    assert LONG_ANSWER.startswith(trimmed) and len(trimmed) < len(LONG_ANSWER)
    assert n_tokens(real, trimmed) == 75
    assert "llama2-tokenizer" in trim.name and isinstance(trim, Trimmer)


def test_exact_trim_leaves_short_answers_alone_and_is_loaded_once(real):
    trim = load_grader_trim(crag_data.GRADER_TOKENIZER)
    assert trim("  Canberra \n") == "Canberra"
    assert trim("") == ""
    assert load_grader_trim(crag_data.GRADER_TOKENIZER) is trim


def test_rule_trim_is_conservative_on_the_long_answer(real):
    trimmed = RuleTrimmer()(LONG_ANSWER)
    assert 0 < len(trimmed) < len(load_grader_trim(crag_data.GRADER_TOKENIZER)(LONG_ANSWER))
    assert n_tokens(real, trimmed) <= 75


def test_rule_trim_never_keeps_more_than_75_real_tokens_on_dev_prose(real):
    texts = []
    with bz2.open(crag_file(crag_data.DEV_FILE), "rt") as handle:
        for line in handle:
            row = json.loads(line)
            texts.append(row["answer"])
            texts += [re.sub(r"\s+", " ", page["page_snippet"]) for page in row["search_results"]]
    long_texts = [t for t in texts if n_tokens(real, t) > 75]
    assert len(long_texts) >= 20
    exact, rule = load_grader_trim(crag_data.GRADER_TOKENIZER), RuleTrimmer()
    kept = []
    for text in texts:
        assert n_tokens(real, rule(text)) <= 75, text
        kept.append(len(rule(text)) / max(1, len(exact(text))))
    assert sum(kept) / len(kept) > 0.6  # conservative, but not uselessly so


def test_rule_trim_without_tokenizer():
    trim = load_grader_trim(None)
    assert isinstance(trim, RuleTrimmer) and "rule" in trim.name
    assert trim("  the eiffel tower ") == "the eiffel tower"
    assert trim("word " * 200).split() == ["word"] * 75  # one common short word is one token
    assert trim("1" * 200) == "1" * 74  # "▁" + one token per digit
    assert trim("é" * 100) == "é" * 37  # non-ASCII priced at its UTF-8 bytes (byte fallback)


def test_missing_tokenizer_dir_is_a_clear_error(tmp_path):
    with pytest.raises(ModelNotFoundError, match="grader tokenizer"):
        load_grader_trim(str(tmp_path))
