"""`<DOC>` context: format, order, token budget."""

import pytest

from models.types import Chunk
from models.web import format_context
from models import crag_data
from tests.packaged import crag_file


def test_format_and_order(words):
    chunks = [Chunk("public fact", "public", "public"), Chunk("", "x"), Chunk("  "), Chunk("web text", "u")]
    assert format_context(chunks, words, 100) == "<DOC>\npublic fact\n</DOC>\n<DOC>\nweb text\n</DOC>\n"


def test_nothing_to_show(words):
    assert format_context([], words, 100) == ""
    assert format_context([Chunk(""), Chunk(" \n")], words, 100) == ""
    assert format_context([Chunk("text")], words, 0) == ""


def test_truncation_keeps_closing_tag_and_budget(words):
    chunks = [Chunk("a " * 10), Chunk("b " * 10), Chunk("c " * 10)]
    # each document costs 10 words + 2 tags (the tags are single whitespace tokens)
    context = format_context(chunks, words, 30)
    assert words.count_tokens(context) <= 30
    assert context.endswith("</DOC>\n")
    assert context.count("<DOC>") == context.count("</DOC>") == 3
    assert context.split("<DOC>")[3].split() == ["c"] * 4 + ["</DOC>"]  # 30 - 2 * 12 - 2 tags


def test_document_that_cannot_fit_even_cut_is_dropped(words):
    context = format_context([Chunk("a " * 10), Chunk("b " * 10)], words, 13)
    assert context == "<DOC>\n" + " ".join(["a"] * 10) + "\n</DOC>\n"


class LlamaTokens:
    """The grader's Llama tokenizer through the `tokenizers` library (transformers' import is slow)."""

    def __init__(self, path):
        from tokenizers import Tokenizer
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))

    def count_tokens(self, text):
        return len(self.tokenizer.encode(text, add_special_tokens=False).ids)

    def truncate_tokens(self, text, max_tokens):
        return self.tokenizer.decode(self.tokenizer.encode(text, add_special_tokens=False).ids[:max_tokens])


@pytest.mark.parametrize("budget", [7, 50, 333, 1000])
def test_budget_in_real_llama_tokens(budget):
    counter = LlamaTokens(crag_file(crag_data.TOKENIZER))
    chunks = [Chunk(f"Document {i}: the Eiffel Tower is 330 m tall; café, naïve, 東京. " * 8) for i in range(10)]
    context = format_context(chunks, counter, budget)
    assert counter.count_tokens(context) <= budget
    assert context == "" or (context.startswith("<DOC>\n") and context.endswith("\n</DOC>\n"))
    if budget >= 333:
        assert counter.count_tokens(context) > budget - 40  # the budget is used, not wasted
