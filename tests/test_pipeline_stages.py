"""ElectricSheep's stages wired into the pipeline (attributes, reasoning + knowledge + calculator + backup):
each with stand-ins, each off by default, each failure costing one item, each decision in the trace."""
import time

import numpy as np
import pytest

from models.attributes import AttributeConfig, AttributePredictor
from models.config import load_config
from models.deadline import Deadline
from models.evidence import Evidence
from models.isolation import ItemResults
from models.kg.pathway import KGEvidence
from models.llm.generator import Completion
from models.pipeline import Pipeline
from models.parts import Parts
from models.reasoning import ReasonedAnswer
from models.types import IDK, Chunk
from models.verify import SupportVerifier
from tests.test_pipeline import FakeKG, FakeRouter, FakeWeb, queries
from tests.stand_ins import ServesAnyAdapter

NO_EMBEDDER = {"verifier.min_similarity": 0.0}  # lexical checks only, unless a test gives an embedder
CANBERRA = "The capital of Australia is Canberra. The share price was 185.2 dollars, up from 170.0 dollars."


class Scripted(ServesAnyAdapter):
    """A generator answering by the prompt's role (system text); records each call's requests and deadline."""

    def __init__(self, reasoning="Step 1: the references say so.\nFalse premise: no\nFinal answer: Canberra",
                 answer="Canberra", knowledge="Final answer: Sydney", calc="185.2 - 170.0", backup="Canberra"):
        self.replies = {"reasoning": reasoning, "answer": answer, "knowledge": knowledge, "calc": calc,
                        "backup": backup}
        self.calls: list[tuple[str, int, float]] = []  # (role, requests, deadline seconds left)
        self.prompts: dict[str, list[str]] = {}

    @staticmethod
    def role(request) -> str:
        system = request.messages[0]["content"]
        for marker, role in (("arithmetic for another assistant", "calc"), ("from your own knowledge", "knowledge"),
                             ("notes written by another assistant", "backup"), ("show your reasoning", "reasoning")):
            if marker in system:
                return role
        return "answer"

    def generate(self, requests, *, deadline=None):
        roles = [self.role(r) for r in requests]
        left = deadline.remaining() if deadline is not None else float("inf")
        if left < 1e-3:  # a real backend's first step takes longer; a clock can read the same twice in a row
            time.sleep(1e-3)
        self.calls.extend((role, len(requests), left) for role in sorted(set(roles)))
        for role, request in zip(roles, requests):
            self.prompts.setdefault(role, []).append("\n".join(m["content"] for m in request.messages))
        if deadline is not None and deadline.expired():
            return ["" for _ in requests]
        texts = [self.replies[role] for role in roles]  # a request with n > 1 gets n copies, as a backend's samples
        return ItemResults(texts, {}, {i: (Completion(t),) * r.n for i, (t, r) in enumerate(zip(texts, requests))})

    def roles(self) -> list[str]:
        return [role for role, _, _ in self.calls]

    def count_tokens(self, text):
        return len(text.split())

    def truncate_tokens(self, text, max_tokens):
        return " ".join(text.split()[:max(0, max_tokens)])


class PageWeb(FakeWeb):
    def retrieve(self, queries, task, deadline=None):
        return [Evidence("web", (Chunk(CANBERRA, "https://x.org", "text"),)) for _ in queries]


class LabelClassifier:
    """The static/dynamic classifier stand-in: "dynamic" when the question says "now"; raises on "bad"."""

    def predict(self, texts, embedder):
        if any("bad" in t for t in texts):
            raise RuntimeError("classifier down")
        return ["dynamic" if "now" in t else "static" for t in texts]


class RaisingPredictor(AttributePredictor):
    """Lets a failure reach the pipeline (the real predictor swallows classifier errors for the batch)."""

    def predict(self, queries, deadline=None):
        return self.classifier.predict(list(queries), self.embedder)


