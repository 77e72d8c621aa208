"""The ARM rewrite grammar under both structured-output engines vLLM can use (xgrammar, llguidance; the pinned
CPU wheels over a byte vocabulary, tests/grammar_engines.py): what the g4dn profile would send."""
from models.web.arm.alignment import NgramLanguage
from models.web.arm.ngrams import NgramIndex
from tests.grammar_engines import LLGuidanceEngine, XGrammarEngine

PAGES = ["P&G Co profit margin 18.4 percent", "Ansel Adams's Yosemite Prints", 'the "quoted" sr-71 blackbird\\jet']


def test_both_engines_accept_exactly_the_language():
    index = NgramIndex(PAGES)
    # index n-grams never hold quotes or backslashes (ngrams.words), but the grammar escapes them anyway
    language = NgramLanguage(index.sorted + ['say "hi"\\now'], per_keyword=3)
    good = ["p&g", "profit margin; ansel adams's yosemite", "the quoted sr-71; 18.4; yosemite prints", 'say "hi"\\now']
    bad = ["", "p&g; ", "profit margins", "p&g; p&g; p&g; p&g", "invented"]
    for engine in (XGrammarEngine({"arm": language.grammar}), LLGuidanceEngine({"arm": language.grammar})):
        assert all(engine.accepts("arm", text) for text in good), type(engine).__name__
        assert not any(engine.accepts("arm", text) for text in bad), type(engine).__name__
        assert all(language.is_complete(t) for t in good) and not any(language.is_complete(t) for t in bad)
