"""scripts/gpu_bench.py in its `--device cpu` form: the same code that measures a GPU, on the CPU, so that the
command the next GPU machine runs cannot rot; and its JSON read back by the projection's calibration."""
import importlib.util
import json

import pytest

from models.latency import Efficiency, HFCosts, calibrate
from scripts.gpu_bench import main
from submission import gpu_bench

ARGS = ["--device", "cpu", "--layers", "1", "--prompt-tokens", "16", "--new-tokens", "3", "--gemm-tokens", "32",
        "--copy-mb", "4"]


def test_the_bench_measures_every_cell_on_cpu_and_the_projection_reads_it(tmp_path, capsys):
    out = tmp_path / "bench.json"
    assert main(ARGS + ["--out", str(out)]) == 0
    bench = json.loads(out.read_text())
    assert bench["errors"] == {}
    models = bench["engines"]["hf"]["models"]
    assert set(models) == {"small", "llama3-8b-shape-1L"}
    for entry in models.values():
        cells = {(c["batch"], c["lora"]) for c in entry["cells"]}
        assert cells == {(b, lora) for b in (1, 4, 8) for lora in (False, True)}
        assert all(c["prefill_tokens_per_s"] > 0 and c["decode_tokens_per_s"] > 0 for c in entry["cells"])
    assert models["llama3-8b-shape-1L"]["shape"]["num_hidden_layers"] == 1
    assert bench["kernels"]["gemm"]["tflops"] > 0 and bench["kernels"]["bandwidth"]["gb_s"] > 0
    assert set(bench["kernels"]["gemm"]["shapes"]) == {f"{g}:{n}" for g in ("full", "tp4")
                                                        for n in ("qkv", "o", "gate_up", "down")}
    # vLLM's engine is skipped on a CPU: for want of CUDA where vllm is installed (`make setup VLLM=1`, as in CI),
    # for want of vllm itself on a plain `make setup`
    why = "CUDA" if importlib.util.find_spec("vllm") is not None else "vllm is not importable here"
    assert why in bench["engines"]["vllm"]["skipped"] and "triton_fma" not in bench["kernels"]
    host = bench["engines"]["hf"]["host_step"]
    assert host["model"] == "small" and host["layers"] == 4 and host["step_s"] > 0 and host["lora_step_s"] > 0
    printed = capsys.readouterr().out
    assert "hf    small" in printed and "batch 8" in printed and "cells measured, 0 failed" in printed
    # a CPU has no datasheet peaks here: only the host costs are taken, each with its reason
    c = calibrate(bench)
    assert c.efficiency == Efficiency()
    assert c.hf_costs.step_overhead_s == pytest.approx(host["step_s"] * 32 / 4)
    assert c.hf_costs.peft_step_overhead_s == pytest.approx(max(0.0, host["lora_step_s"] - host["step_s"]) * 8)
    assert c.hf_costs != HFCosts() and len(c.notes) == 3


def test_a_failing_cell_is_recorded_and_the_others_still_run(tmp_path, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("cuBLAS said no")

    monkeypatch.setattr(gpu_bench, "bench_gemm", broken)
    out = tmp_path / "bench.json"
    assert main(ARGS + ["--no-vllm", "--out", str(out)]) == 0
    bench = json.loads(out.read_text())
    assert bench["errors"] == {"kernels:gemm": "RuntimeError: cuBLAS said no"}
    assert bench["cells"] == 12 and bench["engines"]["vllm"] == {"skipped": "--no-vllm"}
    assert bench["kernels"]["bandwidth"]["gb_s"] > 0