def predictor(policy="idk", cls=AttributePredictor):
    return cls(AttributeConfig(enabled=True, dynamic_policy=policy), classifier=LabelClassifier(), embedder=object())


def build(overrides=(), generator=None, kg=None, verifier=None, **stages):
    config = load_config("cpu", {"pipeline.task": 1, **NO_EMBEDDER, **dict(overrides)})
    generator = generator or Scripted()
    if verifier is not None:
        verifier = verifier(config)
    return Pipeline(Parts(config, generator=generator, web=PageWeb(), router=FakeRouter(), kg=kg, verifier=verifier,
                          **stages)), generator


# ---------------------------------------------------------------- off by default
@pytest.mark.parametrize("profile", ["cpu", "g4dn"])
def test_every_stage_is_off_in_the_shipped_profiles(profile):
    c = load_config(profile)
    assert not any([c.attributes.enabled, c.reasoning.enabled, c.reasoning.knowledge.enabled, c.calculator.enabled,
                    c.web.main_content.enabled, c.web.sentence_chunks.enabled])


def test_default_pipeline_runs_only_the_answer_step_and_traces_nothing_new():
    pipe, generator = build()
    assert pipe.attribute_policy is None and type(pipe.answerer).__name__ == "ShortAnswerer"
    answer = pipe.answer(queries("what is the capital of australia?"))[0]
    assert (answer.text, answer.source) == ("Canberra", "web") and generator.roles() == ["answer"]
    assert not {"attribute", "reasoning", "knowledge", "calculator", "web"} & set(answer.trace)
    assert set(answer.trace["stages"]) == {"route", "web", "web retrieval"}  # Task 1, no public-data component


def test_configurations_that_cannot_run_fail_at_start_up():
    with pytest.raises(ValueError, match="AttributePredictor"):
        build({"attributes.enabled": True})
    with pytest.raises(ValueError, match="needs reasoning.enabled"):
        build({"calculator.enabled": True})


# ---------------------------------------------------------------- attributes
def test_dynamic_question_without_kg_evidence_gets_idk_and_the_trace_says_why():
    pipe, _ = build({"attributes.enabled": True}, attributes=predictor("idk"))
    static, dynamic = pipe.answer(queries("what is the capital of australia?", "what is the capital now?"))
    assert static.text == "Canberra" and static.trace["attribute"]["label"] == "static"
    assert static.trace["attribute"]["action"] == "answer"
    assert dynamic.text == IDK and dynamic.trace["attribute"] == {
        "label": "dynamic", "method": "classifier", "policy": "idk", "failed": False, "action": "idk",
        "seconds": dynamic.trace["attribute"]["seconds"]}
    assert "dynamic question without KG evidence" in dynamic.trace["why"]
    assert dynamic.trace["attempts"][-1]["raw_output"] == "Canberra"  # the verifier saw it; the policy refused it
    assert "attributes" in dynamic.trace["stages"]


def test_kg_evidence_lets_a_dynamic_question_be_answered():
    kg = FakeKG({"what is the capital of australia now?": ["The capital of Australia is Canberra."]})
    pipe, _ = build({"attributes.enabled": True, "pipeline.task": 2}, kg=kg, attributes=predictor("idk"))
    answer = pipe.answer(queries("what is the capital of australia now?"))[0]
    assert (answer.text, answer.source) == ("Canberra", "kg") and answer.trace["attribute"]["action"] == "answer"


class FixedCosineEmbedder:
    """Every supporting sentence has cosine `cosine` to query + answer."""

    def __init__(self, cosine):
        self.cosine = cosine

    def encode(self, texts, is_query=False):
        rows = np.tile([self.cosine, np.sqrt(1 - self.cosine ** 2)], (len(texts), 1))
        rows[0] = [1.0, 0.0]
        return rows


