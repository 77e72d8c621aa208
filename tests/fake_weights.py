"""A models directory of fake weights: for every model a profile names, only the file that marks it complete.

The g4dn weights (Llama-3-8B, bge, the adapters) are never on a developer's machine, so tests of what happens
around them (the vLLM start-up order, the preflight's checks) build this instead: `config.json` for a model
folder (the LLM's is Llama-3-8B's real shape, which the latency guard reads), `adapter_config.json` for an
adapter. No tensor is written; whatever tries to load one fails, which is what these tests want to notice.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

LLAMA_3_8B_CONFIG = {"model_type": "llama", "hidden_act": "silu", "num_hidden_layers": 32, "hidden_size": 4096,
                     "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8,
                     "vocab_size": 128256}
ENCODER_CONFIG = {"model_type": "bert", "hidden_act": "gelu", "num_hidden_layers": 12, "hidden_size": 768,
                  "intermediate_size": 3072, "num_attention_heads": 12, "vocab_size": 30522}


def _in_models_dir(spec: str) -> bool:
    """A spec that resolves inside the models directory (not `pkg:`, not absolute, not empty)."""
    return bool(spec) and not spec.startswith("pkg:") and not os.path.isabs(spec) and not spec.endswith(".gguf")


def fake_models_dir(root: Path, config) -> Path:
    """Writes the marker files for every weight `config` (a resolved profile) loads from the models directory.

    Returns `root`, to pass as `$CRAG_MODELS_DIR`.
    """
    root.mkdir(parents=True, exist_ok=True)
    folders = {config.llm.path: LLAMA_3_8B_CONFIG, config.embedder.path: ENCODER_CONFIG,
               config.web.reranker.path: ENCODER_CONFIG}
    for spec, model_config in folders.items():
        if _in_models_dir(spec):
            (root / spec).mkdir(parents=True, exist_ok=True)
            (root / spec / "config.json").write_text(json.dumps(model_config), encoding="utf-8")
    for spec in config.llm.adapters.values():
        if _in_models_dir(spec):
            (root / spec).mkdir(parents=True, exist_ok=True)
            (root / spec / "adapter_config.json").write_text(json.dumps({"r": 8, "peft_type": "LORA"}),
                                                               encoding="utf-8")
    return root
