"""The SQL source: typed tables in the store, the schema descriptor, the grammar, the checks, the writer
and the source in the pipeline, with a stand-in model that writes given statements."""
import sqlite3

import llguidance
import pytest
from lark import Lark
from lark.exceptions import LarkError

from models.config import load_config
from models.llm.prompts import PromptLibrary
from models.paths import resolve_repo_path
from models.pipeline import Pipeline
from models.parts import Parts
from models.public_data import PublicData
from models.public_data.sql.checks import as_option, direct_value, options, problems, read_statement, repair
from models.public_data.sql.config import SQLConfig
from models.public_data.sql.grammar import question_numbers, question_spans, sql_grammar
from models.public_data.sql.guard import ReadOnlySQL
from models.public_data.sql.schema import describe
from models.public_data.sql.writer import TABLE_GROUPS, SQLWriter, asks_aggregate, load_examples
from models.public_data.tables import TABLE_NAMES
from models.sources.sql import SQLSource
from tests.test_pipeline import FakeGenerator, FakeRouter, FakeWeb, queries

EXAMPLES = load_examples(resolve_repo_path(SQLConfig().examples))


@pytest.fixture(scope="module")
def schema(store_path):
    return describe(store_path)


@pytest.fixture(scope="module")
def guard(store_path):
    return ReadOnlySQL(store_path, TABLE_NAMES)


def ask(guard, question, statement):
    result = guard.run(statement)
    assert result.ok, result.error
    return result, problems(question, read_statement(statement), result, guard)


# ---------------------------------------------------------------- the store's typed tables and their descriptor
def test_every_csv_row_is_also_a_typed_row(store_path):
    with sqlite3.connect(store_path) as db:
        count = dict(db.execute("SELECT source, count(*) FROM records GROUP BY source").fetchall())
        assert db.execute("SELECT count(*) FROM oscar_nominations").fetchone()[0] == count["oscar"]
        assert db.execute("SELECT count(*) FROM grammy_nominations").fetchone()[0] == count["grammy"]
        assert db.execute("SELECT count(*) FROM movies").fetchone()[0] == count["movie"]
        assert db.execute("SELECT count(*) FROM companies").fetchone()[0] == count["finance"]
        # a credit carries its film's figures, so "the average runtime of X's films" needs no join
        assert db.execute("SELECT runtime, job FROM movie_credits WHERE person = 'christopher nolan' "
                          "AND title = 'inception'").fetchone() == (148.0, "director")
        # the Grammy ceremony year is 1958 + its number; text compares without case
        assert db.execute("SELECT ceremony_year, release_year, ceremony FROM grammy_nominations "
                          "WHERE nominee = 'FEARLESS'").fetchone() == (2010, 2009, 52)


def test_the_descriptor_is_read_from_the_database(schema):
    assert [t.name for t in schema.tables] == list(TABLE_NAMES)
    text = schema.text(("movie_credits",))
    assert text.startswith("movie_credits: one row per director or lead actor") and "oscar" not in text
    assert "job TEXT (director or actor; e.g. 'director', 'actor')" in text
    assert schema.categorical()["movie_credits.job"] == ("director", "actor")
    assert "movie_credits.person" not in schema.categorical()  # many values: the question's words only
    assert len(schema.text()) < 4000  # short enough for a prompt


# ---------------------------------------------------------------- the grammar
@pytest.mark.parametrize("example", EXAMPLES, ids=lambda e: e.question[:40])
def test_every_pool_example_is_in_its_own_grammar_and_runs(schema, guard, example):
    grammar = sql_grammar(schema, TABLE_GROUPS[example.domain], example.question, schema.categorical())
    Lark(grammar, parser="earley").parse(example.sql)
    result = guard.run(example.sql)
    assert result.ok and result.rows, (example.sql, result.error)
    assert read_statement(example.sql) is not None


