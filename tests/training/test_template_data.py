"""training/template_data.py (scripts/make_api_data.py's library): hand-written examples in real CRAG wording join
the SFT records (parsed, not run)."""
import json
from pathlib import Path

import pytest

from models.config import load_config
from models.kg.pathway import KGPathway
from models.paths import resolve_repo_path
from training import template_data
from training.api_data import APIDataError


def test_extra_examples_follow_the_template_records_with_the_adapters_short_request(tmp_path):
    kg = KGPathway(load_config("cpu", {"kg.api_prompt": "kg_api_adapter", "kg.icl_k": 0,
                                       "kg.api_adapter": "api_generation"}).kg, client=None)
    pool = resolve_repo_path("data/kg/icl_pool.jsonl")
    extra = template_data.read_extra([pool])
    assert len(extra) == sum(1 for line in Path(pool).read_text().splitlines() if line.strip())
    assert extra[0]["id"] == "icl_pool:1" and extra[0]["source"] == str(pool)
    out = tmp_path / "train.sft.jsonl"
    template_data.write_sft([], kg, out, extra=extra[:3])
    records = [json.loads(line) for line in out.read_text().splitlines()]
    assert len(records) == 3
    first = records[0]["messages"]
    assert first[-1] == {"role": "assistant", "content": 'get_movie("the prestige")["release_date"]'}
    assert "the movie the prestige" in first[-2]["content"] and len(first) == 3  # system, question, program


def test_an_extra_example_that_does_not_compile_is_an_error(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps({"query": "q?", "query_time": "", "domain": "movie", "program": "get_movie("}) + "\n")
    kg = KGPathway(load_config("cpu").kg, client=None)
    with pytest.raises(APIDataError):
        template_data.write_sft([], kg, tmp_path / "out.jsonl", extra=template_data.read_extra([bad]))
