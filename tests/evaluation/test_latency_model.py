"""The latency projection on synthetic traces (the schema `trace["llm_calls"]` of predictions.jsonl)."""
import json

import pytest

from evaluation.experiments import latency_model
from models.config import REPO_ROOT, load_config
from models.latency import LLMLatency

SAMPLE = REPO_ROOT / "data" / "sample" / "crag_sample.jsonl"


class QuarterTokenizer:
    def encode(self, text):
        return list(range(len(text) // 4 + 1))


def _row(example, calls, kg=None):
    trace = {"llm_calls": [dict(zip(("stage", "adapter", "prompt_tokens", "output_tokens", "seconds"), c))
                           for c in calls]}
    if kg:
        trace["kg"] = kg
    return {"interaction_id": example["interaction_id"], "query": example["query"],
            "query_time": example["query_time"], "trace": trace}


@pytest.fixture()
def examples():
    return [json.loads(line) for line in SAMPLE.read_text().splitlines()[:3]]


def test_stages_group_calls_and_cap_outputs(examples):
    rows = [_row(e, [("kg api", None, 900, 20, 1.0), ("answer answer_ctrl", None, 3000, 10, 2.0)]) for e in examples]
    batch = latency_model.batch_of(rows)
    assert len(batch) == 16 and batch[3] is rows[0]
    stages = latency_model.llm_stages(batch, latency_model.stage_caps(load_config("g4dn")), context_tokens=4000)
    assert set(stages) == {"kg api", "answer answer_ctrl"}
    assert stages["answer answer_ctrl"]["prompts"] == [3000] * 16 and stages["answer answer_ctrl"]["outputs"] == [10] * 16
    assert stages["answer answer_ctrl"]["caps"] == [64] * 16 and stages["kg api"]["caps"] == [96] * 16
    assert stages["answer answer_ctrl"]["prompt_caps"] == [4300] * 16 and stages["kg api"]["prompt_caps"] == [900] * 16
    with pytest.raises(ValueError):
        latency_model.batch_of([])


def test_kg_calls_counted_from_the_traced_programs(examples):
    rows = [_row(examples[0], [], kg={"program": "a\nb", "statements": ["a", "b"]}),
            _row(examples[1], [], kg={"program": "a"}), _row(examples[2], [])]
    assert latency_model.kg_calls(rows) == 3


def test_projection_of_a_synthetic_run(tmp_path, examples):
    (tmp_path / "latency_run.json").write_text(json.dumps({"task": 1, "data": str(SAMPLE)}))
    rows = [_row(e, [("answer answer_ctrl", None, 3000, 10, 2.0)]) for e in examples]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    result = latency_model.project(tmp_path, QuarterTokenizer(), LLMLatency())
    stages = result["stages"]
    answer = next(v for k, v in stages.items() if k.startswith("llm: answer"))
    expected_worst = LLMLatency().call_seconds([4300] * 16, [64] * 16, lora=True)
    assert answer[1] == pytest.approx(expected_worst) and answer[0] < answer[1]
    assert any(k.startswith("web: embed") and v[0] > 0 for k, v in stages.items())
    assert not any(k.startswith("kg") for k in stages)  # Task 1: no KG
    assert result["worst_s"] == pytest.approx(sum(v[1] for v in stages.values()))
    assert result["budget_s"] == 460 and result["headroom"] == pytest.approx(1 - result["worst_s"] / 460)


def test_the_worst_case_pays_an_answer_call_the_traced_run_did_not_make(tmp_path, examples):
    """A traced Task-2 question the KG answered made no answer call; a KG miss would: the worst case has one."""
    (tmp_path / "latency_run.json").write_text(json.dumps({"task": 2, "data": str(SAMPLE)}))
    rows = [_row(e, [("kg api", None, 900, 20, 1.0)]) for e in examples]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    stages = latency_model.project(tmp_path, QuarterTokenizer(), LLMLatency())["stages"]
    [(traced, worst)] = [v for k, v in stages.items() if k.startswith("llm: answer (not traced")]
    assert traced == 0 and worst == pytest.approx(LLMLatency().call_seconds([4300] * 16, [64] * 16, lora=True))


def test_the_budget_is_the_deadline_the_g4dn_model_runs_a_batch_of_16_under():
    """One figure: the projection's budget is the deadline `CragModel` gives itself (460 s of 480)."""
    from models.config import load_config
    from models.crag_model import CragModel
    from models.types import Answer

    class Recording:
        def answer(self, queries, deadline):
            self.remaining = deadline.remaining()
            return [Answer("x", "web") for _ in queries]

    pipeline = Recording()
    model = CragModel(load_config("g4dn"), pipeline=pipeline)
    batch = {"interaction_id": [str(i) for i in range(16)], "query": ["q"] * 16, "search_results": [[]] * 16,
             "query_time": [""] * 16}
    model.batch_generate_answer(batch)
    assert latency_model.budget_s() == 460.0 == pytest.approx(pipeline.remaining, abs=1.0)


def test_the_dev_set_projection_spreads_whole_batches_over_the_servers():
    result = {"traced_s": 18.0, "worst_s": 72.0}
    # 2,706 questions are 170 batches of 16; 4 servers take 43 each (the last one 41)
    assert latency_model.dev_set_hours(result, 2706, 1) == (170 * 18 / 3600, 170 * 72 / 3600)
    assert latency_model.dev_set_hours(result, 2706, 4) == (43 * 18 / 3600, 43 * 72 / 3600)
    assert latency_model.dev_set_hours(result, 16, 8) == (18 / 3600, 72 / 3600)


def test_g4dn_hf_is_projected_with_its_backend_and_the_stages_adapters(tmp_path, examples):
    from models.latency import HFLatency

    (tmp_path / "latency_run.json").write_text(json.dumps({"task": 2, "data": str(SAMPLE)}))
    rows = [_row(e, [("kg api", None, 900, 20, 1.0), ("public entity", None, 300, 5, 0.1)]) for e in examples]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    llm = latency_model.llm_latency("g4dn-hf")
    assert isinstance(llm, HFLatency) and llm.cards == 4 and llm.max_batch_size == 8
    assert not isinstance(latency_model.llm_latency("g4dn"), HFLatency)
    result = latency_model.project(tmp_path, QuarterTokenizer(), llm, "g4dn-hf")
    assert result["profile"] == "g4dn-hf"
    [(kg_traced, _)] = [v for k, v in result["stages"].items() if k.startswith("llm: kg api")]
    assert kg_traced == pytest.approx(2 * llm.call_seconds([900] * 8, [20] * 8, lora=True))  # api_generation
    [(public, _)] = [v for k, v in result["stages"].items() if k.startswith("llm: public entity")]
    assert public == pytest.approx(2 * llm.call_seconds([300] * 8, [5] * 8))  # the base model's stage
    vllm = latency_model.project(tmp_path, QuarterTokenizer(), latency_model.llm_latency("g4dn"), "g4dn")
    assert result["worst_s"] > vllm["worst_s"]


def test_each_stage_gets_the_adapter_the_g4dn_profiles_give_it():
    config = load_config("g4dn")
    assert [latency_model.g4dn_adapter(s, config) for s in
            ("kg api", "answer answer_ctrl", "answer answer_kg", "public entity", "sql statement")] == \
        ["api_generation", "web_answer", "kg_answer", None, None]


def test_margins_per_question_and_to_the_batch_deadline():
    result = {"worst_s": 160.0, "budget_s": 460.0}
    assert latency_model.per_question(result) == {"worst_per_question_s": 10.0, "margin_per_question_s": 20.0,
                                                  "margin_batch_s": 300.0}


def test_the_triton_fma_band_moves_only_vllms_projection(tmp_path, examples):
    """vLLM's answer stage is slower at the low end of the FMA band; the HF profile has no Triton kernel."""
    from dataclasses import replace

    from models.latency import FMA_FRACTION_RANGE, Efficiency

    (tmp_path / "latency_run.json").write_text(json.dumps({"task": 3, "data": str(SAMPLE)}))
    rows = [_row(e, [("answer answer_ctrl", None, 3000, 10, 2.0)]) for e in examples]
    (tmp_path / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    low, high = (replace(Efficiency(), fma_fraction=f) for f in FMA_FRACTION_RANGE)

    def answer(llm):
        stages = latency_model.project(tmp_path, QuarterTokenizer(), llm)["stages"]
        return next(v for k, v in stages.items() if k.startswith("llm: answer"))[1]

    assert answer(latency_model.llm_latency("g4dn", low)) > answer(latency_model.llm_latency("g4dn", high))
    assert answer(latency_model.llm_latency("g4dn-hf", low)) == pytest.approx(
        answer(latency_model.llm_latency("g4dn-hf", high)))
    assert latency_model.load_calibration(None).efficiency == Efficiency()
