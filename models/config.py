"""Hardware profiles: YAML data files turned into typed, frozen config sections.

`UserModel()` takes no arguments, so the profile is chosen by the environment variable `CRAG_PROFILE`
(default `cpu`). A profile is `models/profiles/<name>.yaml` or a path to any YAML file. Each top-level
section maps onto one component's dataclass (the component owns its config class; this module only
assembles them), so a component never sees settings that are not its own. `extends: <profile>` at the top of a
profile starts from that profile and overrides what it names (`cpu-server.yaml` is `cpu` with a served LLM).

Rules (after nanoGPT's configurator): an unknown key or a value of the wrong type is a `ConfigError`
naming the file and the dotted key; `overrides` (e.g. from a CLI) go through the same checks. The
resolved config can be dumped with `to_dict` and is saved next to every evaluation run.
"""
from __future__ import annotations

import dataclasses
import os
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

import yaml

from models.answering.config import AnsweringConfig
from models.attributes.config import AttributeConfig
from models.calculator.config import CalculatorConfig
from models.embedder import EmbedderConfig
from models.kg.config import KGConfig
from models.llm.config import LLMConfig
from models.omni.config import OmniConfig
from models.public_data.config import PublicDataConfig
from models.reasoning.config import ReasoningConfig
from models.routing.config import RoutingConfig
from models.verify.config import VerifierConfig
from models.web.config import WebConfig

PROFILE_ENV = "CRAG_PROFILE"
MODELS_DIR_ENV = "CRAG_MODELS_DIR"
DEFAULT_PROFILE = "cpu"
PROFILES_DIR = Path(__file__).resolve().parent / "profiles"
REPO_ROOT = Path(__file__).resolve().parent.parent


class ConfigError(ValueError):
    """A profile that cannot be used: unknown profile, unknown key, wrong type, missing weights."""


@dataclass(frozen=True)
class PipelineConfig:
    """How the pathways are assembled (the paper's Figure 2) and the time budget."""

    # 1: 5 pages; 2: 5 pages + mock KG API; 3: 50 pages + mock KG API; 0: detect per batch (more than 5 pages
    # = Task 3; otherwise Task 2 when $CRAG_MOCK_API_URL is set, which the grader leaves unset for Task 1).
    task: int = 0
    # The knowledge sources, in the order db3's cascade asks them (models/sources/: each registers its name);
    # every source but the last answers only what its evidence settles, the last one answers the rest. "sql" (the
    # public-data store in SQL, models/sources/sql.py) comes after the KG, whose exact values win, and before the web.
    sources: tuple[str, ...] = ("public_data", "kg", "sql", "web")
    # db3: the cascade above, in that order (a verified answer settles its query; the last source answers the
    # rest) | omni: OmniRetrieval's mode (section `omni`): choose sources per question, ask each chosen one,
    # rank all their evidence into one context and answer once from it (docs/results.md "Modes" has both measured).
    mode: str = "db3"
    batch_size: int = 4  # what get_batch_size() returns, 1..16
    per_question_budget_s: float = 30.0  # the grader's limit per question
    deadline_margin_s: float = 3.0  # kept back from batch_size * budget for post-processing
    use_kg: bool = True  # Tasks 2/3 only; ignored for Task 1
    use_public_data: tuple[int, ...] = (1, 2, 3)  # tasks in which the public-data pathway runs
    public_shortcut: bool = False  # db3: answer Oscar/Grammy/finance from public facts alone first
    answer_prompt: str = "answer_ctrl"  # prompts/<name>.txt for web answers
    kg_answer_prompt: str = "answer_kg"
    answer_adapter: str | None = None  # LoRA adapter for web answers (None = base model)
    kg_answer_adapter: str | None = None
    answer_max_new_tokens: int = 64
    answer_word_limit: int = 50  # {token_limit} in the prompts: words, as in the paper
    grader_tokenizer: str = ""  # dir of the grader's Llama-2 tokenizer for the 75-token trim ("" = none)
    # Each stage may use this fraction of the batch time left when it starts (models.deadline.STAGES); a
    # stage cut by its budget keeps what it finished, and the answer step always gets the rest, so a long
    # KG stage can never starve the web. Measured on the Task-3 benchmark (scripts/bench_task3.py).
    stage_budgets: dict[str, float] = field(default_factory=lambda: {
        "route": 0.1, "public data": 0.25, "sql": 0.25, "kg": 0.5, "web retrieval": 0.5,
        "select sources": 0.1,  # omni mode's source selection (an LLM call with omni.selection.kind llm)
        # ElectricSheep's optional stages (when enabled): inputs of the reasoning step, which gets the rest
        "attributes": 0.1, "knowledge": 0.25, "calculator": 0.25})


