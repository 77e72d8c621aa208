"""Tokens, positions and prefix-mode partial tokens of `models/kg/language/lexer.py`."""
from __future__ import annotations

import pytest

from models.kg.language.errors import KGSyntaxError
from models.kg.language.lexer import MAX_PROGRAM_CHARS, tokenize


def _types(text, partial=False):
    return [t.type for t in tokenize(text, partial)]


def test_every_token_type_with_offsets():
    text = 'ALL get_x("a b", 12, -3.5, *)[:2]["len"];\n'
    tokens = tokenize(text)
    assert [t.type for t in tokens] == [
        "name", "name", "lparen", "string", "comma", "number", "comma", "minus", "number", "comma", "star", "rparen",
        "lbracket", "colon", "number", "rbracket", "lbracket", "string", "rbracket", "sep", "sep", "eof"]
    string = tokens[3]
    assert (string.value, string.start, string.end, string.raw) == ("a b", 10, 15, '"a b"')
    assert tokens[5].value == 12 and isinstance(tokens[5].value, int)
    assert tokens[8].value == 3.5
    assert tokens[-1].start == tokens[-1].end == len(text)


def test_strings_take_either_quote_and_escapes():
    assert tokenize(r"'it\'s'")[0].value == "it's"
    assert tokenize(r'"say \"hi\" \\ now"')[0].value == 'say "hi" \\ now'
    assert tokenize('"Nott\'ham Forest"')[0].value == "Nott'ham Forest"


def test_whitespace_is_skipped_but_line_breaks_separate():
    assert _types("a \t b\r\nc") == ["name", "name", "sep", "name", "eof"]


@pytest.mark.parametrize("text, message, column", [
    ('get_x("abc', "unterminated string", 7),
    ('get_x("ab\nc")', "unterminated string", 7),
    ("get_x(1) @", "unexpected character '@'", 10),
    ("get_x(12.)", "a number may not end with '.'", 9),
])
def test_lexer_errors_point_at_the_column(text, message, column):
    with pytest.raises(KGSyntaxError) as caught:
        tokenize(text)
    assert caught.value.message == message
    assert caught.value.column == column


def test_the_length_cap_bounds_work():
    with pytest.raises(KGSyntaxError, match="longer than"):
        tokenize("a" * (MAX_PROGRAM_CHARS + 1))


def test_prefix_mode_flags_tokens_that_may_continue():
    *_, last, eof = tokenize('get_x("inc', partial=True)
    assert (last.type, last.value, last.partial) == ("string", "inc", True)
    assert tokenize("get_mo", partial=True)[0].partial
    assert not tokenize("get_mo ", partial=True)[0].partial
    number = tokenize("get_x(20.", partial=True)[2]
    assert (number.type, number.value, number.partial) == ("number", 20.0, True)
    assert not tokenize('get_x("a")', partial=True)[2].partial  # a closed string is finished
