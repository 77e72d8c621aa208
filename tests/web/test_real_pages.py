"""The CPU profile's web pathway on real CRAG questions (the shared dev file; skipped without it)."""

import pytest

from models.config import load_config
from models.data import load_examples
from models.types import Query, SearchResult
from models.web import WebRetriever, format_context
from models.paths import resolve_repo_path

DEV_DATA = resolve_repo_path("../shared/crag/dev_data.jsonl.bz2")
EXPECTED = {  # interaction_id prefix -> a gold-answer string that must reach the LLM's context
    "55b219e5": "salesforce",  # what company in the dow jones is the best performer today?
    "1d2e8c37": "universal pictures",  # is dreamworks animation owned by time warner or universal pictures?
}


@pytest.fixture(scope="module")
def questions():
    if not DEV_DATA.exists():
        pytest.skip(f"{DEV_DATA} not available")
    found = {}
    for example in load_examples(DEV_DATA):
        key = example["interaction_id"][:8]
        if key in EXPECTED:
            pages = tuple(SearchResult.from_raw(p) for p in example["search_results"])
            found[key] = Query(example["interaction_id"], example["query"], example["query_time"], pages)
    return found


@pytest.fixture(scope="module")
def retriever(minilm_path, cpu_embedder):
    config = load_config("cpu")
    return WebRetriever.from_config(config.web, config.models_dir, embedder=cpu_embedder)


def test_gold_answers_reach_the_context(questions, retriever, words):
    keys = sorted(questions)
    results = retriever.retrieve([questions[k] for k in keys], task=1)  # one batch
    budget = load_config("cpu").web.context_max_tokens
    for key, chunks in zip(keys, results):
        assert chunks, key
        assert EXPECTED[key] in format_context(chunks, words, budget).lower(), key