@pytest.mark.parametrize("cosine, kept", [(0.9, True), (0.75, False)])
def test_verify_policy_asks_the_verifier_for_a_stricter_similarity(cosine, kept):
    overrides = {"attributes.enabled": True, "attributes.dynamic_policy": "verify",
                 "attributes.dynamic_verify_threshold": 0.8, "verifier.min_similarity": 0.7}
    pipe, _ = build(overrides, attributes=predictor("verify"),
                    verifier=lambda c: SupportVerifier(c.verifier, embedder=FixedCosineEmbedder(cosine)))
    static, dynamic = pipe.answer(queries("what is the capital of australia?", "what is the capital now?"))
    assert static.text == "Canberra"  # 0.75 passes the profile's 0.7
    assert dynamic.trace["attribute"]["action"] == "verify"
    if kept:
        assert dynamic.text == "Canberra"
    else:
        assert dynamic.text == IDK and "stricter check" in dynamic.trace["why"] and "similarity 0.75" in dynamic.trace["why"]


def test_a_failing_attribute_prediction_costs_only_its_question():
    pipe, _ = build({"attributes.enabled": True}, attributes=predictor("idk", RaisingPredictor))
    good, bad = pipe.answer(queries("what is the capital of australia?", "bad capital question"))
    assert good.text == "Canberra" and good.trace["attribute"]["failed"] is False
    assert bad.trace["attribute"]["failed"] is True and bad.trace["attribute"]["label"] == "dynamic"
    assert bad.text == IDK  # the cautious side, by the idk policy


def test_attributes_only_run_for_their_tasks():
    pipe, _ = build({"attributes.enabled": True, "attributes.tasks": [2]}, attributes=predictor("idk"))
    answer = pipe.answer(queries("what is the capital now?"))[0]
    assert answer.text == "Canberra" and "attribute" not in answer.trace


# ---------------------------------------------------------------- reasoning, backup, knowledge, calculator
def test_reasoning_replaces_the_answer_step_and_passes_the_verifier():
    pipe, generator = build({"reasoning.enabled": True})
    answer = pipe.answer(queries("what is the capital of australia?"))[0]
    assert (answer.text, answer.source) == ("Canberra", "reasoning")
    assert generator.roles() == ["reasoning"]  # no short-answer call
    assert answer.trace["reasoning"]["source"] == "reasoning" and "Final answer: Canberra" in answer.trace["reasoning"]["output"]
    assert answer.trace["attempts"][-1]["verifier"]["accepted"] and "reasoning" in answer.trace["stages"]
    assert CANBERRA in generator.prompts["reasoning"][0]


def test_an_unsupported_reasoning_answer_is_i_dont_know():
    pipe, _ = build({"reasoning.enabled": True}, generator=Scripted(reasoning="False premise: no\nFinal answer: Perth"))
    answer = pipe.answer(queries("what is the capital of australia?"))[0]
    assert answer.text == IDK and "not in the evidence" in answer.trace["why"]
    assert answer.trace["reasoning"]["answer"] == "Perth"


def test_the_backup_summarizer_answers_when_reasoning_has_no_final_answer():
    pipe, generator = build({"reasoning.enabled": True}, generator=Scripted(reasoning="I think it is"))
    answer = pipe.answer(queries("what is the capital of australia?"))[0]
    assert (answer.text, answer.trace["reasoning"]["source"]) == ("Canberra", "backup")
    assert generator.roles() == ["reasoning", "backup"]


def test_the_backup_summarizer_covers_requests_the_reasoning_budget_cut():
    # reasoning.budget_s 0.001: the reasoning call's deadline has passed when it starts (the stand-in then
    # answers "" like the real backends); the summarizer still runs on the references.
    pipe, generator = build({"reasoning.enabled": True, "reasoning.budget_s": 1e-9})
    answer = pipe.answer(queries("what is the capital of australia?"), deadline=Deadline(100))[0]
    assert answer.text == "Canberra" and answer.trace["reasoning"]["source"] == "backup"
    assert answer.trace["attempts"][-1]["raw_output"] == "Canberra"
    assert CANBERRA in generator.prompts["backup"][0]  # the references were its material


