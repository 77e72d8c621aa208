"""The pathway as the pipeline calls it: entity request -> (stand-in) generation -> facts."""
import dataclasses

import pytest

from models.llm.generator import GenerationRequest
from models.public_data import PublicData, PublicStore, parse_entities
from models.public_data.config import PublicDataConfig
from models.types import Query
from tests.stand_ins import ServesAnyAdapter

QUERY_TIME = "03/01/2024, 10:00:00 PT"


def query(text):
    return Query("q", text, QUERY_TIME)


@pytest.fixture(scope="module")
def public(store_path, embedder):
    cfg = PublicDataConfig(database=str(store_path), build_from="", top_facts=5, entity_adapter=None)
    return PublicData.from_config(cfg, embedder)


class EntityGenerator(ServesAnyAdapter):
    """Stands in for the LLM: answers an entity prompt with a fixed plausible string."""

    def __init__(self, answer):
        self.answer, self.requests = answer, []

    def generate(self, requests, *, deadline=None):
        self.requests += requests
        return [self.answer for _ in requests]


@pytest.mark.parametrize("output, expected", [
    ("the matrix && fight club", ["the matrix", "fight club"]),
    ("Answer: \"Inception\"", ["Inception"]),
    ("  msft&&aapl  \nQuestion: which ...", ["msft", "aapl"]),
    ("none", []), ("None.", []), ("N/A", []), ("I don't know", []), ("", []),
    ("a && a && b && c && d && e", ["a", "b", "c", "d"]),
    ("jean dujardin && none", ["jean dujardin"]),
])
def test_parse_entities(output, expected):
    assert parse_entities(output, limit=4) == expected


def test_entity_request_uses_the_domain_prompt_on_the_base_model(public):
    request = public.entity_request(query("which movie came out earlier, the matrix or fight club?"), "movie")
    assert isinstance(request, GenerationRequest)
    assert request.adapter is None and request.max_new_tokens == 32 and request.stop == ("\n",)
    assert "Question: which movie came out earlier, the matrix or fight club?" in request.messages[-1]["content"]
    assert "&&" in request.messages[-1]["content"]
    finance = public.entity_request(query("which company has a larger market cap, msft or aapl?"), "finance")
    assert "stock" in finance.messages[-1]["content"]


@pytest.mark.parametrize("text, domain", [
    ("how many points did the golden state warriors score on 2022-10-18?", "sports"),
    ("what is the capital of australia?", "open"),
    ("what was the closing price of aapl on 2024-02-27?", "finance"),
    ("how many members are in the band coldplay?", "music"),
])
def test_no_request_without_public_data(public, text, domain):
    assert public.entity_request(query(text), domain) is None


def test_sample_m3_gets_the_oscar_winner_into_its_facts(public):
    m3 = query("who won the oscar for best actor in 2012?")
    generator = EntityGenerator("the artist")
    [entities] = generator.generate([public.entity_request(m3, "movie")])
    facts = public.facts(m3, "movie", entities)
    assert "jean dujardin" in facts[0].lower()
    assert all(fact.startswith("The ") and fact.endswith(".") for fact in facts)
    assert len(facts) <= 5


@pytest.mark.parametrize("text, domain, entities, expected_first", [
    ("when was the movie inception released?", "movie", "inception", "The title is Inception. The release date is 2010-07-15."),
    ("which company has a larger market cap, msft or aapl?", "finance", "msft && aapl", "The company is"),
    ("which artist won the grammy for best new artist in 2020?", "music", "none", "The award is the 62nd Annual Grammy"),
    ("who directed the movie that won best picture at the 2020 oscars?", "movie", "none", "The award is the 92nd"),
])
def test_facts_rank_the_answer_first(public, text, domain, entities, expected_first):
    facts = public.facts(query(text), domain, entities)
    assert facts[0].startswith(expected_first)


def test_sample_questions_find_their_answers(public):
    both = " ".join(public.facts(query("which movie came out earlier, the matrix or fight club?"), "movie",
                                 "the matrix && fight club"))
    assert "1999-03-30" in both and "1999-10-15" in both
    caps = " ".join(public.facts(query("which company has a larger market cap, msft or aapl?"), "finance", "msft && aapl"))
    assert "$3.06 trillion" in caps and "$2.81 trillion" in caps
    director = " ".join(public.facts(query("who directed the movie that won best picture at the 2020 oscars?"),
                                     "movie", "parasite"))
    assert "Bong Joon Ho" in director


