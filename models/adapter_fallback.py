"""Start without the LoRA adapters that are not there: each stage whose adapter is missing runs on the base model
with its in-context prompt, instead of the whole submission failing at `UserModel()`.

The g4dn profile names three adapters (`web_answer`, `api_generation`, `kg_answer`) that no one can train without
a GPU and CRAG's data, so a fresh clone has none of them. What each stage does without its adapter:
- the web and KG answer steps (`pipeline.answer_adapter`, `kg_answer_adapter`): the same prompts (db3's), on the
  base model;
- KG program generation (`kg.api_adapter`): the domain's prompt that describes the API, with the `kg.icl_k`
  examples most similar to the question, under the same grammar (what `cpu-server` does). A profile whose
  adapter is asked with a short request that assumes the API was learned (`kg.api_prompt` set) is switched to
  the described prompt, with `IN_CONTEXT_EXAMPLES` examples when it asked for none;
- public-data entity linking (`public_data.entity_adapter`): the same prompt, on the base model.
The start-up log says which adapters are missing and the command that trains them; every LLM call made on the base
model in an adapter's place says so in the answer's trace (`llm_calls[].adapter_missing`); `make preflight` warns.
`llm.require_adapters: true` keeps the old behaviour: a missing folder fails at start-up (`AdapterNotFoundError`).

Here only adapters loaded from folders (the `hf` and `vllm` backends) are looked for; behind a server
(`llm.backend: openai`) the backend asks the server at start-up and the base model stands in for an adapter it does
not serve, under the same `llm.require_adapters` rule (models/llm/openai_backend.py).
"""
from __future__ import annotations

import logging
from dataclasses import replace

from models.config import Config
from models.llm.adapters import locate_adapters

log = logging.getLogger(__name__)

TRAIN_COMMAND = "make adapters DATA=<CRAG dev file> BASE=<Llama-3-8B folder>"
IN_CONTEXT_EXAMPLES = 3  # examples when a profile's adapter prompt asked for none (cpu-server's choice)


def without_missing_adapters(config: Config) -> tuple[Config, dict[str, str]]:
    """The profile as it can start: missing adapters left out and the KG program prompt made in-context.

    Returns:
        (config, missing): `config` unchanged and `{}` when every adapter is there, the backend serves them
        (`openai`) or the profile requires them; otherwise the rewritten config and name -> why it is missing.
    """
    if config.llm.require_adapters or config.llm.backend == "openai":
        return config, {}
    _, missing = locate_adapters(config.llm.adapters, config.models_dir)
    if not missing:
        return config, {}
    llm = replace(config.llm, adapters={n: p for n, p in config.llm.adapters.items() if n not in missing})
    kg = config.kg
    if kg.api_adapter in missing and kg.api_prompt:
        kg = replace(kg, api_prompt="", icl_k=kg.icl_k or IN_CONTEXT_EXAMPLES)
    for name, why in missing.items():
        log.warning("LoRA adapter %r is missing, so its stages run on the base model with their in-context prompts "
                    "(%s)", name, why)
    log.warning("%d of %d adapters missing; train them with `%s` (docs/training.md), or set "
                "llm.require_adapters: true to make a missing adapter an error", len(missing),
                len(config.llm.adapters), TRAIN_COMMAND)
    return replace(config, llm=llm, kg=kg), missing