def test_text_literals_come_from_the_question_or_the_column(schema):
    parser = Lark(sql_grammar(schema, TABLE_GROUPS["movie"], "how many films did david fincher direct",
                              schema.categorical()), parser="earley")
    parser.parse("SELECT COUNT(*) FROM movie_credits WHERE person LIKE '%david fincher%' AND job = 'director'")
    for invented in ("SELECT COUNT(*) FROM movie_credits WHERE person = 'steven spielberg'",
                     "SELECT COUNT(*) FROM movie_credits WHERE title = 'fight club'",
                     "SELECT COUNT(*) FROM companies",  # not a table of the movie group
                     "SELECT COUNT(*) FROM movie_credits; DROP TABLE movies",
                     "SELECT revenue FROM movie_genres"):  # not a column of that table
        with pytest.raises(LarkError):
            parser.parse(invented)


def test_llguidance_compiles_the_grammar(schema):
    grammar = sql_grammar(schema, TABLE_GROUPS["movie"], "which film is longer, the king's speech or hugo?",
                          schema.categorical())
    assert llguidance.LLMatcher.validate_grammar(llguidance.grammar_from("lark", grammar)) == ""


def test_numbers_come_from_the_question_and_flags_take_0_or_1(schema):
    assert question_numbers("how many companies are worth more than 2 trillion dollars") == ["2000000000000"]
    assert question_numbers("how many crime movies came out in the 1970s before 2012") == ["2012", "1979", "1970"]
    parser = Lark(sql_grammar(schema, TABLE_GROUPS["movie"], "how many oscars did hugo win at the 2012 oscars",
                              schema.categorical()), parser="earley")
    parser.parse("SELECT COUNT(*) FROM oscar_nominations WHERE film = 'hugo' AND ceremony_year = 2012 AND won = 1")
    for invented in ("SELECT COUNT(*) FROM oscar_nominations WHERE ceremony_year = 2011",
                     "SELECT COUNT(*) FROM oscar_nominations WHERE won = 2012",
                     "SELECT COUNT(*) FROM oscar_nominations WHERE ceremony = 1"):
        with pytest.raises(LarkError):
            parser.parse(invented)
    assert "movies.title" not in schema.categorical()  # names never: 22 fixture titles are still names


def test_question_spans_keep_names_whole_and_drop_possessives():
    spans = question_spans("what's the average runtime of christopher nolan's films, or the king's speech?")
    assert {"christopher nolan", "nolan", "the king's speech"} <= set(spans)
    assert not any("films or" in s for s in spans)  # no span across a comma


# ---------------------------------------------------------------- the checks
def test_a_checked_count_is_the_answer(guard):
    result, found = ask(guard, "how many oscar nominations did the social network get at the 2011 oscars",
                        "SELECT COUNT(*) FROM oscar_nominations WHERE film = 'the social network' AND "
                        "ceremony_year = 2011")
    assert found == [] and direct_value(read_statement(result.statement), result) == "3"


