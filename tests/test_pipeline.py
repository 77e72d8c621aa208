"""The Figure-2 flow with stand-in components: KG first, web fallback, per-item degradation, deadlines."""
import pytest

from models.config import load_config
from models.deadline import Deadline
from models.evidence import Evidence
from models.llm.generator import GenerationRequest
from models.kg.pathway import KGEvidence
from models.pipeline import Pipeline
from models.parts import Parts
from models.types import IDK, Chunk, Query, SearchResult
from tests.stand_ins import ServesAnyAdapter


class FakeGenerator(ServesAnyAdapter):
    """Answers by looking at the prompt: API requests get a program, answer requests get `reply(prompt)`."""

    def __init__(self, reply):
        self.reply, self.calls = reply, []

    def generate(self, requests, *, deadline=None):
        self.calls.append(list(requests))
        return [self.reply(r.messages[-1]["content"], r.adapter) for r in requests]

    def count_tokens(self, text):
        return len(text.split())

    def truncate_tokens(self, text, max_tokens):
        return " ".join(text.split()[:max_tokens])


class FakeWeb:
    def __init__(self, fail=False):
        self.fail, self.seen = fail, []

    def retrieve(self, queries, task, deadline=None):
        self.seen.append(([q.text for q in queries], task))
        if self.fail:
            raise RuntimeError("web down")
        return [Evidence("web", (Chunk(f"web says {q.text}"),) if "nothing" not in q.text else ()) for q in queries]


class FakeRouter:
    def route(self, queries, deadline=None):
        return ["movie"] * len(queries)


class FakeKG:
    def __init__(self, facts):
        self.facts = facts

    def api_request(self, query, domain):
        return GenerationRequest(({"role": "user", "content": f"API for {query.text}"},), adapter="api")

    def run(self, query, domain, program, deadline=None, max_direct_items=10):
        facts = tuple(self.facts.get(query.text, []))
        return KGEvidence(program, "executed" if facts else "no-data", facts)


class FakePublic:
    def entity_request(self, query, domain):
        return GenerationRequest(({"role": "user", "content": f"ENTITY {query.text}"},))

    def facts(self, query, domain, entity_text):
        return ["The year_ceremony is 2012."] if "oscar" in query.text else []


def reply(prompt, adapter):
    if prompt.startswith("API for"):
        return 'get_movie("x")["release_date"]'
    if prompt.startswith("ENTITY"):
        return "x"
    if "kg fact unknown" in prompt:
        return "I don't know."
    if "kg fact" in prompt:
        return "from the kg"
    return "from the web"


def queries(*texts, pages=0):
    return [Query(f"id{i}", t, "03/01/2024, 10:00:00 PT", tuple(SearchResult() for _ in range(pages)))
            for i, t in enumerate(texts)]


def build(task=2, kg_facts=None, web=None, generator=None, public=None, verify=False):
    # The flow tests run with the verifier off (the fakes' answers are not in their context); the
    # verification tests below turn it on.
    config = load_config("cpu", {"pipeline.task": task, "verifier.enabled": verify})
    return Pipeline(Parts(config, generator=generator or FakeGenerator(reply), web=web or FakeWeb(),
                          router=FakeRouter(), kg=FakeKG(kg_facts or {}), public_data=public))


def test_kg_answer_wins_and_idk_falls_back_to_web():
    web = FakeWeb()
    pipe = build(kg_facts={"q1": ["kg fact one"], "q2": ["kg fact unknown"]}, web=web)
    answers = pipe.answer(queries("q1", "q2", "q3"))
    assert [(a.text, a.source) for a in answers] == [("from the kg", "kg"), ("from the web", "web"),
                                                     ("from the web", "web")]
    assert web.seen == [(["q2", "q3"], 2)]  # the KG-answered query never reaches the web stage


def test_task_1_skips_the_kg():
    pipe = build(task=1, kg_facts={"q1": ["kg fact one"]})
    assert [a.source for a in pipe.answer(queries("q1"))] == ["web"]


def test_empty_context_is_idk_without_an_llm_call():
    generator = FakeGenerator(reply)
    pipe = build(task=1, generator=generator)
    answers = pipe.answer(queries("nothing here"))
    assert answers[0].text == IDK
    assert all(not batch for batch in generator.calls)


