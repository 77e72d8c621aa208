"""The ARM rewrite grammar under both structured-output engines vLLM can use (xgrammar, llguidance; the pinned
CPU wheels over a byte vocabulary, tests/grammar_engines.py): what the g4dn profile would send."""
from models.web.arm.alignment import NgramLanguage
from models.web.arm.ngrams import NgramIndex
from tests.grammar_engines import LLGuidanceEngine, XGrammarEngine

PAGES = ["AT&T Inc dividend yield 6.5 percent", "Selena Gomez's Rare Beauty", 'the "quoted" i-878 highway\\road']


def test_both_engines_accept_exactly_the_language():
    index = NgramIndex(PAGES)
    # index n-grams never hold quotes or backslashes (ngrams.words), but the grammar escapes them anyway
    language = NgramLanguage(index.sorted + ['say "hi"\\now'], per_keyword=3)
    good = ["at&t", "dividend yield; selena gomez's rare", "the quoted i-878; 6.5; rare beauty", 'say "hi"\\now']
    bad = ["", "at&t; ", "dividend yields", "at&t; at&t; at&t; at&t", "invented"]
    for engine in (XGrammarEngine({"arm": language.grammar}), LLGuidanceEngine({"arm": language.grammar})):
        assert all(engine.accepts("arm", text) for text in good), type(engine).__name__
        assert not any(engine.accepts("arm", text) for text in bad), type(engine).__name__
        assert all(language.is_complete(t) for t in good) and not any(language.is_complete(t) for t in bad)
