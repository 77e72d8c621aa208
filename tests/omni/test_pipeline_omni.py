"""`pipeline.mode: omni`: only the chosen sources are asked, all their evidence is ranked into one context, a kept
exact value answers after the verifier, the rest is one answer call; db3 mode is unchanged."""
from dataclasses import replace

import pytest

from models.config import load_config
from models.omni.selection import SourceChoice
from models.pipeline import Pipeline
from models.parts import Parts
from models.types import IDK
from tests.test_pipeline import FakeGenerator, FakeKG, FakePublic, FakeRouter, FakeWeb, queries, reply


class ScriptedSelector:
    """Engages the sources listed for a question's first word (every source for an unknown one)."""

    def __init__(self, plan, fail=False):
        self.plan, self.fail, self.seen = plan, fail, []

    def select(self, questions, descriptors, deadline=None, states=None):
        self.seen.append([d.name for d in descriptors])
        if self.fail:
            raise RuntimeError("selector down")
        names = [d.name for d in descriptors]
        return [SourceChoice(tuple(self.plan.get(q.split()[0], names)), {n: 0.5 for n in names}, "scripted")
                for q in questions]


class DirectKG(FakeKG):
    """A KG whose program for "value ..." questions returns a single value."""

    def run(self, query, domain, program, deadline=None, max_direct_items=10):
        ran = super().run(query, domain, program, deadline, max_direct_items)
        if query.text.startswith("value"):  # "value unstated": a value its own facts do not state
            fact = "The release_date of X is unknown." if "unstated" in query.text else \
                "The release_date of X is 1999-03-31."
            return replace(ran, outcome="executed", facts=(fact,), direct="1999-03-31")
        return ran


def omni(plan=None, task=2, web=None, generator=None, kg=None, verify=False, fail=False, public=None):
    config = load_config("cpu", {"pipeline.task": task, "verifier.enabled": verify, "pipeline.mode": "omni",
                                 "pipeline.sources": ["public_data", "kg", "web"]})
    selector = ScriptedSelector(plan or {}, fail)
    pipe = Pipeline(Parts(config, generator=generator or FakeGenerator(reply), web=web or FakeWeb(),
                          router=FakeRouter(), kg=kg or DirectKG({"both sources": ["kg fact about both"]}),
                          public_data=public, source_selector=selector))
    return pipe, selector


def test_only_the_engaged_sources_are_asked_and_one_answer_reads_all_their_evidence():
    web, generator = FakeWeb(), FakeGenerator(reply)
    pipe, selector = omni({"both": ["kg", "web"], "webonly": ["web"]}, web=web, generator=generator)
    answers = pipe.answer(queries("both sources", "webonly please"))
    assert selector.seen == [["kg", "web"]]  # no public-data component: no public_data source
    kg_prompts = [r for batch in generator.calls for r in batch if r.adapter == "api"]
    assert len(kg_prompts) == 1  # the KG was asked about "both sources" only
    assert web.seen == [(["both sources", "webonly please"], 2)]
    first = answers[0]
    assert (first.text, first.source) == ("from the kg", "omni")  # one call over kg facts + web chunks
    answer_prompt = [r for batch in generator.calls for r in batch if r.adapter is None][0].messages[-1]["content"]
    assert "[kg] kg fact about both" in answer_prompt and "[web] web says both sources" in answer_prompt
    trace = first.trace["omni"]
    assert trace["selection"]["engaged"] == ["kg", "web"] and trace["selection"]["how"] == "scripted"
    assert {i["source"] for i in trace["evidence"]["items"]} == {"kg", "web"}
    assert {"select sources", "kg", "web", "select evidence", "answer"} <= set(first.trace["stages"])
    assert "kg" not in answers[1].trace  # never asked


def test_a_kept_exact_value_answers_when_verified_and_falls_to_the_answer_step_when_not():
    pipe, _ = omni({"value": ["kg", "web"]}, verify=True)
    answer = pipe.answer(queries("value of the release date"))[0]
    assert (answer.text, answer.source) == ("1999-03-31", "kg-direct")
    assert answer.trace["omni"]["evidence"]["chosen"] == "kg"
    # the verifier refuses a value its source's items do not state: the answer step reads the whole context,
    # and its answer ("from the web", in no chunk) is refused too
    pipe, _ = omni({"value": ["kg", "web"]}, verify=True)
    refused = pipe.answer(queries("value unstated release date"))[0]
    assert refused.text == IDK
    assert [a["pathway"] for a in refused.trace["attempts"]] == ["kg-direct", "omni"]


def test_a_failed_selection_asks_every_source():
    web = FakeWeb()
    pipe, _ = omni(fail=True, web=web)
    answer = pipe.answer(queries("both sources"))[0]
    assert web.seen and "kg" in answer.trace
    assert answer.text == "from the kg"


def test_no_evidence_anywhere_is_idk_without_an_answer_call():
    generator = FakeGenerator(reply)
    pipe, _ = omni({"nothing": ["web"]}, generator=generator, task=1)
    answer = pipe.answer(queries("nothing here"))[0]
    assert answer.text == IDK and answer.source == "omni"
    assert not [r for batch in generator.calls for r in batch]


def test_the_mode_is_checked_and_omni_needs_a_selector():
    with pytest.raises(ValueError, match="unknown pipeline.mode 'mixed'"):
        Pipeline(Parts(load_config("cpu", {"pipeline.mode": "mixed"}), generator=FakeGenerator(reply), web=FakeWeb(),
                       router=FakeRouter()))
    with pytest.raises(ValueError, match="needs a source selector"):
        Pipeline(Parts(load_config("cpu", {"pipeline.mode": "omni"}), generator=FakeGenerator(reply), web=FakeWeb(),
                       router=FakeRouter()))


def test_both_profiles_say_their_mode():
    assert load_config("cpu").pipeline.mode == "db3"
    assert load_config("g4dn").pipeline.mode == "db3"
