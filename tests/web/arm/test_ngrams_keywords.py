"""The n-gram index (ARM §3.1) and the keyword step."""
import pytest

from models.web.arm.keywords import KeywordExtractor, lexical_keywords, parse_keywords
from models.web.arm.config import ArmConfig
from models.web.arm.ngrams import NgramIndex, informative, ngrams_of, words
from tests.stand_ins import ServesAnyAdapter


def test_words_keep_inner_symbols_of_names_and_numbers():
    assert words("P&G's margin: 6.7%, SR-71 (o'Neal).") == ["p&g's", "margin", "6.7", "sr-71", "o'neal"]


def test_ngrams_do_not_cross_lines():
    assert list(ngrams_of("a b\nc", 2)) == ["a", "b", "a b", "c"]


def test_index_holds_every_1_to_3_gram_with_document_frequency():
    index = NgramIndex(["profit margin of costco", "costco profit"], max_n=3)
    assert "profit margin of" in index and "costco" in index and "margin of costco" in index
    assert "of costco profit" not in index  # crosses objects
    assert index.counts["costco"] == 2 and index.counts["profit margin"] == 1
    assert index.has_prefix("profi") and not index.has_prefix("zebra")
    with pytest.raises(ValueError):
        NgramIndex([], max_n=0)


def test_related_shares_a_stem_and_is_informative():
    index = NgramIndex(["top photograph editing apps", "the photos of 2024", "10 photograph apps"])
    related = index.related("photographs", limit=50)
    assert "photograph" in related and "photograph editing apps" in related and "photos" in related
    assert all(informative(g) for g in related)
    assert "10 photograph" not in related and "the photos" not in related  # leading number / stop word
    assert index.related("zebra", 10) == []
    assert index.related("photographs", 1) == ["photograph"]  # most stems shared, then most frequent


def test_lexical_keywords_are_content_word_runs():
    assert lexical_keywords("which retailers have the widest range of profit margin?", 4) == [
        "retailers", "widest range", "profit margin"]
    assert lexical_keywords("is lucasfilm owned by general electric or disney?", 2) == ["lucasfilm owned",
                                                                                       "general electric"]
    assert lexical_keywords("", 4) == [] and lexical_keywords("what is the", 4) == []


def test_model_keywords_are_parsed_and_fall_back_to_lexical():
    assert parse_keywords(" Retailers | widest|| Profit margin \nmore", 5) == ["retailers", "widest",
                                                                                "profit margin"]

    class Gen(ServesAnyAdapter):
        def generate(self, requests, deadline=None):
            return ["a | b", ""]

    extractor = KeywordExtractor(ArmConfig(keywords="llm"), Gen())
    assert extractor.extract(["x?", "the profit margin?"]) == [["a", "b"], ["profit margin"]]

    class Broken(ServesAnyAdapter):
        def generate(self, requests, deadline=None):
            raise RuntimeError("boom")

    assert KeywordExtractor(ArmConfig(keywords="llm"), Broken()).extract(["the yield?"]) == [["yield"]]
    with pytest.raises(ValueError):
        KeywordExtractor(ArmConfig(keywords="llm"))
    with pytest.raises(ValueError):
        KeywordExtractor(ArmConfig(keywords="magic"))
