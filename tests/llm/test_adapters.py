"""AdapterRegistry: start-up resolution, stable ids, clear errors."""
import pytest

from models.llm.adapters import AdapterRegistry
from models.llm.errors import AdapterNotFoundError, UnknownAdapterError


def _adapter_dir(root, name):
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "adapter_config.json").write_text("{}")
    return folder


def test_ids_are_positive_stable_and_in_profile_order(tmp_path):
    _adapter_dir(tmp_path, "adapters/web")
    absolute = _adapter_dir(tmp_path, "elsewhere/kg")
    registry = AdapterRegistry({"web_answer": "adapters/web", "kg_answer": str(absolute)}, str(tmp_path))
    assert registry.names == ("web_answer", "kg_answer")
    assert [(a.name, a.int_id) for a in registry] == [("web_answer", 1), ("kg_answer", 2)]
    assert registry.get("kg_answer").path == absolute
    assert registry.get("web_answer") is registry.get("web_answer")
    assert registry.get("web_answer").path == tmp_path / "adapters/web"


def test_missing_folder_fails_at_construction_naming_the_adapter(tmp_path):
    with pytest.raises(AdapterNotFoundError, match="LoRA adapter 'web_answer'.*not found at"):
        AdapterRegistry({"web_answer": "adapters/missing"}, str(tmp_path))


def test_folder_without_adapter_config_is_rejected(tmp_path):
    (tmp_path / "not_an_adapter").mkdir()
    with pytest.raises(AdapterNotFoundError, match="no adapter_config.json"):
        AdapterRegistry({"web_answer": "not_an_adapter"}, str(tmp_path))


def test_unknown_name_lists_the_configured_ones(tmp_path):
    _adapter_dir(tmp_path, "web")
    registry = AdapterRegistry({"web_answer": "web"}, str(tmp_path))
    with pytest.raises(UnknownAdapterError, match=r"'kg_answr' is not configured.*\['web_answer'\]"):
        registry.get("kg_answr")
    with pytest.raises(UnknownAdapterError):
        registry.require([None, "web_answer", "kg_answr"])
    registry.require([None, "web_answer"])  # base model and configured names pass


def test_no_adapters(tmp_path):
    registry = AdapterRegistry({}, str(tmp_path))
    assert len(registry) == 0
    with pytest.raises(UnknownAdapterError, match="has none"):
        registry.get("web_answer")
