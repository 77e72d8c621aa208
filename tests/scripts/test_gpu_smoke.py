"""The GPU acceptance script's CPU-side parts (the checks themselves need CUDA: run the script on a GPU)."""
from tests.cuda_recorder import calls_before_engine, cuda_events  # noqa: F401 - cuda_events is a fixture
from tests.scripts.script_loader import load_script

gpu_smoke = load_script("gpu_smoke")


def test_tensor_parallel_size_divides_the_head_counts():
    smollm2 = {"num_attention_heads": 9, "num_key_value_heads": 3}
    llama3 = {"num_attention_heads": 32, "num_key_value_heads": 8}
    assert gpu_smoke.tensor_parallel_size(smollm2, 4) == 3
    assert gpu_smoke.tensor_parallel_size(smollm2, 2) == 1
    assert gpu_smoke.tensor_parallel_size(llama3, 4) == 4
    assert gpu_smoke.tensor_parallel_size(llama3, 0) == 1


def test_a_failing_check_is_reported_not_raised():
    report = gpu_smoke.Report()
    report.run("ok", lambda: (True, {"x": 1}))
    report.run("broken", lambda: 1 / 0)
    assert report.checks == {"ok": True, "broken": False}
    assert "ZeroDivisionError" in report.details["broken"] and report.details["ok"] == {"x": 1}


def test_the_smoke_check_builds_the_engine_before_any_cuda_call(cuda_events, tmp_path):
    """gpu_smoke's vLLM check probes the GPUs through NVML and starts the engine before touching CUDA."""
    import json
    from argparse import Namespace

    import pytest

    from tests.fake_weights import LLAMA_3_8B_CONFIG

    folder = tmp_path / "llama"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(LLAMA_3_8B_CONFIG))
    adapters = {}
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "adapter_config.json").write_text("{}")
        adapters[name] = str(tmp_path / name)
    args = Namespace(model=str(folder), dtype="half", max_model_len=4096, gpu_memory_utilization=0.5,
                     tensor_parallel_size=0, enforce_eager=True, requests=4, max_new_tokens=8)
    report = gpu_smoke.Report()
    with pytest.raises(AttributeError):  # the stand-in engine has no tokenizer to generate with: built, then stop
        gpu_smoke.vllm_checks(report, args, folder, adapters, str(tmp_path))
    assert calls_before_engine(cuda_events) == []
    assert report.details["vllm_tensor_parallel"] == {"size": 4, "gpus": 4}  # NVML's count, Llama 3's heads


def test_the_hf_check_is_placed_for_the_grader_gpus():
    """Llama-3-8B in fp16 (16 GB) does not fit one 16 GB T4: spread over the four; SmolLM2 fits one."""
    from tests.fake_weights import LLAMA_3_8B_CONFIG

    t4, h100 = 15_835_660_288, 85_520_809_984  # torch's total_memory of each
    assert 15.9e9 < gpu_smoke.weight_bytes(LLAMA_3_8B_CONFIG) < 16.2e9  # 8.03 B parameters
    assert gpu_smoke.hf_placement(LLAMA_3_8B_CONFIG, [t4] * 4) == {"device_map": "auto"}
    assert gpu_smoke.hf_placement(LLAMA_3_8B_CONFIG, [h100]) == {}
    smollm2 = {"model_type": "llama", "num_hidden_layers": 30, "hidden_size": 576, "intermediate_size": 1536,
               "num_attention_heads": 9, "num_key_value_heads": 3, "vocab_size": 49152, "tie_word_embeddings": True}
    assert gpu_smoke.hf_placement(smollm2, [t4] * 4) == {}
    import pytest

    with pytest.raises(ValueError, match="do not fit 1 GPU"):
        gpu_smoke.hf_placement(LLAMA_3_8B_CONFIG, [t4])


def test_vllm_is_shut_down_before_the_checks_that_load_models(monkeypatch):
    """Even when a vLLM check breaks after the engine started: the engine is closed, then the HF check runs."""
    from argparse import Namespace

    events = []

    class Engine:
        def close(self):
            events.append("close")

    def vllm_checks(report, args, folder, adapters, models_dir, started):
        started.append(Engine())
        events.append("vllm")
        raise RuntimeError("a check broke")

    monkeypatch.setattr(gpu_smoke, "vllm_checks", vllm_checks)
    monkeypatch.setattr(gpu_smoke, "release_vllm", lambda started: [s.close() for s in started] and (True, None))
    monkeypatch.setattr(gpu_smoke, "hf_check", lambda *a: events.append("hf") or (True, None))
    monkeypatch.setattr(gpu_smoke, "embedder_check", lambda *a: (events.append("embedder") or True, None, None))
    monkeypatch.setattr(gpu_smoke, "reranker_check", lambda *a: events.append("reranker") or (True, None))
    report = gpu_smoke.Report()
    gpu_smoke.run_checks(report, Namespace(), None, {"a": "x"}, "models")
    assert events == ["vllm", "close", "hf", "embedder", "reranker"]
    assert report.checks["vllm"] is False and "a check broke" in report.details["vllm"]
