"""The OpenAI-compatible backend against a real vLLM server: vLLM 0.32.0's CPU build serving SmolLM2-135M with the
committed `api_generation` adapter as a LoRA module (evaluation/servers/vllm_server.py, profile cpu-vllm-server), the way
g4dn-server reaches `vllm serve` on the GPUs. One server for the module, stopped by its process id."""
from __future__ import annotations

import json
import socket
import threading
import time
from dataclasses import replace

import pytest

from models.config import REPO_ROOT, load_config
from models.kg.pathway import KGPathway
from models.llm.generator import GenerationRequest, completions_of
from models.llm.openai_backend import OpenAIGenerator
from models.types import Query
from tests.vllm_cpu import assert_programs_parse, require_vllm

SAMPLE = REPO_ROOT / "data" / "sample" / "crag_sample.jsonl"
CAPITAL = ({"role": "user", "content": "What is the capital of France?"},)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def server(model_folder, tmp_path_factory):
    require_vllm()
    from evaluation.servers.vllm_server import start_vllm_server, stop_vllm_server, wait_until_serving

    port = _free_port()
    log_path = tmp_path_factory.mktemp("vllm_server") / "server.log"
    process = start_vllm_server("cpu-vllm", port=port, log_path=log_path)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        served = wait_until_serving(url, process, timeout_s=300)
    except RuntimeError:
        stop_vllm_server(process)
        raise AssertionError(log_path.read_text(errors="replace")[-4000:]) from None
    yield {"url": url, "process": process, "served": served, "log": log_path}
    stop_vllm_server(process)


def _generator(url: str, **server):
    config = load_config("cpu-vllm-server", {"llm.server.base_url": url,
                                             **{f"llm.server.{k}": v for k, v in server.items()}})
    return OpenAIGenerator(config.llm, config.models_dir), config


def test_models_lists_the_base_model_and_the_adapter(server):
    assert {"smollm2", "api_generation"} <= server["served"]


def _programs_parse(generator, config, cpu_embedder) -> int:
    pathway = KGPathway(config.kg, client=None, embedder=cpu_embedder)
    rows = [json.loads(line) for line in SAMPLE.read_text(encoding="utf-8").splitlines() if line.strip()]
    requests = [pathway.api_request(Query.from_crag(row), row["domain"]) for row in rows]
    assert all(r.adapter == "api_generation" and r.constraint.grammar for r in requests)
    outputs = generator.generate(requests)
    assert not getattr(outputs, "reasons", {})
    return assert_programs_parse(outputs, [row["domain"] for row in rows])


def test_task2_programs_through_the_server_parse_under_the_grammar(server, cpu_embedder):
    """Every program is there and compiles, to at least one statement, in its question's domain."""
    assert _programs_parse(*_generator(server["url"]), cpu_embedder) == 20


def test_the_program_check_fails_when_the_server_sends_empty_programs(server, cpu_embedder, monkeypatch):
    """Planted: the server's programs come back empty; the check above must then fail."""
    generator, config = _generator(server["url"])
    monkeypatch.setattr(generator, "generate", lambda requests, **kwargs: [""] * len(requests))
    with pytest.raises(AssertionError, match="an empty program"):
        _programs_parse(generator, config, cpu_embedder)


def test_samples_and_log_probabilities_through_the_server(server):
    """A sampled request sends n (the server draws them); a greedy one with n = 3 is sent once and copied, because
    the real server refuses n > 1 when greedy (HTTP 400 "n must be 1 when using greedy sampling")."""
    generator, _ = _generator(server["url"])
    sampled = GenerationRequest(CAPITAL, max_new_tokens=10, temperature=1.0, n=3, logprobs=True)
    outputs = generator.generate([sampled, replace(sampled, temperature=0.0)])
    assert not getattr(outputs, "reasons", {})
    drawn, greedy = completions_of(outputs, 0), completions_of(outputs, 1)
    assert len(drawn) == 3 and all(c.token_logprobs for c in drawn)
    assert len(greedy) == 3 and len({c.text for c in greedy}) == 1 and greedy[0].token_logprobs


