"""`python local_evaluation.py` end to end with the real CPU profile: real retrieval, real LLM, real scoring.

These are the slowest default tests (each run loads the small models and answers two questions); the
whole-sample runs are marked `slow`.
"""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from models import crag_data
from models.config import load_config
from models.trace import LLM_CALL_KEYS, TRACE_KEYS
from models.verify.gate import candidate_answer
from tests.packaged import crag_file

REPO = Path(__file__).resolve().parent.parent


def run_evaluation(tmp_path, *args, timeout=600):
    env = {k: v for k, v in os.environ.items() if k not in ("CRAG_MOCK_API_URL", "CRAG_PROFILE")}
    env.setdefault("OMP_NUM_THREADS", "2")
    out = tmp_path / "out"
    proc = subprocess.run([sys.executable, "local_evaluation.py", "--output-dir", str(out), *args],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=timeout)
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads(proc.stdout.strip().splitlines()[-1])
    predictions = [json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()]
    return metrics, predictions, out, proc


def check_outputs(metrics, predictions, out, n):
    assert metrics["total"] == n and len(predictions) == n
    assert metrics["n_correct"] + metrics["n_miss"] + metrics["n_hallucination"] == n
    assert abs(metrics["score"] - (metrics["accuracy"] - metrics["hallucination"])) < 1e-9
    assert all(isinstance(p["prediction"], str) and p["prediction"] for p in predictions)
    assert len({p["interaction_id"] for p in predictions}) == n
    for name in ("summary.json", "report.md", "config.yaml", "verdicts.jsonl"):
        assert (out / name).exists(), name
    for prediction in predictions:  # every key of every trace is declared (models/trace.py)
        assert set(prediction["trace"]) <= TRACE_KEYS, set(prediction["trace"]) - TRACE_KEYS
        assert all(set(call) <= LLM_CALL_KEYS for call in prediction["trace"].get("llm_calls", []))
    return read_candidates(predictions)


def read_candidates(predictions) -> int:
    """How many candidates the answer reader read; every web and public-data candidate with an answer to keep carries
    its P(right) in the trace (the CPU profile's `verifier.reader`)."""
    pathways, read = load_config("cpu").verifier.reader_pathways, 0
    for prediction in predictions:
        for attempt in prediction["trace"].get("attempts", []):
            scores = attempt["verifier"].get("scores") or {}
            if attempt["pathway"] in pathways and candidate_answer(scores) is not None:
                assert 0 <= scores["reader"] <= 1, (prediction["interaction_id"], scores)
                read += 1
    return read


def test_task1_on_the_bundled_sample(tmp_path):
    metrics, predictions, out, _ = run_evaluation(tmp_path, "--limit", "2", "--batch-size", "2")
    check_outputs(metrics, predictions, out, 2)
    assert {p["source"] for p in predictions} <= {"web", "public", "fallback"}
    assert "| movie |" in (out / "report.md").read_text()
    for prediction in predictions:  # every answer carries its trace
        trace = prediction["trace"]
        assert trace["task"] == 1 and trace["stages"] and trace["why"]
        for call in trace["llm_calls"]:
            assert set(call) >= {"stage", "adapter", "prompt_tokens", "output_tokens", "seconds"}
        for attempt in trace["attempts"]:
            assert attempt["verifier"]["reason"] and "raw_output" in attempt


def test_task2_starts_the_bundled_mock_api(tmp_path):
    metrics, predictions, out, proc = run_evaluation(tmp_path, "--task", "2", "--limit", "2", "--batch-size", "2")
    check_outputs(metrics, predictions, out, 2)
    assert "mock KG API" in proc.stderr  # the run says it started (and later stopped) the local server


@pytest.mark.slow
def test_real_dev_data_with_the_grader_tokenizer(tmp_path):
    dev_data, tokenizer = crag_file(crag_data.DEV_FILE), crag_file(crag_data.TOKENIZER)
    metrics, predictions, out, _ = run_evaluation(tmp_path, "--data", str(dev_data), "--tokenizer", str(tokenizer))
    check_outputs(metrics, predictions, out, 10)


@pytest.mark.slow
def test_whole_sample_task1(tmp_path):
    metrics, predictions, out, _ = run_evaluation(tmp_path, timeout=1200)
    assert check_outputs(metrics, predictions, out, 20) > 0  # the sample's web answers were read
