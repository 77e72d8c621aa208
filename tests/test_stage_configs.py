"""The ElectricSheep stages' profile sections: off by default, switchable and checked like every key."""
import pytest

from models.config import ConfigError, load_config


def test_every_stage_is_off_by_default():
    for profile in ("cpu", "g4dn"):
        config = load_config(profile)
        assert not any([config.attributes.enabled, config.calculator.enabled, config.reasoning.enabled,
                        config.reasoning.knowledge.enabled, config.web.main_content.enabled,
                        config.web.sentence_chunks.enabled])


def test_stages_switch_on_per_profile_section_and_task():
    config = load_config("cpu", {"calculator.enabled": True, "calculator.tasks": [1], "calculator.samples": 3,
                                 "attributes.enabled": True, "attributes.dynamic_policy": "verify",
                                 "reasoning.enabled": True, "reasoning.knowledge.enabled": True,
                                 "reasoning.backup.reserve_s": 2, "web.main_content.enabled": True,
                                 "web.sentence_chunks.segmenter": "regex"})
    assert config.calculator.tasks == (1,) and config.calculator.samples == 3
    assert config.attributes.dynamic_policy == "verify"
    assert config.reasoning.knowledge.enabled and config.reasoning.backup.reserve_s == 2.0
    assert config.web.main_content.enabled and config.web.sentence_chunks.segmenter == "regex"


@pytest.mark.parametrize("key, value", [("calculator.sample", 3), ("calculator.samples", "five"),
                                        ("reasoning.backup.enable", True), ("web.sentence_chunks.group", 3),
                                        ("attributes.enabled", "yes")])
def test_unknown_keys_and_wrong_types_are_refused(key, value):
    with pytest.raises(ConfigError):
        load_config("cpu", {key: value})