def test_a_failing_reasoner_costs_only_its_question():
    class FlakyReasoner:
        def answer(self, queries, query_times, references, deadline=None):
            if any("bad" in q for q in queries):
                raise RuntimeError("reasoner down")
            return [ReasonedAnswer("Canberra", "reasoning", "Final answer: Canberra") for _ in queries]

    pipe, _ = build({"reasoning.enabled": True}, reasoner=FlakyReasoner())
    good, bad = pipe.answer(queries("what is the capital of australia?", "bad question"))
    assert (good.text, bad.text) == ("Canberra", IDK) and bad.trace["reasoning"]["source"] == "none"


def test_calculator_lines_are_references_and_evidence():
    generator = Scripted(reasoning="False premise: no\nFinal answer: 15.2")
    pipe, generator = build({"reasoning.enabled": True, "calculator.enabled": True, "calculator.samples": 3},
                            generator=generator)
    answer = pipe.answer(queries("how much did the share price rise?"))[0]
    assert answer.trace["calculator"]["value"] == "15.2" and answer.trace["calculator"]["votes"] == 3
    assert "185.2 - 170.0 = 15.2 (3 of 3 samples agree)" in generator.prompts["reasoning"][0]
    assert answer.text == "15.2"  # 15.2 is in no page: the calculator line is its evidence
    assert generator.roles() == ["calc", "reasoning"] and "calculator" in answer.trace["stages"]


def test_a_calculator_without_a_valid_expression_adds_no_line():
    generator = Scripted(calc="the price went up", reasoning="Final answer: 15.2")
    pipe, generator = build({"reasoning.enabled": True, "calculator.enabled": True}, generator=generator)
    answer = pipe.answer(queries("how much did the share price rise?"))[0]
    assert answer.trace["calculator"] == {"value": None, "seconds": answer.trace["calculator"]["seconds"]}
    assert answer.text == IDK  # nothing computed it, no page says it


def test_the_knowledge_note_is_a_reference_never_evidence():
    generator = Scripted(reasoning="False premise: no\nFinal answer: Sydney")
    pipe, generator = build({"reasoning.enabled": True, "reasoning.knowledge.enabled": True}, generator=generator)
    answer = pipe.answer(queries("what is the capital of australia?"))[0]
    assert answer.trace["knowledge"]["note"] == "Answer: Sydney"
    assert "Answer: Sydney" in generator.prompts["reasoning"][0]
    assert answer.text == IDK  # the model's memory alone does not support an answer
    assert generator.roles() == ["knowledge", "reasoning"]


def test_knowledge_and_calculator_run_under_their_stage_budgets():
    overrides = {"reasoning.enabled": True, "reasoning.knowledge.enabled": True, "calculator.enabled": True,
                 "pipeline.stage_budgets": {"knowledge": 0.25, "calculator": 0.5}}
    pipe, generator = build(overrides)
    pipe.answer(queries("what is the capital of australia?"), deadline=Deadline(100))
    left = {role: seconds for role, _, seconds in generator.calls}
    assert left["knowledge"] <= 25.01 and 25 < left["calc"] <= 50.01 and left["reasoning"] > 70
    assert left["reasoning"] <= 100 - pipe.config.reasoning.backup.reserve_s


def test_expired_deadline_skips_the_optional_inputs():
    overrides = {"reasoning.enabled": True, "reasoning.knowledge.enabled": True, "calculator.enabled": True}
    pipe, generator = build(overrides)
    answers = pipe.answer(queries("q1"), deadline=Deadline(0))
    assert answers[0].text == IDK and generator.calls == []


def test_reasoning_runs_only_for_its_tasks():
    pipe, generator = build({"reasoning.enabled": True, "reasoning.tasks": [2, 3]})
    answer = pipe.answer(queries("what is the capital of australia?"))[0]
    assert answer.source == "web" and generator.roles() == ["answer"] and "reasoning" not in answer.trace