def test_the_adapter_and_the_base_model_mixed_in_one_batch(server, cpu_embedder):
    generator, config = _generator(server["url"])
    pathway = KGPathway(config.kg, client=None, embedder=cpu_embedder)
    row = json.loads(SAMPLE.read_text(encoding="utf-8").splitlines()[0])
    kg = replace(pathway.api_request(Query.from_crag(row), row["domain"]), constraint=None)
    base = replace(kg, adapter=None)
    alone = list(generator.generate([base]))
    mixed = list(generator.generate([base, kg, base, kg]))
    assert mixed[0] == mixed[2] == alone[0] and mixed[1] == mixed[3] != alone[0]


def _serve(port: int, log_path):
    from evaluation.servers.vllm_server import start_vllm_server, stop_vllm_server, wait_until_serving

    process = start_vllm_server("cpu-vllm", port=port, log_path=log_path)
    try:
        wait_until_serving(f"http://127.0.0.1:{port}/v1", process, timeout_s=300)
    except RuntimeError:
        stop_vllm_server(process)
        raise AssertionError(log_path.read_text(errors="replace")[-4000:]) from None
    return process


def test_a_run_whose_server_stops_answers_i_dont_know_and_its_resumed_run_completes_it(server, tmp_path):
    """UserModel's pipeline (profile cpu-vllm-server) over four sample questions in batches of two; the server is
    stopped once the first batch is saved, so the second batch's LLM calls fail: "i don't know", the reason in the
    trace, every question saved. The server comes back on the same port and the rerun asks exactly those again."""
    from evaluation.data import load_examples
    from evaluation.runner import PredictionLog, needs_asking_again, run_predictions
    from evaluation.servers.vllm_server import stop_vllm_server
    from models.crag_model import CragModel

    config = load_config("cpu-vllm-server", {"llm.server.base_url": server["url"], "llm.server.retries": 0})
    model = CragModel(config)
    examples = list(load_examples(SAMPLE))[:4]
    log = PredictionLog(tmp_path / "predictions.jsonl")
    batches = []

    def stop_after_first_batch(records):
        batches.append([r["interaction_id"] for r in records])
        if len(batches) == 1:
            stop_vllm_server(server["process"])

    stats = run_predictions(model, examples, log, batch_size=2, on_batch=stop_after_first_batch)
    saved = log.load()
    assert stats.n_new == 4 and [r["interaction_id"] for r in saved] == [e["interaction_id"] for e in examples]
    failed = [r for r in saved if needs_asking_again(r)]
    assert failed and all(r in saved[2:] for r in failed)  # only the batch after the stop
    for record in failed:
        assert record["prediction"] == "i don't know"
        assert any("server call failed" in (call.get("error") or "") for call in record["trace"]["llm_calls"])

    port = int(server["url"].rsplit(":", 1)[1].split("/")[0])
    server["process"] = _serve(port, tmp_path / "restarted.log")  # the module's teardown stops this one
    resumed = run_predictions(model, examples, log, batch_size=2)
    assert (resumed.n_resumed, resumed.n_new, resumed.n_asked_again) == (4 - len(failed), len(failed), len(failed))
    completed = log.load()
    assert [r["interaction_id"] for r in completed] == [e["interaction_id"] for e in examples]
    assert not any(needs_asking_again(r) for r in completed)
    assert completed[:2] == saved[:2]  # what was answered before the stop is kept as it was


def test_the_server_stopped_mid_batch_answers_empty_with_reasons_and_loses_nothing(server, tmp_path):
    """The last test of the module: the server is killed while a batch is in flight; every request comes back, the
    unfinished ones "" with the reason (the pipeline's "i don't know")."""
    from evaluation.servers.vllm_server import stop_vllm_server

    generator, _ = _generator(server["url"], retries=0, timeout_s=30.0)
    long = GenerationRequest(({"role": "user", "content": "Write a long story about a lighthouse."},),
                             max_new_tokens=1500)
    killer = threading.Timer(3.0, stop_vllm_server, args=(server["process"],))
    killer.start()
    started = time.monotonic()
    outputs = generator.generate([long] * 4)
    killer.join()
    assert len(outputs) == 4 and time.monotonic() - started < 60
    assert outputs.count("") >= 1
    assert all(outputs.reasons[i] for i, text in enumerate(outputs) if text == "")