@dataclass(frozen=True)
class Config:
    """The whole resolved profile."""

    name: str
    models_dir: str
    pipeline: PipelineConfig = field(default_factory=PipelineConfig)
    llm: LLMConfig = field(default_factory=LLMConfig)
    embedder: EmbedderConfig = field(default_factory=EmbedderConfig)
    web: WebConfig = field(default_factory=WebConfig)
    kg: KGConfig = field(default_factory=KGConfig)
    public_data: PublicDataConfig = field(default_factory=PublicDataConfig)
    routing: RoutingConfig = field(default_factory=RoutingConfig)
    verifier: VerifierConfig = field(default_factory=VerifierConfig)
    answering: AnsweringConfig = field(default_factory=AnsweringConfig)  # the answers' confidence signals
    # ElectricSheep's stages (Yuan et al. 2024 §4), each off unless its profile section enables it.
    attributes: AttributeConfig = field(default_factory=AttributeConfig)
    calculator: CalculatorConfig = field(default_factory=CalculatorConfig)
    reasoning: ReasoningConfig = field(default_factory=ReasoningConfig)
    omni: OmniConfig = field(default_factory=OmniConfig)  # read when pipeline.mode is omni


def load_config(profile: str | os.PathLike | None = None, overrides: Mapping[str, Any] | None = None) -> Config:
    """Loads a profile by name or path and applies dotted-key overrides.

    Args:
        profile: a name under `models/profiles/` (`cpu`, `g4dn`), a YAML path, or None for `$CRAG_PROFILE`
            (default `cpu`).
        overrides: e.g. `{"pipeline.task": 2, "web.rerank_k": 5}`; checked like the file.

    Returns:
        The frozen `Config`.

    Raises:
        ConfigError: unknown profile, unknown key, wrong type.
    """
    profile = profile if profile is not None else os.environ.get(PROFILE_ENV, DEFAULT_PROFILE)
    path = _profile_path(str(profile))
    raw = _read_profile(path)
    for dotted, value in (overrides or {}).items():
        _set_dotted(raw, dotted, value)
    raw.setdefault("name", path.stem)
    models_dir = os.environ.get(MODELS_DIR_ENV) or raw.get("models_dir") or str(REPO_ROOT / "models")
    raw["models_dir"] = str((REPO_ROOT / models_dir).resolve()) if not os.path.isabs(models_dir) else models_dir
    return from_dict(Config, raw, where=str(path))


def parse_override(text: str) -> tuple[str, Any]:
    """One `--set KEY=VALUE` of a command line as (dotted key, value read as YAML), for `load_config`'s overrides.

    An empty VALUE is the empty string: the shell passes `--set kg.api_prompt=""` as `kg.api_prompt=`, which YAML
    alone would read as null. `KEY=null` (or `KEY=~`) is null.

    Raises:
        argparse.ArgumentTypeError: not KEY=VALUE, or a value that is not YAML (argparse prints the message).
    """
    import argparse

    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    if not value.strip():
        return key.strip(), ""
    try:
        return key.strip(), yaml.safe_load(value)
    except yaml.YAMLError as exc:
        raise argparse.ArgumentTypeError(f"{key}: the value is not YAML: {exc}") from exc


def _read_profile(path: Path, seen: tuple[Path, ...] = ()) -> dict:
    """A profile's raw sections; `extends: <profile>` reads that profile first and overrides it key by key
    (sections merge, values replace, `{}` empties a mapping: `cpu-server` is `cpu` with another `llm` backend)."""
    if path in seen:
        raise ConfigError(f"{path}: `extends` loops through {[str(p) for p in seen]}")
    with open(path, encoding="utf-8") as fh:
        raw = yaml.safe_load(fh) or {}
    if not isinstance(raw, dict):
        raise ConfigError(f"{path}: a profile must be a mapping of sections, got {type(raw).__name__}")
    base = raw.pop("extends", None)
    if base is None:
        return raw
    return _merged(_read_profile(_profile_path(str(base)), (*seen, path)), raw)