def test_no_references_means_no_reasoning_call():
    class EmptyWeb(FakeWeb):
        def retrieve(self, queries, task, deadline=None):
            return [Evidence("web") for _ in queries]

    config = load_config("cpu", {"pipeline.task": 1, "reasoning.enabled": True})
    generator = Scripted()
    answer = Pipeline(Parts(config, generator=generator, web=EmptyWeb(), router=FakeRouter())).answer(queries("q1"))[0]
    assert answer.text == IDK and generator.calls == [] and answer.trace["why"] == "no context to answer from"


def test_the_web_trace_names_the_extractor_of_every_page():
    class StatsWeb(PageWeb):
        def retrieve(self, queries, task, deadline=None):
            from models.web.retriever import RetrievalStats

            stats = RetrievalStats(extract_ms=1500, chunk_ms=20)
            return [Evidence("web", e.items, provenance={"extractors": ["trafilatura", "fallback"], "stats": stats})
                    for e in super().retrieve(queries, task, deadline)]

    config = load_config("cpu", {"pipeline.task": 1, **NO_EMBEDDER, "web.main_content.enabled": True})
    answer = Pipeline(Parts(config, generator=Scripted(), web=StatsWeb(), router=FakeRouter())).answer(queries("capital of australia?"))[0]
    assert answer.trace["web"] == {"extractors": ["trafilatura", "fallback"], "sentence_chunks": False,
                                   "extract_s": 1.5, "chunk_s": 0.02}


def test_kg_facts_are_references_of_the_reasoning_step():
    class FactsOnlyKG(FakeKG):
        def run(self, query, domain, program, deadline=None, max_direct_items=10):
            return KGEvidence(program, "executed", ("The capital of Australia is Canberra.",))

    generator = Scripted(answer="I don't know")  # the KG answer step abstains, so the web stage runs
    pipe, generator = build({"reasoning.enabled": True, "pipeline.task": 2}, kg=FactsOnlyKG({}),
                            generator=generator)
    answer = pipe.answer(queries("what is the capital of australia?"))[0]
    assert answer.source == "reasoning" and "### KG fact 1:\nThe capital of Australia is Canberra." in \
        generator.prompts["reasoning"][0]


def test_a_question_neither_reasoning_nor_backup_answered_says_the_deadline_cut_it():
    pipe, _ = build({"reasoning.enabled": True, "reasoning.budget_s": 1e-9}, generator=Scripted(backup=""))
    answer = pipe.answer(queries("what is the capital of australia?"), deadline=Deadline(100))[0]
    assert answer.text == IDK and answer.trace["reasoning"]["source"] == "backup"
    assert answer.trace["why"].startswith("no model output")


@pytest.mark.parametrize("enabled", [False, True])
def test_from_config_builds_the_attribute_predictor_only_when_enabled(monkeypatch, enabled):
    import models.pipeline as pipeline_module
    from models.embedder import Embedder
    import models.routing
    import models.trim
    from models.web.retriever import WebRetriever

    embedder, built = object(), []
    monkeypatch.setattr(pipeline_module, "make_generator", lambda config, models_dir, missing=None: Scripted())
    monkeypatch.setattr(Embedder, "from_config", staticmethod(lambda config, models_dir: embedder))
    monkeypatch.setattr(WebRetriever, "from_config", classmethod(lambda cls, cfg, models_dir, embedder: PageWeb()))
    monkeypatch.setattr(models.routing, "make_router", lambda config, generator, embedder: FakeRouter())
    monkeypatch.setattr(models.trim, "load_grader_trim", lambda path: None)
    monkeypatch.setattr(AttributePredictor, "from_config", classmethod(
        lambda cls, config, embedder, generator: built.append(embedder) or predictor()))
    config = load_config("cpu", {"pipeline.task": 1, "attributes.enabled": enabled, "pipeline.use_public_data": []})
    pipe = Pipeline.from_config(config)
    assert (pipe.attribute_policy is not None) == enabled and built == ([embedder] if enabled else [])
