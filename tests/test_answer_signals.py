"""The answer step's confidence signals reach the verifier's scores (and so the trace and the calibrated gate):
the greedy answer's token log-probabilities, k sampled answers beside it and their agreement, the KG program's
log-probability; and the sampled requests never change the answer."""
from models.config import load_config
from models.evidence import Evidence
from models.isolation import ItemResults
from models.llm.generator import Completion
from models.pipeline import Pipeline
from models.parts import Parts
from tests.test_pipeline import FakeKG, FakeRouter, FakeWeb, queries
from tests.stand_ins import ServesAnyAdapter


class SignallingGenerator(ServesAnyAdapter):
    """Answers "Christopher Nolan" (greedy) with log-probabilities; a sampled request gets its n samples; the KG
    request a program. Records every request."""

    def __init__(self, samples=("Christopher Nolan", "Nolan", "Steven Spielberg")):
        self.samples, self.requests = list(samples), []

    def generate(self, requests, *, deadline=None):
        self.requests.extend(requests)
        texts, completions = [], {}
        for i, r in enumerate(requests):
            prompt = r.messages[-1]["content"]
            text = 'get_movie("x")["director"]' if prompt.startswith("API for") else "Christopher Nolan"
            if r.n > 1:
                completions[i] = tuple(Completion(s) for s in (self.samples * r.n)[:r.n])
                text = completions[i][0].text
            elif r.logprobs:
                completions[i] = (Completion(text, (-0.1, -0.5, -0.3)),)
            texts.append(text)
        return ItemResults(texts, {}, completions)

    def count_tokens(self, text):
        return len(text.split())

    def truncate_tokens(self, text, max_tokens):
        return " ".join(text.split()[:max_tokens])


class DirectorWeb(FakeWeb):
    def retrieve(self, queries, task, deadline=None):
        from models.types import Chunk
        return [Evidence("web", (Chunk("Inception was directed by Christopher Nolan in 2010.",
                                       "https://example.org/inception"),)) for _ in queries]


def _pipeline(generator, kg_facts=None, **overrides):
    # no embedder here: the similarity threshold is off so the fakes' answers can pass the rules
    config = load_config("cpu", {"pipeline.task": 2, "verifier.min_similarity": 0.0, **overrides})
    return Pipeline(Parts(config, generator=generator, web=DirectorWeb(), router=FakeRouter(),
                          kg=FakeKG(kg_facts or {})))


def _scores(answer, pathway="web"):
    return [a for a in answer.trace["attempts"] if a["pathway"] == pathway][-1]["verifier"]["scores"]


def test_logprobs_of_the_answer_and_of_the_kg_program_reach_the_scores():
    generator = SignallingGenerator()
    facts = {"who directed inception?": ["The director of Inception is Christopher Nolan."]}
    [answer] = _pipeline(generator, facts).answer(queries("who directed inception?"))
    assert answer.text == "Christopher Nolan"
    scores = _scores(answer, "kg")
    assert scores["mean_logprob"] == -0.3 and scores["min_logprob"] == -0.5
    assert scores["query_logprob"] == -0.3 and scores["kg_outcome"] == "executed" and scores["kg_repaired"] is False
    assert all(r.logprobs for r in generator.requests)  # the KG program and the answer asked for them
    assert "samples" not in scores and "agreement" not in scores
    assert scores["domain"] == "movie"


def test_samples_are_drawn_beside_the_greedy_answer_and_their_agreement_is_scored():
    generator = SignallingGenerator()
    pipe = _pipeline(generator, **{"answering.samples": 3, "answering.sample_temperature": 0.9})
    [answer] = pipe.answer(queries("who directed inception?"))
    assert answer.text == "Christopher Nolan"  # the greedy answer, not a sample
    sampled = [r for r in generator.requests if r.n > 1]
    assert len(sampled) == 1 and sampled[0].n == 3 and sampled[0].temperature == 0.9 and not sampled[0].logprobs
    scores = _scores(answer)
    assert scores["samples"] == 3 and scores["agreement"] == round(1 / 3, 4)  # "Nolan" alone does not state it
    calls = [c for c in answer.trace["llm_calls"] if c.get("n") == 3]
    assert calls and calls[0]["temperature"] == 0.9


def test_without_logprobs_nothing_is_asked_and_nothing_is_scored():
    generator = SignallingGenerator()
    [answer] = _pipeline(generator, **{"answering.logprobs": False}).answer(queries("who directed inception?"))
    assert not any(r.logprobs for r in generator.requests)
    assert "mean_logprob" not in _scores(answer)


def test_an_answer_gets_the_query_log_probability_of_the_source_it_was_answered_from():
    """The public-data shortcut's pathway is "public", its source "public_data": the source's name is passed with
    the answers, never derived from the pathway's."""
    from models.answering.attempt import Attempt
    from models.answering.verify_step import VerifyStep
    from models.pathways import PUBLIC
    from models.run import QueryState
    from models.types import Query
    from models.verify import Decision, Stop

    class Recording:
        def __init__(self):
            self.candidates = []

        def verify(self, candidates, deadline=None):
            self.candidates.extend(candidates)
            return [Decision(c.answer, True, Stop.SUPPORTED, details={"lexical": 1.0, "similarity": None})
                    for c in candidates]

    state = QueryState(Query("1", "who won best picture in 2020?"))
    state.query_logprobs.update(public_data=-0.2, kg=-0.7)
    verifier = Recording()
    VerifyStep(verifier).settle(PUBLIC, [Attempt(state, "parasite", "parasite")], None, False, source="public_data")
    assert verifier.candidates[0].signals["query_logprob"] == -0.2 and "kg_outcome" not in verifier.candidates[0].signals
    assert state.trace["attempts"][0]["verifier"]["stop"] == "supported" and state.stop == "supported"