def _merged(base: dict, override: dict) -> dict:
    out = dict(base)
    for key, value in override.items():
        merge = isinstance(value, dict) and value and isinstance(out.get(key), dict)  # {} empties a mapping
        out[key] = _merged(out[key], value) if merge else value
    return out


def _profile_path(profile: str) -> Path:
    candidate = Path(profile)
    if candidate.suffix in (".yaml", ".yml") and candidate.exists():
        return candidate
    named = PROFILES_DIR / f"{profile}.yaml"
    if named.exists():
        return named
    known = sorted(p.stem for p in PROFILES_DIR.glob("*.yaml"))
    raise ConfigError(f"unknown profile {profile!r}: expected one of {known} or a path to a YAML file "
                      f"(set {PROFILE_ENV})")


def _set_dotted(raw: dict, dotted: str, value: Any) -> None:
    *parents, leaf = dotted.split(".")
    node = raw
    for part in parents:
        node = node.setdefault(part, {})
        if not isinstance(node, dict):
            raise ConfigError(f"override {dotted!r}: {part!r} is not a section")
    node[leaf] = value


def from_dict(cls: type, data: Mapping[str, Any], where: str = "<dict>", prefix: str = "") -> Any:
    """Builds dataclass `cls` from a mapping, rejecting unknown keys and values of the wrong type."""
    if not isinstance(data, Mapping):
        raise ConfigError(f"{where}: {prefix or 'profile'} must be a mapping, got {type(data).__name__}")
    fields = {f.name: f for f in dataclasses.fields(cls)}
    unknown = sorted(set(data) - set(fields))
    if unknown:
        raise ConfigError(f"{where}: unknown key(s) {[prefix + k for k in unknown]}; "
                          f"known keys of {prefix.rstrip('.') or 'the profile'}: {sorted(fields)}")
    hints = typing.get_type_hints(cls)
    kwargs = {name: _coerce(hints[name], value, where, prefix + name) for name, value in data.items()}
    return cls(**kwargs)


def _coerce(hint: Any, value: Any, where: str, key: str) -> Any:
    origin = typing.get_origin(hint)
    if dataclasses.is_dataclass(hint):
        return from_dict(hint, value or {}, where, key + ".")
    if origin in (typing.Union, types.UnionType):
        options = typing.get_args(hint)
        if value is None and type(None) in options:
            return None
        errors = []
        for option in (o for o in options if o is not type(None)):
            try:
                return _coerce(option, value, where, key)
            except ConfigError as exc:
                errors.append(str(exc))
        raise ConfigError(errors[0] if errors else f"{where}: {key} may not be null")
    if origin in (tuple, list):
        if not isinstance(value, (list, tuple)):
            raise ConfigError(f"{where}: {key} must be a list, got {value!r}")
        args = [a for a in typing.get_args(hint) if a is not Ellipsis]
        items = [_coerce(args[0], v, where, f"{key}[{i}]") for i, v in enumerate(value)] if args else list(value)
        return tuple(items) if origin is tuple else items
    if origin in (dict, Mapping) or hint in (dict, Mapping):
        if not isinstance(value, Mapping):
            raise ConfigError(f"{where}: {key} must be a mapping, got {value!r}")
        args = typing.get_args(hint)
        if len(args) == 2:
            return {_coerce(args[0], k, where, f"{key}.{k}"): _coerce(args[1], v, where, f"{key}.{k}")
                    for k, v in value.items()}
        return dict(value)
    if hint is Any:
        return value
    if hint is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if hint in (int, float) and isinstance(value, bool):
        raise ConfigError(f"{where}: {key} must be {hint.__name__}, got a boolean {value!r}")
    if isinstance(hint, type) and not isinstance(value, hint):
        raise ConfigError(f"{where}: {key} must be {hint.__name__}, got {type(value).__name__} {value!r}")
    return value


def to_dict(config: Any) -> dict:
    """The resolved config as plain data (saved beside evaluation outputs)."""
    return dataclasses.asdict(config)


def save_config(config: Config, path: str | os.PathLike) -> None:
    with open(path, "w", encoding="utf-8") as fh:
        yaml.safe_dump(_plain(to_dict(config)), fh, sort_keys=False)


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
