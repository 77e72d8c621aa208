"""Stand-ins shared by the training tests: a scripted generator and a fixed context source."""
import os

import pytest
from tests.stand_ins import ServesAnyAdapter

os.environ.setdefault("OMP_NUM_THREADS", "1")


class ScriptedGenerator(ServesAnyAdapter):
    """Replies by calling `reply(user_text)`; records every request. Tokens are whitespace words."""

    def __init__(self, reply):
        self.reply = reply
        self.requests = []

    def generate(self, requests, *, deadline=None):
        self.requests.extend(requests)
        return [self.reply(r.messages[-1]["content"]) for r in requests]

    def count_tokens(self, text):
        return len(text.split())

    def truncate_tokens(self, text, max_tokens):
        return " ".join(text.split()[:max_tokens])


class FixedContexts:
    """Context per query text (default "")."""

    def __init__(self, by_query):
        self.by_query = by_query

    def contexts(self, examples):
        return [self.by_query.get(e["query"], "") for e in examples]


def example(id_, query, answer, alt=(), question_type="simple", domain="movie", split=0):
    return {"interaction_id": id_, "query": query, "query_time": "03/01/2024, 10:00:00 PT", "answer": answer,
            "alt_ans": list(alt), "domain": domain, "question_type": question_type, "static_or_dynamic": "static",
            "search_results": [], "split": split}


@pytest.fixture
def scripted():
    return ScriptedGenerator


@pytest.fixture
def fixed_contexts():
    return FixedContexts


@pytest.fixture
def make_example():
    return example
