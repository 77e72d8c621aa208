"""The end-to-end training smoke run (`scripts/smoke_training.py`): slow, a few minutes on 2 CPU cores."""
import importlib.util

import pytest

from models.paths import resolve_repo_path

pytestmark = pytest.mark.slow


def _smoke_module():
    path = resolve_repo_path("scripts/smoke_training.py")
    spec = importlib.util.spec_from_file_location("smoke_training", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_labels_train_and_load(tmp_path):
    report = _smoke_module().run_smoke(tmp_path, steps=3, max_length=768, limit=12, compare=4)
    assert report["records"] >= 8
    reasons = {row["reason"] for row in report["labels"]}
    assert "false_premise" in reasons  # the sample has false-premise questions
    assert report["steps"] == 3
    assert report["eval_loss_after"] < report["eval_loss_before"]
    assert report["outputs_changed"] >= 1
    assert (tmp_path / "adapter" / "adapter_model.safetensors").is_file()
