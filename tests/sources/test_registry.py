"""The Source seam: a source added by registration alone (no edit of models/pipeline.py) is asked, its evidence
kept on the query's state, and its answer checked like any other; the built-in sources keep db3's order."""
import pytest

from models.config import load_config
from models.evidence import Evidence
from models.parts import Parts
from models.pathways import declare
from models.pipeline import Pipeline
from models.sources import AnswerPlan, Descriptor, build_sources, register_source, registered_sources
from models.sources.base import _REGISTRY
from models.types import Chunk
from tests.test_pipeline import NO_EMBEDDER, FakeGenerator, FakeRouter, FakeWeb, queries, reply

ALMANAC = declare("almanac")  # the model reads the almanac's facts
GAZETTEER_VALUE = declare("gazetteer-value", own_value=True, what="gazetteer")  # its own value, no "-direct" in it


class AlmanacSource:
    """A toy source: an almanac that knows capitals; it writes no native query and answers from its own facts."""

    descriptor = Descriptor(name="almanac", stage="almanac", knows="capitals of countries")
    pathway = ALMANAC  # a subclass that is another source declares its own
    FACTS = {"capital of australia": "The capital of Australia is Canberra."}

    def __init__(self):
        self.asked = []

    def runs_in(self, task):
        return True

    def native_request(self, query, domain):
        return None

    def retrieve(self, run, asks, deadline):
        self.asked += [s.query.text for s, _ in asks]
        name = self.descriptor.name
        return [Evidence(name, tuple(Chunk(f, name, "public") for k, f in self.FACTS.items() if k in s.query.text))
                for s, _ in asks]

    def answer_plan(self, state, task):
        name = self.descriptor.name
        return AnswerPlan(self.pathway, "answer_ctrl") if state.evidence_of(name) else None

    def trace(self, state, evidence, run):
        state.trace[self.descriptor.name] = list(evidence.texts)


def registered(source):
    """Registers `source` under its name for one test."""
    name = source.descriptor.name
    register_source(name, lambda parts: source)
    yield source
    _REGISTRY.pop(name)


@pytest.fixture()
def almanac():
    yield from registered(AlmanacSource())


def almanac_reply(prompt, adapter):
    return "Canberra" if "Canberra" in prompt else reply(prompt, adapter)


def test_a_registered_source_is_used_without_touching_the_pipeline(almanac):
    config = load_config("cpu", {"pipeline.task": 1, "verifier.enabled": False,
                                 "pipeline.sources": ["almanac", "web"]})
    web = FakeWeb()
    answers = Pipeline(Parts(config, generator=FakeGenerator(almanac_reply), web=web, router=FakeRouter())).answer(
        queries("what is the capital of australia", "what is the capital of peru"))
    assert almanac.asked == ["what is the capital of australia", "what is the capital of peru"]
    assert [(a.text, a.source) for a in answers] == [("Canberra", "almanac"), ("from the web", "web")]
    assert web.seen == [(["what is the capital of peru"], 1)]  # the almanac's answer settled the first query
    assert answers[0].trace["almanac"] == ["The capital of Australia is Canberra."]
    assert "almanac" in answers[0].trace["stages"]


class GazetteerSource(AlmanacSource):
    """A toy source whose evidence gives its own value (the capital), declared once as an own-value pathway."""

    descriptor = Descriptor(name="gazetteer", stage="gazetteer", knows="capitals of countries",
                            own_value=GAZETTEER_VALUE)

    def retrieve(self, run, asks, deadline):
        found = super().retrieve(run, asks, deadline)
        return [Evidence("gazetteer", e.items, "canberra" if e.items else "") for e in found]

    def answer_plan(self, state, task):
        return AnswerPlan(self.descriptor.own_value) if state.evidence_of("gazetteer").direct else None


@pytest.fixture()
def gazetteer():
    yield from registered(GazetteerSource())


def test_a_sources_own_value_is_checked_as_the_kgs_because_its_pathway_says_so(gazetteer):
    """No model call answers it, and the verifier keeps it as an exact value (not a model's reading of text),
    whatever the pathway's name: the declaration decides."""
    config = load_config("cpu", NO_EMBEDDER | {"pipeline.task": 1, "pipeline.sources": ["gazetteer", "web"]})
    generator = FakeGenerator(reply)
    answers = Pipeline(Parts(config, generator=generator, web=FakeWeb(), router=FakeRouter())).answer(
        queries("what is the capital of australia"))
    assert (answers[0].text, answers[0].source) == ("canberra", "gazetteer-value")
    attempt = answers[0].trace["attempts"][0]
    assert attempt["pathway"] == "gazetteer-value" and attempt["verifier"]["stop"] == "exact_value"
    assert attempt["verifier"]["reason"].startswith("gazetteer value")
    assert generator.calls == []  # no answer call: the source's value is the answer


def test_a_descriptor_refuses_a_model_pathway_as_its_own_value():
    with pytest.raises(ValueError, match="not declared as a source's own value"):
        Descriptor(name="atlas", stage="atlas", knows="maps", own_value=ALMANAC)


def test_the_profile_order_is_db3s_and_unknown_names_fail_at_start_up():
    config = load_config("cpu")
    assert config.pipeline.sources == ("public_data", "kg", "sql", "web")
    assert {"public_data", "kg", "sql", "web"} <= set(registered_sources())
    # a public-data component without a store (here: a stand-in) leaves the SQL source out
    parts = Parts(config, web=FakeWeb(), kg=object(), public_data=object())
    assert [s.descriptor.name for s in build_sources(config.pipeline.sources, parts)] == ["public_data", "kg", "web"]
    # a component not built (no KG in Task 1) leaves its source out
    assert [s.descriptor.name for s in build_sources(config.pipeline.sources, Parts(config, web=FakeWeb()))] \
        == ["web"]
    with pytest.raises(ValueError, match="unknown source.*'atlas'.*registered"):
        build_sources(["atlas", "web"], parts)


def test_every_built_in_source_describes_what_it_knows():
    config = load_config("cpu")
    for source in build_sources(config.pipeline.sources, Parts(config, web=FakeWeb(), kg=object(),
                                                               public_data=object())):
        d = source.descriptor
        assert d.name and d.stage and len(d.knows.split()) >= 8, d


def test_kg_evidence_carries_the_program_and_its_parsed_calls():
    """The verifier reads the KG program from the evidence, and the evidence has the parsed call too."""
    from models.kg.apis import compile_program
    from models.kg.pathway import describe_calls

    calls = describe_calls(compile_program('get_movie("avatar")["budget"]', "movie"))
    assert calls == ({"function": "get_movie", "arguments": ["avatar"], "select": ["budget"]},)
