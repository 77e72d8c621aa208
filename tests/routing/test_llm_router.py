"""db3's domain prompt router: request shape and robust parsing of whatever the model says."""
import pytest

from models.routing import LLMRouter, parse_domain
from models.types import DOMAINS, Query
from tests.stand_ins import ServesAnyAdapter


@pytest.mark.parametrize("output, expected", [
    ("movie", "movie"), ("Movie", "movie"), (" MOVIE.", "movie"), ("movies", "movie"), ("film", "movie"),
    ("sports", "sports"), ("Sport", "sports"), ("finance", "finance"), ("Financial", "finance"),
    ("stocks", "finance"), ("music", "music"), ("musical", "music"), ("Song", "music"),
    ("other", "open"), ("Other.", "open"), ("open", "open"),
    ("Answer: finance", "finance"), ("Category: music\nQuestion", "music"), ("**sports**", "sports"),
    ("movie music", "movie"),  # the first word wins (db3's fixed order would say music)
    ("", "open"), ("   ", "open"), ("I cannot answer", "open"), ("Paris", "open"), ("amusic", "open"),
    ("\u00e9\u00e8\x00", "open"),
])
def test_parse_domain(output, expected):
    assert parse_domain(output) == expected


def test_parse_domain_handles_none():
    assert parse_domain(None) == "open"


class RecordingGenerator(ServesAnyAdapter):
    def __init__(self, outputs):
        self.outputs, self.requests, self.deadlines = outputs, [], []

    def generate(self, requests, *, deadline=None):
        self.requests.append(list(requests))
        self.deadlines.append(deadline)
        return self.outputs[:len(requests)]


def queries(*texts):
    return [Query(f"id{i}", text) for i, text in enumerate(texts)]


def test_one_batched_call_on_the_base_model():
    generator = RecordingGenerator(["movie", " Sports", "garbage"])
    router = LLMRouter(generator, "domain", max_new_tokens=3)
    domains = router.route(queries("when was inception released?", "who won the 2023 nba finals?", "hi"),
                           deadline="D")
    assert domains == ["movie", "sports", "open"]
    [batch] = generator.requests
    assert generator.deadlines == ["D"]
    assert all(r.adapter is None and r.max_new_tokens == 3 for r in batch)
    system, user = batch[0].messages
    assert system == {"role": "system", "content": "You are an assistant expert in movie, sports, finance and music fields."}
    assert "Question: when was inception released? Answer:" in user["content"]
    assert "please answer other" in user["content"]


def test_missing_outputs_route_to_open_and_keep_order():
    router = LLMRouter(RecordingGenerator(["music"]), "domain")
    assert router.route(queries("a", "b", "c")) == ["music", "open", "open"]


def test_empty_batch_makes_no_call():
    generator = RecordingGenerator([])
    assert LLMRouter(generator).route([]) == [] and generator.requests == []


def test_every_output_is_a_known_domain():
    outputs = ["finance", "other", "", "film", "x" * 50]
    assert set(LLMRouter(RecordingGenerator(outputs)).route(queries(*"abcde"))) <= set(DOMAINS)