def test_a_failing_stage_costs_only_its_answers():
    pipe = build(kg_facts={"q1": ["kg fact one"]}, web=FakeWeb(fail=True))
    answers = pipe.answer(queries("q1", "q2"))
    assert [a.text for a in answers] == ["from the kg", IDK]


def test_expired_deadline_answers_idk_without_work():
    generator = FakeGenerator(reply)
    pipe = build(generator=generator)
    answers = pipe.answer(queries("q1", "q2"), deadline=Deadline(0))
    assert [a.text for a in answers] == [IDK, IDK]
    assert generator.calls == []


def test_public_facts_come_before_web_context():
    generator = FakeGenerator(reply)
    pipe = build(task=1, generator=generator, public=FakePublic())
    pipe.answer(queries("who won the oscar?"))
    prompt = generator.calls[-1][0].messages[-1]["content"]
    assert prompt.index("The year_ceremony is 2012.") < prompt.index("web says who won the oscar?")


def test_task_is_detected_from_the_batch():
    pipe = build(task=0)
    assert pipe.task_for(queries("q", pages=50)) == 3
    assert pipe.task_for(queries("q", pages=5)) == 2  # a KG pathway is configured
    pipe.sources = [s for s in pipe.sources if s.descriptor.name != "kg"]  # no KG source: Task 1
    assert pipe.task_for(queries("q", pages=5)) == 1


class ShortcutPublic(FakePublic):
    def is_shortcut_domain(self, query, domain):
        return True


def shortcut_reply(prompt, adapter):
    if "The year_ceremony is 2012." in prompt and "web says" not in prompt:
        return "from the public facts"
    return reply(prompt, adapter)


def test_public_shortcut_answers_from_public_facts_alone():
    config = load_config("cpu", {"pipeline.task": 1, "pipeline.public_shortcut": True, "verifier.enabled": False})
    web = FakeWeb()
    pipe = Pipeline(Parts(config, generator=FakeGenerator(shortcut_reply), web=web, router=FakeRouter(),
                          public_data=ShortcutPublic()))
    answers = pipe.answer(queries("who won the oscar?", "q2"))
    assert [(a.text, a.source) for a in answers] == [("from the public facts", "public"), ("from the web", "web")]
    assert web.seen == [(["q2"], 1)]


class FakeAdapters:
    def __init__(self, known):
        self.known = known

    def require(self, names):
        for name in names:
            if name is not None and name not in self.known:
                raise KeyError(name)


def test_unconfigured_adapter_fails_at_start_up():
    import pytest

    generator = FakeGenerator(reply)
    generator.adapters = FakeAdapters({"web_answer"})
    config = load_config("cpu", {"pipeline.answer_adapter": "web_answer", "pipeline.kg_answer_adapter": "nope"})
    with pytest.raises(KeyError, match="nope"):
        Pipeline(Parts(config, generator=generator, web=FakeWeb(), router=FakeRouter()))


# ---------------------------------------------------------------- verification and traces
NO_EMBEDDER = {"verifier.min_similarity": 0.0}  # these pipelines have no embedder: lexical checks only


class DirectKG(FakeKG):
    """A KG whose program yields a single value for "q1" and only facts for "q2"."""

    def run(self, query, domain, program, deadline=None, max_direct_items=10):
        if query.text == "q1":
            return KGEvidence(program, "executed", ("The release_date of X is 2010-07-15.",), "2010-07-15")
        return KGEvidence(program, "no-data")


def paris(prompt, adapter):
    return reply(prompt, adapter) if prompt.startswith("API for") else "Paris"


def test_a_kg_value_answers_without_an_answer_call_and_is_traced():
    generator = FakeGenerator(paris)
    pipe = Pipeline(Parts(load_config("cpu", NO_EMBEDDER | {"pipeline.task": 2}), generator=generator, web=FakeWeb(),
                          router=FakeRouter(), kg=DirectKG({})))
    first, second = pipe.answer(queries("q1", "q2"))
    assert (first.text, first.source) == ("2010-07-15", "kg-direct")
    assert first.trace["kg"]["program"] == 'get_movie("x")["release_date"]' and first.trace["kg"]["outcome"] == "executed"
    assert [c["stage"] for c in first.trace["llm_calls"]] == ["kg api"]  # no answer call for the direct value
    for call in first.trace["llm_calls"] + second.trace["llm_calls"]:
        assert set(call) >= {"stage", "adapter", "prompt_tokens", "output_tokens", "seconds"}
        assert call["prompt_tokens"] > 0 and call["seconds"] >= 0
    assert set(first.trace["stages"]) >= {"route", "kg"} and first.trace["task"] == 2
    # "Paris" is not in the web context ("web says q2"): unsupported, so "i don't know", with the reason
    assert second.text == IDK and second.source == "web"
    attempt = second.trace["attempts"][-1]
    assert attempt["raw_output"] == "Paris" and not attempt["verifier"]["accepted"]
    assert "not in the evidence" in attempt["verifier"]["reason"] and second.trace["why"] == attempt["verifier"]["reason"]
    assert attempt["chunks"][0]["text"] == "web says q2"


