"""The GPU acceptance checks (`submission/gpu_smoke.py`): their verdicts as pure functions, the plumbing end to end
on CPU (`scripts/gpu_smoke.py --device cpu`), and, marked gpu, the whole no-vLLM run on a CUDA machine."""
import pytest

import submission.gpu_smoke as gpu_smoke
from submission import smoke_checks, smoke_hf
from tests.cuda_recorder import calls_before_engine, cuda_events  # noqa: F401 - cuda_events is a fixture
from tests.stand_ins import ServesAnyAdapter


def test_tensor_parallel_size_divides_the_head_counts():
    smollm2 = {"num_attention_heads": 9, "num_key_value_heads": 3}
    llama3 = {"num_attention_heads": 32, "num_key_value_heads": 8}
    assert smoke_checks.tensor_parallel_size(smollm2, 4) == 3
    assert smoke_checks.tensor_parallel_size(smollm2, 2) == 1
    assert smoke_checks.tensor_parallel_size(llama3, 4) == 4
    assert smoke_checks.tensor_parallel_size(llama3, 0) == 1


def test_a_failing_check_is_reported_not_raised():
    report = smoke_checks.Report()
    report.run("ok", lambda: (True, {"x": 1}))
    report.run("broken", lambda: 1 / 0)
    assert report.checks == {"ok": True, "broken": False}
    assert "ZeroDivisionError" in report.details["broken"] and report.details["ok"] == {"x": 1}


def test_the_vllm_check_times_a_call_with_its_output_tokens():
    """vllm_checks measures tokens/s with `timed`; it had been lost in a move and only a GPU run would reach it."""
    class Generator(ServesAnyAdapter):
        def generate(self, requests):
            return ["a b c"] * len(requests)

        def count_tokens(self, text):
            return len(text.split())

    outputs, seconds, tokens = smoke_checks.timed(Generator(), [None, None])
    assert outputs == ["a b c", "a b c"] and tokens == 6 and seconds >= 0


def test_no_cuda_is_one_line_per_check_not_a_traceback(capsys):
    """On a machine without CUDA every CUDA check fails for one reason: each says it in one line (what to do),
    while any other failure keeps its traceback."""
    def no_cuda():
        raise smoke_checks.NoCUDA("no CUDA device is visible: run on a GPU, or with --device cpu to test the plumbing")

    report = smoke_checks.Report()
    report.run_on(no_cuda, {"hf_fp16_mixed_batch": None, "hf_deadline": None})
    report.run("broken", lambda: 1 / 0)
    err = capsys.readouterr().err
    assert report.checks == {"hf_fp16_mixed_batch": False, "hf_deadline": False, "broken": False}
    assert "hf_deadline: no CUDA device is visible: run on a GPU, or with --device cpu" in err
    assert err.count("Traceback") == 1 and "ZeroDivisionError" in err


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
    report = smoke_checks.Report()
    with pytest.raises(AttributeError):  # the stand-in engine has no tokenizer to generate with: built, then stop
        gpu_smoke.vllm_checks(report, args, folder, adapters, str(tmp_path))
    assert calls_before_engine(cuda_events) == []
    assert report.details["vllm_tensor_parallel"] == {"size": 4, "gpus": 4}  # NVML's count, Llama 3's heads


