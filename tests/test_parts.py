"""The pipeline's parts (models/parts.py): given ones kept, composed ones built by their registered builder in
both kinds of assembly, loading ones only in an assembled pipeline, and a new source that needs a new part
added by two registrations without touching models/pipeline.py."""
import pytest

import models.assembly  # noqa: F401 - the built-in parts
from models.config import load_config
from models.parts import Parts, _REGISTRY as PARTS, register_part, registered_parts
from models.pathways import declare
from models.pipeline import Pipeline
from models.sources import Descriptor, build_sources, register_source
from models.sources.base import _REGISTRY as SOURCES
from tests.sources.test_registry import AlmanacSource
from tests.test_pipeline import FakeGenerator, FakeRouter, FakeWeb, queries, reply


def test_given_parts_are_kept_and_a_given_none_is_not_given():
    parts = Parts(load_config("cpu", {"verifier.enabled": False}), generator=FakeGenerator(reply), web="the web",
                  kg=None, verifier=None)
    assert parts.get("web") == "the web" and parts.get("kg") is None and not parts.has("kg")
    assert type(parts.get("verifier")).__name__ == "SupportVerifier"  # built by its registered builder


def test_a_loading_part_is_absent_unless_assembled_and_a_composed_one_is_built_once():
    built = []
    register_part("toy_index", lambda parts: built.append(1) or "index", loads=True)
    register_part("toy_view", lambda parts: f"view of {parts.get('toy_index')}", loads=False)
    try:
        config = load_config("cpu")
        injected = Parts(config)
        assert injected.get("toy_index") is None and injected.get("toy_view") == "view of None" and built == []
        assembled = Parts.assemble(config)
        assert assembled.get("toy_view") == "view of index" and assembled.get("toy_index") == "index"
        assert built == [1]  # kept after its first use
    finally:
        PARTS.pop("toy_index"), PARTS.pop("toy_view")


def test_unknown_parts_and_circles_fail_with_their_names():
    parts = Parts(load_config("cpu"))
    with pytest.raises(KeyError, match="no part 'atlas'"):
        parts.get("atlas")
    register_part("ouro", lambda p: p.get("boros"), loads=False)
    register_part("boros", lambda p: p.get("ouro"), loads=False)
    try:
        with pytest.raises(RuntimeError, match="ouro -> boros -> ouro"):
            parts.get("ouro")
    finally:
        PARTS.pop("ouro"), PARTS.pop("boros")


def test_the_built_in_parts_are_registered():
    assert {"embedder", "web", "router", "kg", "public_data", "grader_trim", "attributes", "source_selector",
            "prompts", "verifier", "evidence_selector", "reasoner", "knowledge", "calculator", "answerer",
            "sources"} <= set(registered_parts())


class GazetteerSource(AlmanacSource):
    """A source that needs a part nobody else uses (its gazetteer): both are added by registration."""

    descriptor = Descriptor(name="gazetteer", stage="gazetteer", knows="the capital city of every country")
    pathway = declare("gazetteer")  # the model reads the gazetteer's facts

    def __init__(self, gazetteer):
        super().__init__()
        self.FACTS = {k: f"The capital of {k.title()} is {v}." for k, v in gazetteer.items()}


@pytest.fixture()
def gazetteer():
    register_part("gazetteer", lambda parts: {"australia": "Canberra"}, loads=True)
    register_source("gazetteer", lambda parts: GazetteerSource(parts.get("gazetteer")), needs=("gazetteer",))
    yield
    PARTS.pop("gazetteer"), SOURCES.pop("gazetteer")


def test_a_source_with_its_own_part_is_added_by_registration(gazetteer):
    config = load_config("cpu", {"pipeline.task": 1, "verifier.enabled": False,
                                 "pipeline.sources": ["gazetteer", "web"]})
    # without its part the source is left out, its factory never called
    assert [s.descriptor.name for s in build_sources(config.pipeline.sources, Parts(config, web=FakeWeb()))] \
        == ["web"]
    generator = FakeGenerator(lambda prompt, adapter: "Canberra" if "Canberra" in prompt else reply(prompt, adapter))
    pipe = Pipeline(Parts(config, generator=generator, web=FakeWeb(), router=FakeRouter(),
                          gazetteer={"australia": "Canberra"}))
    answers = pipe.answer(queries("what is the capital of australia", "what is the capital of peru"))
    assert [(a.text, a.source) for a in answers] == [("Canberra", "gazetteer"), ("from the web", "web")]
