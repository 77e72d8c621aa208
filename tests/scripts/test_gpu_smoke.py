"""The GPU acceptance script's CPU-side parts (the checks themselves need CUDA: run the script on a GPU)."""
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
