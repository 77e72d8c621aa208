"""`python local_evaluation.py --profile cpu-vllm` on the bundled sample: `UserModel()` with its LLM on the real vLLM
engine (vLLM 0.32.0's CPU build, `make setup VLLM=1`), the answers scored by the package's judge. Two batches of
four (the whole sample is measured by scripts/current_results.py, docs/results.md)."""
from tests.test_end_to_end import check_outputs, run_evaluation
from tests.vllm_cpu import require_vllm


def test_cpu_vllm_answers_the_bundled_sample(tmp_path):
    require_vllm()
    metrics, predictions, out, proc = run_evaluation(tmp_path, "--profile", "cpu-vllm", "--batch-size", "4",
                                                     "--limit", "8", timeout=900)
    check_outputs(metrics, predictions, out, 8)
    assert "vLLM on CPU:" in proc.stderr  # the start-up log names the dtype and the KV cache
    assert metrics["n_correct"] >= 1  # the committed pipeline answers some of its own sample right
    assert (out / "config.yaml").read_text().count("backend: vllm") == 1
