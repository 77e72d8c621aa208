"""evaluation/experiments/ablation.py: every configuration is a valid profile."""
import pytest

from evaluation.experiments.ablation import CONFIGURATIONS
from models.config import load_config, save_config


@pytest.mark.parametrize("name", sorted(CONFIGURATIONS))
def test_configuration_round_trips(name, tmp_path):
    config = load_config("cpu", CONFIGURATIONS[name])
    save_config(config, tmp_path / "profile.yaml")
    assert load_config(tmp_path / "profile.yaml") == config