@pytest.mark.parametrize("question, statement, why", [
    ("how many oscars did titanic win", "SELECT COUNT(*) FROM oscar_nominations WHERE film = 'titanic' AND won = 1",
     "holds nothing = 'titanic'"),
    ("how many oscar nominations did the social network get at the 2011 oscars",
     "SELECT COUNT(*) FROM oscar_nominations WHERE film = 'the social network'", "year 2011 is not in the statement"),
    ("how many films came out", "SELECT COUNT(*) FROM movies WHERE release_year = 2019", "year 2019 is not in the q"),
    ("how many companies are worth more than 2 trillion dollars",
     "SELECT COUNT(*) FROM companies WHERE market_cap > 20000000000", "number 20000000000 is not in the question"),
    ("how many science fiction films came out in the 2000s",
     "SELECT COUNT(*) FROM movie_genres WHERE genre = 'science fiction' AND release_year = 2000", "not a range"),
    ("which has a lower p/e ratio, coca-cola or pepsi?",
     "SELECT name FROM companies WHERE name LIKE '%coca-cola%' ORDER BY pe_ratio ASC LIMIT 1", "pepsi are not in"),
    ("what's the average p/e ratio of microsoft and apple",
     "SELECT AVG(pe_ratio) FROM companies WHERE name LIKE '%microsoft%' OR name LIKE '%apple%'", "ambiguous"),
    ("which film won the most oscars at the 2000 oscars", "SELECT COUNT(*) FROM oscar_nominations WHERE "
     "ceremony_year = 2000 AND won = 1", "asks for no count"),
    ("how many films did christopher nolan direct", "SELECT title FROM movie_credits WHERE person LIKE "
     "'%christopher nolan%' AND job = 'director'", "selects no count"),
    ("which film is longer, inception or titanic", "SELECT SUM(runtime) FROM movies WHERE title IN ('inception', "
     "'titanic')", "selects a number"),
    ("what is the total budget of inception and titanic", "SELECT title FROM movies WHERE title IN ('inception', "
     "'titanic')", "selects no aggregate"),
    ("what is the average runtime of nolan's films", "SELECT AVG(runtime) FROM movie_credits WHERE person LIKE "
     "'%zz%'", "NULL"),
    ("which film is rated higher, joker or inception", "SELECT title FROM movies WHERE title IN ('joker', "
     "'inception') ORDER BY runtime DESC LIMIT 1", "does not ask about runtime"),
    ("how many stocks have a negative eps", "SELECT COUNT(*) FROM companies WHERE eps > 1", "number 1 is not"),
])
def test_what_the_checks_refuse(guard, question, statement, why):
    _, found = ask(guard, question, statement)
    assert any(why in f for f in found), found


def test_a_daily_figure_from_the_snapshot_answers_nothing(guard):
    question, statement = "which has the higher eps, meta or netflix", \
        "SELECT name FROM companies WHERE name LIKE '%netflix%' OR name LIKE '%meta%' ORDER BY eps DESC LIMIT 1"
    result = guard.run(statement)
    assert problems(question, read_statement(statement), result, guard) == []
    assert problems(question, read_statement(statement), result, guard,
                    dynamic_columns=SQLConfig().dynamic_columns) == [
        "eps: the store holds one snapshot of a figure that changes daily"]


def test_comparisons_and_values_read_as_asked(guard):
    result, found = ask(guard, "which made more at the box office, the dark knight or joker",
                        "SELECT title FROM movies WHERE title IN ('the dark knight', 'joker') ORDER BY revenue DESC "
                        "LIMIT 1")
    assert found == [] and result.rows == (("Joker",),)
    result, found = ask(guard, "what was the total budget of the matrix reloaded and the matrix revolutions?",
                        "SELECT SUM(budget) FROM movies WHERE title IN ('the matrix reloaded', "
                        "'the matrix revolutions')")
    assert found == [] and direct_value(read_statement(result.statement), result) == "$300 million"
    result, _ = ask(guard, "what is the average runtime of christopher nolan's films",
                    "SELECT AVG(runtime) FROM movie_credits WHERE person LIKE '%christopher nolan%' AND job = "
                    "'director'")
    assert direct_value(read_statement(result.statement), result) == "156.33 minutes"
    assert options("what is the lowest p/e ratio among jpmorgan, exxon and berkshire hathaway") == [
        "jpmorgan", "exxon", "berkshire hathaway"]
    assert as_option("which has the higher eps, meta or netflix", "Meta Platforms, Inc.") == "meta"
    assert as_option("who won more grammys, billie eilish or taylor swift", "Billie Eilish") == "Billie Eilish"
    question = "which company has a larger market cap, msft or aapl?"
    written = "SELECT name FROM companies WHERE name IN ('msft', 'aapl') ORDER BY market_cap DESC LIMIT 1"
    text, changes = repair(read_statement(written), written, guard)
    assert changes == ["name IN ('msft', 'aapl') -> ticker IN ('msft', 'aapl')"]
    result, found = ask(guard, question, text)
    assert found == [] and as_option(question, result.rows[0][0], read_statement(text), guard) == "msft"
    assert repair(read_statement("SELECT COUNT(*) FROM oscar_nominations WHERE film = 'sam mendes'"),
                  "SELECT COUNT(*) FROM oscar_nominations WHERE film = 'sam mendes'", guard)[0].endswith(
        "WHERE nominee = 'sam mendes'")
    assert read_statement("DELETE FROM movies") is None
    assert read_statement("SELECT title FROM movies WHERE title = 'a' OR (1=1)") is None