def test_the_hf_check_is_placed_for_the_grader_gpus():
    """Llama-3-8B in fp16 (16 GB) does not fit one 16 GB T4: spread over the four; SmolLM2 fits one."""
    from tests.fake_weights import LLAMA_3_8B_CONFIG

    t4, h100 = 15_835_660_288, 85_520_809_984  # torch's total_memory of each
    assert 15.9e9 < smoke_checks.weight_bytes(LLAMA_3_8B_CONFIG) < 16.2e9  # 8.03 B parameters
    assert smoke_checks.hf_placement(LLAMA_3_8B_CONFIG, [t4] * 4) == {"device_map": "auto"}
    assert smoke_checks.hf_placement(LLAMA_3_8B_CONFIG, [h100]) == {}
    smollm2 = {"model_type": "llama", "num_hidden_layers": 30, "hidden_size": 576, "intermediate_size": 1536,
               "num_attention_heads": 9, "num_key_value_heads": 3, "vocab_size": 49152, "tie_word_embeddings": True}
    assert smoke_checks.hf_placement(smollm2, [t4] * 4) == {}
    import pytest

    with pytest.raises(ValueError, match="do not fit 1 GPU"):
        smoke_checks.hf_placement(LLAMA_3_8B_CONFIG, [t4])


def _setup(tmp_path, folder=None, device="cpu", profile_model=False):
    return gpu_smoke.Setup(folder or tmp_path, {"a": str(tmp_path / "a"), "b": str(tmp_path / "b")}, "models",
                           device, tmp_path, profile_model)


def test_vllm_is_shut_down_before_the_checks_that_load_models(monkeypatch, tmp_path):
    """Even when a vLLM check breaks after the engine started: the engine is closed, then the HF checks run."""
    from argparse import Namespace

    events = []

    class Engine:
        def close(self):
            events.append("close")

    def vllm_checks(report, args, folder, adapters, models_dir, started, device="cuda"):
        started.append(Engine())
        events.append("vllm")
        raise RuntimeError("a check broke")

    monkeypatch.setattr(gpu_smoke, "vllm_checks", vllm_checks)
    monkeypatch.setattr(gpu_smoke, "release_vllm", lambda started: [s.close() for s in started] and (True, None))
    monkeypatch.setattr(gpu_smoke, "local_checks", lambda *a: events.append("local"))
    report = smoke_checks.Report()
    gpu_smoke.run_checks(report, Namespace(no_vllm=False), _setup(tmp_path, device="cuda"))
    assert events == ["vllm", "close", "local"]
    assert report.checks["vllm"] is False and "a check broke" in report.details["vllm"]


def test_no_vllm_and_cpu_skip_the_engine_and_say_why(monkeypatch, tmp_path):
    from argparse import Namespace

    monkeypatch.setattr(gpu_smoke, "vllm_checks", lambda *a, **k: pytest.fail("vLLM must not start"))
    monkeypatch.setattr(gpu_smoke, "local_checks", lambda *a: None)
    monkeypatch.setattr(gpu_smoke, "vllm_cpu_build", lambda: False)
    for args, device, why in ((Namespace(no_vllm=True), "cuda", "--no-vllm"),
                              (Namespace(no_vllm=False), "cpu", "needs CUDA, or on --device cpu vLLM's CPU build")):
        report = smoke_checks.Report()
        gpu_smoke.run_checks(report, args, _setup(tmp_path, device=device))
        assert why in report.skipped["vllm"] and report.checks == {} and report.passed


def test_on_cpu_with_vllms_cpu_build_the_vllm_checks_run_there(monkeypatch, tmp_path):
    from argparse import Namespace

    ran = []
    monkeypatch.setattr(gpu_smoke, "vllm_checks", lambda *a, **k: ran.append(k["device"]))
    monkeypatch.setattr(gpu_smoke, "release_vllm", lambda started: (True, {}))
    monkeypatch.setattr(gpu_smoke, "local_checks", lambda *a: None)
    monkeypatch.setattr(gpu_smoke, "vllm_cpu_build", lambda: True)
    gpu_smoke.run_checks(smoke_checks.Report(), Namespace(no_vllm=False), _setup(tmp_path, device="cpu"))
    assert ran == ["cpu"]


