"""scripts/ablation.py: every configuration is a valid profile that survives the save/load round trip."""
import importlib.util
from pathlib import Path

import pytest

from models.config import load_config, save_config

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "ablation.py"
spec = importlib.util.spec_from_file_location("ablation", SCRIPT)
ablation = importlib.util.module_from_spec(spec)
spec.loader.exec_module(ablation)


@pytest.mark.parametrize("name", sorted(ablation.CONFIGURATIONS))
def test_configuration_round_trips(name, tmp_path):
    config = load_config("cpu", ablation.CONFIGURATIONS[name])
    save_config(config, tmp_path / "profile.yaml")
    assert load_config(tmp_path / "profile.yaml") == config


def test_metrics_line():
    assert ablation.metrics_line('noise\n{"score": 0.1}\n[info] done') == {"score": 0.1}
    assert ablation.metrics_line("no metrics {") is None