def test_a_supported_web_answer_is_kept():
    echo = FakeGenerator(lambda prompt, adapter: "Canberra")
    web = FakeWeb()
    web.retrieve = lambda qs, task, deadline=None: [
        Evidence("web", (Chunk("The capital of Australia is Canberra.", "https://x.org"),)) for _ in qs]
    pipe = Pipeline(Parts(load_config("cpu", NO_EMBEDDER | {"pipeline.task": 1}), generator=echo, web=web,
                          router=FakeRouter()))
    answer = pipe.answer(queries("what is the capital of australia?"))[0]
    assert (answer.text, answer.source) == ("Canberra", "web")
    assert answer.trace["attempts"][0]["verifier"]["accepted"]


class ExplodingVerifier:
    def verify(self, candidates, deadline=None):
        raise RuntimeError("boom")


def test_a_verifier_that_raises_costs_its_answers_not_the_batch():
    pipe = Pipeline(Parts(load_config("cpu", {"pipeline.task": 1}), generator=FakeGenerator(reply), web=FakeWeb(),
                          router=FakeRouter(), verifier=ExplodingVerifier()))
    answers = pipe.answer(queries("q1", "q2"))
    assert [a.text for a in answers] == [IDK, IDK]
    assert answers[0].trace["why"] == "verifier failed: RuntimeError: boom"


def test_a_request_the_backend_could_not_run_says_why_in_the_trace():
    """A backend's `ItemResults.reasons` (a request that failed alone, or whose retry the deadline stopped)
    reach that answer's trace: its LLM call and the verifier's reason."""
    from models.isolation import ItemResults

    class PartlyFailing(FakeGenerator):
        def generate(self, requests, *, deadline=None):
            outputs = super().generate(requests, deadline=deadline)
            return ItemResults(["" if i == 1 else o for i, o in enumerate(outputs)],
                               {1: "generation not run: the batch call failed (RuntimeError: out of memory) and "
                                   "the deadline passed before this item's own retry"} if len(outputs) > 1 else {})

    answers = build(task=1, generator=PartlyFailing(reply)).answer(queries("q1", "q2"))
    assert [a.text for a in answers] == ["from the web", IDK]
    [call] = answers[1].trace["llm_calls"]
    assert "deadline passed" in call["error"] and "error" not in answers[0].trace["llm_calls"][0]
    assert answers[1].trace["attempts"][-1]["verifier"]["reason"].startswith("no model output (generation not run")
    assert answers[1].trace["why"].startswith("no model output (generation not run")


def test_the_trace_says_which_stages_the_deadline_skipped():
    answers = build().answer(queries("q1"), deadline=Deadline(0))
    # the stages of this pipeline's sources (no public-data component here: no public-data stage)
    assert answers[0].text == IDK and "skipped at the deadline: route, kg, web" in answers[0].trace["why"]


def test_the_llm_is_built_before_anything_that_may_initialise_cuda(monkeypatch):
    """vLLM must start before a CUDA embedder exists: its forked workers fail in a parent that has initialised
    CUDA (tests/llm/test_vllm_startup.py records every torch.cuda call on the way)."""
    import models.pipeline as pipeline_module
    from models.embedder import Embedder

    built = []

    class Stop(Exception):
        pass

    def make_generator(config, models_dir, missing=None):
        built.append("llm")
        raise Stop

    def embedder_from_config(config, models_dir):
        built.append("embedder")
        raise Stop

    monkeypatch.setattr(pipeline_module, "make_generator", make_generator)
    monkeypatch.setattr(Embedder, "from_config", staticmethod(embedder_from_config))
    with pytest.raises(Stop):
        Pipeline.from_config(load_config("g4dn"))
    assert built == ["llm"]
