"""The Figure-2 flow with stand-in components: KG first, web fallback, per-item degradation, deadlines."""
from models.config import load_config
from models.deadline import Deadline
from models.llm.generator import GenerationRequest
from models.pipeline import Pipeline
from models.types import IDK, Chunk, Query, SearchResult


class FakeGenerator:
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
        return [[Chunk(f"web says {q.text}")] if "nothing" not in q.text else [] for q in queries]


class FakeRouter:
    def route(self, queries, deadline=None):
        return ["movie"] * len(queries)


class FakeKG:
    def __init__(self, facts):
        self.facts = facts

    def api_request(self, query, domain):
        return GenerationRequest(({"role": "user", "content": f"API for {query.text}"},), adapter="api")

    def evidence(self, query, domain, program, deadline=None):
        return self.facts.get(query.text, [])


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


def build(task=2, kg_facts=None, web=None, generator=None, public=None):
    config = load_config("cpu", {"pipeline.task": task})
    return Pipeline(config, generator or FakeGenerator(reply), web or FakeWeb(), FakeRouter(),
                    kg=FakeKG(kg_facts or {}), public_data=public)


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
    pipe.kg = None
    assert pipe.task_for(queries("q", pages=5)) == 1


class ShortcutPublic(FakePublic):
    def is_shortcut_domain(self, query, domain):
        return True


def shortcut_reply(prompt, adapter):
    if "The year_ceremony is 2012." in prompt and "web says" not in prompt:
        return "from the public facts"
    return reply(prompt, adapter)


def test_public_shortcut_answers_from_public_facts_alone():
    config = load_config("cpu", {"pipeline.task": 1, "pipeline.public_shortcut": True})
    web = FakeWeb()
    pipe = Pipeline(config, FakeGenerator(shortcut_reply), web, FakeRouter(), public_data=ShortcutPublic())
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
        Pipeline(config, generator, FakeWeb(), FakeRouter())