def test_the_vllm_half_runs_on_vllms_cpu_build(tiny_llama, tmp_path):
    """gpu_smoke's vLLM checks on the real engine (vLLM 0.32.0's CPU build) with the tiny random Llama and two random
    adapters: every check the GPU run makes (mixed adapters, base rows unaffected, regex, deadline abort, the KG
    grammar), on CPU, so that no line of the half only a GPU reached goes unrun."""
    from argparse import Namespace

    from tests.vllm_cpu import require_vllm

    require_vllm()
    adapters = {name: str(smoke_checks.make_random_adapter(tiny_llama, tmp_path / name, rank=8, seed=seed))
                for seed, name in enumerate(("a", "b"))}
    args = Namespace(dtype="float32", max_model_len=2048, gpu_memory_utilization=0.3, tensor_parallel_size=0,
                     enforce_eager=True, requests=6, max_new_tokens=8)
    report, started = smoke_checks.Report(), []
    try:
        gpu_smoke.vllm_checks(report, args, tiny_llama, adapters, str(tmp_path), started, device="cpu")
    finally:
        assert gpu_smoke.release_vllm(started)[0]
    assert report.details["tokens_per_s"]["base"] > 0 and report.details["vllm_start_s"] > 0
    failed = {name: report.details.get(name) for name, ok in report.checks.items() if not ok}
    assert not failed, failed
    assert {"vllm_one_output_per_request", "vllm_base_unaffected_in_mixed_batch", "vllm_two_adapters_in_one_batch",
            "vllm_regex", "vllm_deadline_abort", "vllm_kg_grammar"} <= set(report.checks)


def test_a_skipped_check_is_neither_passed_nor_failed():
    def no_bf16():
        raise smoke_checks.SkipCheck("no native bf16")

    report = smoke_checks.Report()
    report.run("train_bf16", no_bf16)
    report.run("ok", lambda: True)
    assert report.skipped == {"train_bf16": "no native bf16"} and report.checks == {"ok": True} and report.passed


def test_checks_on_one_loaded_model_all_fail_when_it_does_not_load():
    report = smoke_checks.Report()
    report.run_on(lambda: 1 / 0, {"first": lambda m: True, "second": lambda m: True})
    assert report.checks == {"first": False, "second": False} and "ZeroDivisionError" in report.details["second"]
    report.run_on(lambda: 41, {"loaded": lambda m: (m + 1 == 42, {"m": m})})
    assert report.checks["loaded"] and report.details["loaded"] == {"m": 41}
    report.run_on(lambda: _raise(smoke_checks.SkipCheck("needs CUDA")), {"spread": lambda m: True})
    assert report.skipped["spread"] == "needs CUDA" and "spread" not in report.checks


def _raise(exc):
    raise exc


def _mixed(rows):
    """The flat output list of `mixed_requests` for rows of (base, a, b)."""
    return [text for row in rows for text in row]


def test_mixed_batch_verdict():
    base = ["Canberra", "The Matrix"]
    good = _mixed([("Canberra", "Sydney", "Perth"), ("The Matrix", "The Matrix", "Fight Club")])
    ok, detail = smoke_checks.mixed_batch_verdict(good, base)
    assert ok and detail["sample"] == {"base": "Canberra", "a": "Sydney", "b": "Perth"}
    leaked = _mixed([("Sydney", "Sydney", "Perth"), ("The Matrix", "x", "y")])  # an adapter reached a base row
    ok, detail = smoke_checks.mixed_batch_verdict(leaked, base)
    assert not ok and detail["base_unaffected"] is False
    same = _mixed([("Canberra", "Sydney", "Sydney"), ("The Matrix", "x", "x")])  # a and b act as one adapter
    assert smoke_checks.mixed_batch_verdict(same, base)[1]["adapters_change_outputs"] is False
    unused = _mixed([("Canberra", "Canberra", "Perth"), ("The Matrix", "The Matrix", "y")])  # a never applied
    assert not smoke_checks.mixed_batch_verdict(unused, base)[0]
    short = good[:-1]  # an output lost
    ok, detail = smoke_checks.mixed_batch_verdict(short, base)
    assert not ok and detail["one_output_per_request"] is False and detail["sample"] == {}
    silent = _mixed([("", "a", "b"), ("", "c", "d")])  # the base model wrote nothing at all
    assert smoke_checks.mixed_batch_verdict(silent, ["", ""])[1]["base_writes"] is False