def test_award_questions_keep_winners_unless_nominations_are_asked(public):
    winners = public.facts(query("which artist won the grammy for best new artist in 2020?"), "music", "")
    assert winners and all("winner is" in fact for fact in winners)
    nominees = public.facts(query("who was nominated for best new artist at the 2020 grammys?"), "music", "")
    assert any("did not win" in fact for fact in nominees)


def test_unlinkable_entities_give_no_facts(public):
    assert public.facts(query("when was the movie star wars released?"), "movie", "star wars") == []
    assert public.facts(query("when was the movie star wars released?"), "movie", "@@@ && ???") == []
    assert public.facts(query("what is the capital of australia?"), "open", "canberra") == []


def test_facts_never_raise(store_path, embedder):
    broken = PublicData(PublicDataConfig(), PublicStore(store_path), embedder)
    broken.store.close()  # every query now raises sqlite3.ProgrammingError
    assert broken.facts(query("when was the movie inception released?"), "movie", "inception") == []


def test_a_missing_database_turns_the_pathway_off(tmp_path, caplog):
    public = PublicData.from_config(PublicDataConfig(database=str(tmp_path / "none.sqlite"), build_from=""))
    assert not public.available
    assert public.entity_request(query("when was the movie inception released?"), "movie") is None
    assert public.facts(query("when was the movie inception released?"), "movie", "inception") == []
    assert "pathway is skipped" in caplog.text


def test_default_profile_builds_the_fixture_store_on_first_use(tmp_path):
    from models.config import load_config

    cfg = dataclasses.replace(load_config("cpu").public_data, database=str(tmp_path / "cache" / "public.sqlite"))
    public = PublicData.from_config(cfg)
    assert public.available and (tmp_path / "cache" / "public.sqlite").exists()
    facts = public.facts(query("who won the oscar for best actor in 2012?"), "movie", "none")
    assert facts and "Jean Dujardin" in facts[0]  # no embedder: records in store order, still filtered


def test_pipeline_puts_public_facts_before_the_web_context(public):
    from models.config import load_config
    from models.parts import Parts
    from models.pipeline import Pipeline
    from models.evidence import Evidence
    from models.types import Chunk

    class Generator(EntityGenerator):
        def generate(self, requests, *, deadline=None):
            self.requests += requests
            return ["the artist" if "Given a question about movies" in r.messages[-1]["content"] else "jean dujardin"
                    for r in requests]

        def count_tokens(self, text):
            return len(text.split())

        def truncate_tokens(self, text, max_tokens):
            return " ".join(text.split()[:max_tokens])

    class Web:
        def retrieve(self, queries, task, deadline=None):
            return [Evidence("web", (Chunk("a web page about the 2012 oscars", "https://example.org"),))
                    for _ in queries]

    class Router:
        def route(self, queries, deadline=None):
            return ["movie"] * len(queries)

    generator = Generator("")
    # no embedder here, so the verifier checks lexical support only (the answer is in the public fact)
    config = load_config("cpu", {"pipeline.task": 1, "verifier.min_similarity": 0.0})
    pipeline = Pipeline(Parts(config, generator=generator, web=Web(), router=Router(), public_data=public))
    [answer] = pipeline.answer([query("who won the oscar for best actor in 2012?")])
    prompt = generator.requests[-1].messages[-1]["content"]
    assert "The winner is Jean Dujardin" in prompt
    assert prompt.index("Jean Dujardin") < prompt.index("a web page about the 2012 oscars")
    assert answer.text == "jean dujardin"


def test_shortcut_questions_need_an_available_store(public):
    assert public.is_shortcut_domain(query("who won the oscar for best actor in 2012?"), "movie")
    assert not public.is_shortcut_domain(query("when was the movie inception released?"), "movie")
    off = PublicData(PublicDataConfig(), None)
    assert not off.is_shortcut_domain(query("who won the oscar for best actor in 2012?"), "movie")