# ---------------------------------------------------------------- the writer
def writer(schema, embedder=None):
    return SQLWriter(SQLConfig(), schema, EXAMPLES, embedder=embedder, prompts=PromptLibrary())


def test_only_aggregate_questions_of_store_domains_are_asked(schema):
    w = writer(schema)
    assert asks_aggregate("which film is longer, a or b") and not asks_aggregate("who directed inception")
    assert w.request("who directed inception", "movie") is None
    assert w.request("how many games did the lakers win", "sports") is None
    assert w.request("how many grammys has adele won", "music") is not None


def test_the_request_has_the_nearest_examples_last_and_the_grammar(schema, embedder):
    request = writer(schema, embedder).request("how many movies did david lynch direct", "movie")
    turns = [m["content"] for m in request.messages if m["role"] != "system"]
    assert turns[-1] == "Question: how many movies did david lynch direct"
    assert turns[-3] == "Question: how many movies did david fincher direct"  # the nearest example, last
    assert "\nmovie_credits: one row" in turns[0]  # only the tables the nearest examples read
    assert "oscar_nominations" not in turns[0]
    assert "'%david lynch%'" in request.constraint.grammar and "q_oscar_nominations" not in request.constraint.grammar


# ---------------------------------------------------------------- the source, in the pipeline
def statement_for(prompt, adapter):
    statements = {"how many films did david fincher direct":
                  "SELECT COUNT(*) FROM movie_credits WHERE person LIKE '%david fincher%' AND job = 'director'",
                  "how many oscars did titanic win":
                  "SELECT COUNT(*) FROM oscar_nominations WHERE film = 'titanic' AND won = 1",
                  "how many oscars did inception win": "DROP TABLE movies"}
    return next((s for q, s in statements.items() if prompt == f"Question: {q}"), "from the web")


def test_the_source_answers_checked_values_and_refuses_the_rest(store_path, embedder):
    config = load_config("cpu", {"pipeline.task": 1, "pipeline.sources": ["public_data", "sql", "web"],
                                 "public_data.database": str(store_path), "public_data.build_from": ""})
    public = PublicData.from_config(config.public_data, embedder=embedder)
    pipeline = Pipeline(Parts(config, generator=FakeGenerator(statement_for), web=FakeWeb(), router=FakeRouter(),
                              public_data=public))
    assert isinstance(next(s for s in pipeline.sources if s.descriptor.name == "sql"), SQLSource)
    answers = pipeline.answer(queries("how many films did david fincher direct", "how many oscars did titanic win",
                                      "how many oscars did inception win", "who directed inception"))
    fincher, titanic, inception, plain = answers
    assert (fincher.text, fincher.source) == ("2", "sql-direct")
    assert fincher.trace["sql"]["value"] == "2" and fincher.trace["sql"]["problems"] == []
    assert titanic.source != "sql-direct" and "holds nothing = 'titanic'" in titanic.trace["sql"]["problems"][0]
    assert inception.trace["sql"]["error"] == "not a SELECT statement" and inception.source != "sql-direct"
    assert "sql" not in plain.trace  # a lookup is not asked


def test_statements_are_not_run_after_the_stage_deadline(store_path, schema, guard):
    from models.deadline import Deadline

    source = SQLSource(writer(schema), guard, (1,))
    asks = [(type("State", (), {"query": queries("how many films did david fincher direct")[0]})(),
             "SELECT COUNT(*) FROM movie_credits WHERE person LIKE '%david fincher%' AND job = 'director'")]
    assert source.retrieve(None, asks, Deadline(60))[0].direct == "2"
    late = source.retrieve(None, asks, Deadline(0))[0]
    assert not late and late.provenance["error"] == "the stage deadline passed"