def test_deadline_verdict():
    ok, detail = smoke_checks.deadline_verdict([""] * 8, 0.01, ["", "1, 2, 3"] * 4, 1.2, 8)
    assert ok and detail["returned_after_s"] == 1.2 and detail["empty"] == 4 and detail["of"] == 8
    assert not smoke_checks.deadline_verdict([""] * 8, 0.01, [""] * 8, 1.6, 8)[1]["within_deadline"]
    assert not smoke_checks.deadline_verdict([""] * 7 + ["1, 2"], 0.01, [""] * 8, 1.0, 8)[1]["expired_all_empty"]
    assert not smoke_checks.deadline_verdict([""] * 8, 0.9, [""] * 8, 1.0, 8)[1]["expired_at_once"]
    assert not smoke_checks.deadline_verdict([""] * 8, 0.01, [""] * 7, 1.0, 8)[1]["one_output_per_request"]


def test_reranker_scores_agree_with_the_cpu_ones():
    assert smoke_checks.scores_agree([0.881, 0.057, 0.029], [0.8813, 0.0569, 0.0292])[0]
    ok, detail = smoke_checks.scores_agree([0.05, 0.06, 0.03], [0.0569, 0.0568, 0.0292])
    assert not ok and not detail["same_ranking"]  # fp16 swapped two passages
    assert not smoke_checks.scores_agree([0.95, 0.05, 0.03], [0.88, 0.05, 0.03])[0]  # same order, score off by 0.07
    logits = [7.9, -3.1, -10.2]  # a cross-encoder's: the tolerance scales with their magnitude
    assert smoke_checks.scores_agree([8.0, -3.0, -10.3], logits)[0]
    assert not smoke_checks.scores_agree([9.0, -3.0, -10.3], logits)[0]


def test_the_user_model_runs_the_model_under_test_on_the_device(tmp_path):
    """The CPU profile's api_generation adapter is SmolLM2's: another model gets the random adapter in its place."""
    from models.config import load_config

    profile_adapters = load_config("cpu").llm.adapters
    assert profile_adapters, "the CPU profile ships an adapter: the replacement below is what keeps it loadable"
    tiny = gpu_smoke.usermodel_overrides(_setup(tmp_path / "tiny"), profile_adapters)
    assert tiny == {"llm.path": str(tmp_path / "tiny"), "llm.device": "cpu", "llm.dtype": "float32",
                    "llm.adapters": {name: str(tmp_path / "tiny" / "a") for name in profile_adapters}}
    own = gpu_smoke.usermodel_overrides(_setup(tmp_path, profile_model=True), profile_adapters)
    assert "llm.adapters" not in own
    config = load_config("cpu", tiny)
    assert config.llm.path == str(tmp_path / "tiny") and config.kg.api_adapter in config.llm.adapters


def test_a_cuda_user_model_is_placed_as_the_hf_checks(tmp_path, monkeypatch):
    setup = _setup(tmp_path, device="cuda")
    monkeypatch.setattr(gpu_smoke.Setup, "placement", lambda self: {"device_map": "auto"})
    overrides = gpu_smoke.usermodel_overrides(setup, {})
    assert overrides["llm.dtype"] == "float16" and overrides["llm.device"] == "cuda"
    assert overrides["llm.device_map"] == "auto"


