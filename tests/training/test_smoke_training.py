"""The end-to-end training smoke run (`training/smoke.py`, scripts/smoke_training.py): slow, a few minutes on 2 CPU
cores."""
from pathlib import Path

import pytest

from training.smoke import run_smoke

pytestmark = pytest.mark.slow


def test_labels_train_and_load(tmp_path, monkeypatch):
    # A relative output folder, as the command's default `outputs/smoke_training` is: the adapter written there
    # must be the one loaded, not a path under the models directory.
    monkeypatch.chdir(tmp_path)
    report = run_smoke(Path("smoke"), steps=3, max_length=768, limit=12, compare=4)
    assert report["records"] >= 8
    reasons = {row["reason"] for row in report["labels"]}
    assert "false_premise" in reasons  # the sample has false-premise questions
    assert report["steps"] == 3
    assert report["eval_loss_after"] < report["eval_loss_before"]
    assert report["outputs_changed"] >= 1
    assert (tmp_path / "smoke" / "adapter" / "adapter_model.safetensors").is_file()
