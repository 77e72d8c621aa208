"""The LoRA adapters a profile names, resolved once at start-up.

`llm.adapters` maps a name (`web_answer`, `api_generation`, `kg_answer`, ...) to a peft adapter folder
(`adapter_config.json` + weights). Every folder is checked when the generator is built, so a typo in a
profile fails at start-up with the path it looked at, never in the middle of a graded batch.

vLLM identifies an adapter by a globally unique positive integer (`LoRARequest(name, int_id, path)`);
ids here are 1, 2, ... in profile order and never change for the life of the registry, so the engine's
adapter cache keeps hitting the same slot for the same adapter.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable, Mapping

from models.llm.errors import AdapterNotFoundError, UnknownAdapterError
from models.paths import ModelNotFoundError, resolve_model_path

ADAPTER_CONFIG = "adapter_config.json"


@dataclass(frozen=True)
class Adapter:
    name: str
    int_id: int  # vLLM's lora_int_id: unique, > 0
    path: Path


class AdapterNames:
    """What the pipeline asks of a profile's adapters, whatever serves them: the names, how many, the one called
    `name`, and that every name a stage uses is configured. `_by_name` maps a name to what the backend needs
    (`AdapterNames()`: a backend that serves none)."""

    _configured_in = "llm.adapters"  # the profile key that lists them, for the error

    def __init__(self, by_name: Mapping[str, Any] | None = None):
        self._by_name = dict(by_name or {})

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self._by_name)

    def __iter__(self):
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def get(self, name: str):
        """What the adapter called `name` is to its backend; raises UnknownAdapterError naming the configured ones."""
        try:
            return self._by_name[name]
        except KeyError:
            raise UnknownAdapterError(
                f"LoRA adapter {name!r} is not configured; the profile's {self._configured_in} has "
                f"{sorted(self._by_name) or 'none'}") from None

    def require(self, names: Iterable[str | None]) -> None:
        """Checks that every non-None name is configured (call at start-up and before a batch runs)."""
        for name in names:
            if name is not None:
                self.get(name)


class AdapterRegistry(AdapterNames):
    """Name -> resolved adapter folder and stable integer id (`Adapter`)."""

    def __init__(self, adapters: Mapping[str, str], models_dir: str):
        """Resolves every configured adapter.

        Args:
            adapters: the profile's `llm.adapters` (name -> folder, models-dir-relative or absolute).
            models_dir: the profile's models directory.

        Raises:
            AdapterNotFoundError: a folder is missing or has no `adapter_config.json`.
        """
        self._by_name: dict[str, Adapter] = {}
        for int_id, (name, spec) in enumerate(adapters.items(), start=1):
            self._by_name[name] = Adapter(name, int_id, adapter_folder(name, spec, models_dir))


def adapter_folder(name: str, spec: str, models_dir: str) -> Path:
    """The peft folder `spec` names for the adapter `name`.

    Raises:
        AdapterNotFoundError: the folder is missing or has no `adapter_config.json` (the message says where it
            looked and how to get one).
    """
    what = f"LoRA adapter {name!r}"
    try:
        path = resolve_model_path(spec, models_dir, what)
    except ModelNotFoundError as exc:
        raise AdapterNotFoundError(str(exc)) from exc
    if not (path / ADAPTER_CONFIG).is_file():
        raise AdapterNotFoundError(
            f"the {what} at {path} is not a peft adapter folder (no {ADAPTER_CONFIG}); "
            f"train one (training/) or remove it from the profile's llm.adapters")
    return path


def locate_adapters(adapters: Mapping[str, str], models_dir: str) -> tuple[dict[str, Path], dict[str, str]]:
    """Each configured adapter resolved once: (name -> its peft folder, name -> why its folder cannot be used, the
    `AdapterNotFoundError` message)."""
    found, missing = {}, {}
    for name, spec in adapters.items():
        try:
            found[name] = adapter_folder(name, spec, models_dir)
        except AdapterNotFoundError as exc:
            missing[name] = str(exc)
    return found, missing