def test_training_checks_skip_what_this_machine_cannot_run(tmp_path, monkeypatch):
    import sys

    import torch

    cpu = _setup(tmp_path)
    for precision, qlora in (("fp16", "off"), ("bf16", "off"), ("auto", "on")):
        with pytest.raises(smoke_checks.SkipCheck, match="needs CUDA"):
            smoke_hf.train_check(cpu, precision, qlora)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    with pytest.raises(RuntimeError, match="no CUDA device is visible.*--device cpu"):  # asked for CUDA: a failure
        smoke_hf.train_check(_setup(tmp_path, device="cuda"), "fp16")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda including_emulation=True: including_emulation)
    with pytest.raises(smoke_checks.SkipCheck, match="no native bf16"):  # a T4
        smoke_hf.train_check(_setup(tmp_path, device="cuda"), "bf16")
    monkeypatch.setitem(sys.modules, "bitsandbytes", None)  # `import bitsandbytes` raises ImportError
    with pytest.raises(smoke_checks.SkipCheck, match="bitsandbytes not installed"):
        smoke_hf.train_check(_setup(tmp_path, device="cuda"), "auto", "on")


def test_the_training_check_trains_and_generates_on_cpu(tiny_llama, tmp_path):
    """fp32 on CPU: the same plumbing the fp16/bf16 checks run on CUDA (train, save, load, generate)."""
    from models.config import REPO_ROOT

    adapters = {name: str(smoke_checks.make_random_adapter(tiny_llama, tmp_path / name, rank=8, seed=seed))
                for name, seed in (("a", 0), ("b", 1))}
    setup = gpu_smoke.Setup(tiny_llama, adapters, str(REPO_ROOT / "models"), "cpu", tmp_path, False)
    ok, detail = smoke_hf.train_check(setup, "fp32")
    assert ok and detail["dtype"] == "float32" and len(detail["losses"]) == 4
    assert (tmp_path / "trained_fp32_off" / "adapter_config.json").is_file()


def _run_script(*flags, timeout):
    import json
    import os
    import subprocess
    import sys

    from models.config import REPO_ROOT

    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "scripts.gpu_smoke", *flags], cwd=REPO_ROOT, env=env,
                          capture_output=True, text=True, timeout=timeout)
    return done.returncode, json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


LOCAL_CHECKS = {"hf_fp16_mixed_batch", "hf_device_map_auto", "hf_deadline", "train_fp16", "train_bf16",
                "train_qlora", "embedder_cuda", "reranker_cuda", "usermodel_cuda"}


def test_the_script_runs_every_local_check_on_cpu():
    """The plumbing end to end without a GPU: the HF checks in float32, the CUDA-only ones skipped, not failed."""
    code, report, stderr = _run_script("--no-vllm", "--tiny", "--device", "cpu", timeout=300)
    assert code == 0 and report["passed"], (report, stderr[-3000:])
    assert set(report["checks"]) == {"hf_fp16_mixed_batch", "hf_deadline", "embedder_cuda", "reranker_cuda",
                                     "usermodel_cuda"}
    assert set(report["checks"]) | set(report["skipped"]) == LOCAL_CHECKS | {"vllm"}
    assert all("needs CUDA" in why for name, why in report["skipped"].items() if name != "vllm")
    assert report["hf_deadline"]["returned_after_s"] <= 1.5
    assert len(report["usermodel_cuda"]["answers"]) == 4 and report["usermodel_cuda"]["batch_s"] > 0


@pytest.mark.gpu
def test_the_script_passes_on_this_gpu_without_vllm():
    """Any CUDA machine, no weights, no vLLM: every local check passes (bf16 and QLoRA may be skipped)."""
    import torch

    if not torch.cuda.is_available():
        pytest.skip("no CUDA GPU visible")
    code, report, stderr = _run_script("--no-vllm", "--tiny", timeout=900)
    assert code == 0 and report["passed"], (report, stderr[-3000:])
    assert set(report["checks"]) | set(report["skipped"]) == LOCAL_CHECKS | {"vllm"}
    assert {"hf_fp16_mixed_batch", "hf_device_map_auto", "hf_deadline", "train_fp16"} <= set(report["checks"])
    assert set(report["skipped"]) <= {"vllm", "train_bf16", "train_qlora"}
