"""Settings of the attribute predictor (profile section `attributes`). Off by default."""
from __future__ import annotations

from dataclasses import dataclass

POLICIES = ("idk", "verify", "none")
METHODS = ("classifier", "llm")


@dataclass(frozen=True)
class AttributeConfig:
    enabled: bool = False
    tasks: tuple[int, ...] = (1, 2, 3)
    method: str = "classifier"  # classifier: MiniLM embeddings + scikit-learn | llm: few-shot self-consistency
    # What a question predicted "dynamic" gets when no KG fact supports its answer (ElectricSheep: "idk").
    # idk: "i don't know"; verify: its answer must pass the verifier at `dynamic_verify_threshold`; none: nothing.
    dynamic_policy: str = "idk"
    dynamic_verify_threshold: float = 0.8
    # classifier
    estimator: str = "logreg"  # logreg | svm
    classifier_path: str = ".cache/attributes/static_dynamic.joblib"  # repo-relative or absolute (joblib)
    # Not the bundled sample nor the dev questions: both are what local_evaluation.py scores.
    training_data: tuple[str, ...] = ("data/attributes",)
    # llm
    prompt: str = "attribute_dynamic"  # prompts/<name>.txt; slots {examples}, {query}
    few_shot: int = 5  # demonstrations per class and sample (ElectricSheep: 5)
    samples: int = 5  # self-consistency votes: completions sampled from one prompt
    temperature: float = 0.7  # their sampling temperature
    max_new_tokens: int = 4
    seed: int = 0
