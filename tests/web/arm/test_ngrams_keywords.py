"""The n-gram index (ARM §3.1) and the keyword step."""
import pytest

from models.web.arm.keywords import KeywordExtractor, lexical_keywords, parse_keywords
from models.web.arm.config import ArmConfig
from models.web.arm.ngrams import NgramIndex, informative, ngrams_of, words


def test_words_keep_inner_symbols_of_names_and_numbers():
    assert words("AT&T's yield: 6.7%, I-878 (o'Neal).") == ["at&t's", "yield", "6.7", "i-878", "o'neal"]


def test_ngrams_do_not_cross_lines():
    assert list(ngrams_of("a b\nc", 2)) == ["a", "b", "a b", "c"]


def test_index_holds_every_1_to_3_gram_with_document_frequency():
    index = NgramIndex(["dividend yield of xerox", "xerox dividend"], max_n=3)
    assert "dividend yield of" in index and "xerox" in index and "yield of xerox" in index
    assert "of xerox dividend" not in index  # crosses objects
    assert index.counts["xerox"] == 2 and index.counts["dividend yield"] == 1
    assert index.has_prefix("divid") and not index.has_prefix("zebra")
    with pytest.raises(ValueError):
        NgramIndex([], max_n=0)


def test_related_shares_a_stem_and_is_informative():
    index = NgramIndex(["top celebrity beauty brands", "the celebs of 2024", "10 celebrity brands"])
    related = index.related("celebrities", limit=50)
    assert "celebrity" in related and "celebrity beauty brands" in related and "celebs" in related
    assert all(informative(g) for g in related)
    assert "10 celebrity" not in related and "the celebs" not in related  # leading number / stop word
    assert index.related("zebra", 10) == []
    assert index.related("celebrities", 1) == ["celebrity"]  # most stems shared, then most frequent


def test_lexical_keywords_are_content_word_runs():
    assert lexical_keywords("which companies have the highest level of dividend yield?", 4) == [
        "companies", "highest level", "dividend yield"]
    assert lexical_keywords("is dreamworks owned by time warner or universal?", 2) == ["dreamworks owned",
                                                                                      "time warner"]
    assert lexical_keywords("", 4) == [] and lexical_keywords("what is the", 4) == []


def test_model_keywords_are_parsed_and_fall_back_to_lexical():
    assert parse_keywords(" Companies | highest|| Dividend yield \nmore", 5) == ["companies", "highest",
                                                                                 "dividend yield"]

    class Gen:
        def generate(self, requests, deadline=None):
            return ["a | b", ""]

    extractor = KeywordExtractor(ArmConfig(keywords="llm"), Gen())
    assert extractor.extract(["x?", "the dividend yield?"]) == [["a", "b"], ["dividend yield"]]

    class Broken:
        def generate(self, requests, deadline=None):
            raise RuntimeError("boom")

    assert KeywordExtractor(ArmConfig(keywords="llm"), Broken()).extract(["the yield?"]) == [["yield"]]
    with pytest.raises(ValueError):
        KeywordExtractor(ArmConfig(keywords="llm"))
    with pytest.raises(ValueError):
        KeywordExtractor(ArmConfig(keywords="magic"))
