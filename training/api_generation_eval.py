"""The profile's API-generation step measured on template splits: compile, execution and correct-value rates (the
command line is scripts/eval_api_generation.py, whose docstring describes the request and the scoring).

`evaluate` generates every example's program with the pipeline's own request (`KGPathway.api_request`) in batches
and scores each against the mock API (`training/api_scoring.py`); `evaluate_api_generation` builds the profile's
generator and KG pathway (with the adapter, prompt and in-context examples asked for), serves the bundled KG (or
one built from other sources), evaluates each split (`sample`: a seeded sample of it) and returns the figures.
"""
from __future__ import annotations

import json
import logging
import random
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from evaluation.cli import UsageError
from training.api_templates import read_examples

ADAPTER_NAME = "api_generation"


def sample(examples, limit: int | None, seed: int):
    if limit is None or limit >= len(examples):
        return list(examples)
    return sorted(random.Random(seed).sample(list(examples), limit), key=lambda e: e.id)


def evaluate(examples, kg, generator, batch_size: int, show: int = 0) -> dict:
    from training.api_scoring import score_program
    from training.contexts import example_query

    requests = [kg.api_request(example_query({"interaction_id": e.id, "query": e.query,
                                              "query_time": e.query_time}), e.domain) for e in examples]
    programs, seconds = [], 0.0
    for start in range(0, len(requests), batch_size):
        began = time.perf_counter()
        programs += generator.generate(requests[start:start + batch_size])
        seconds += time.perf_counter() - began
        print(f"  generated {len(programs)}/{len(requests)} ({seconds / len(programs):.1f} s/question)",
              file=sys.stderr, flush=True)  # a long CPU run shows it is moving
    scores = [score_program(kg, e, p) for e, p in zip(examples, programs)]
    shown = 0
    for example, program, score in zip(examples, programs, scores):
        if not score.correct and shown < show:
            shown += 1
            print(f"  x {example.query!r}\n    generated {program!r}\n    target    {example.program!r}\n"
                  f"    answer {list(score.answer)[:4]} {score.error[:120]}")
    n = max(1, len(examples))
    kinds = {}  # heldout_templates mixes unseen phrasings of trained templates and wholly held-out templates
    for example, score in zip(examples, scores):
        kinds.setdefault(example.held or "trained wording", []).append(score.correct)
    return {"n": len(examples), "compile_rate": sum(s.compiled for s in scores) / n,
            "execution_rate": sum(s.executed for s in scores) / n,
            "correct_rate": sum(s.correct for s in scores) / n, "seconds_per_question": seconds / n,
            "by_held": {kind: {"n": len(c), "correct_rate": sum(c) / len(c)} for kind, c in sorted(kinds.items())}}


def evaluate_api_generation(*, data_dir: str = "outputs/api_data",
                            splits: list[str] = ("heldout_entities", "heldout_templates"), file: str | None = None,
                            kg_source: str | None = None, limit: int | None = None, seed: int = 0,
                            profile: str | None = None, adapter: str | None = None, no_adapter: bool = False,
                            icl_k: int | None = None, api_prompt: str | None = None, show: int = 0,
                            json_path: str | None = None) -> dict:
    """Evaluates each split of `data_dir` (or the one `file`) and returns the figures, also written to `json_path`.

    Raises:
        UsageError: `file`, a split of `data_dir` or the `kg_source` folder does not exist.
    """
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")

    from mock_api.bundled_kg import build
    from mock_api.server import running_server
    from models.config import load_config
    from models.embedder import Embedder
    from models.kg.pathway import KGPathway
    from models.llm.generator import make_generator

    if file:
        if not Path(file).is_file():
            raise UsageError(f"no file {file}")
        split_files = {Path(file).stem: Path(file)}
    else:
        data = Path(data_dir)
        missing = [s for s in splits if not (data / f"{s}.jsonl").exists()]
        if missing:
            raise UsageError(f"no {missing} in {data}: run python scripts/make_api_data.py --out {data} first")
        split_files = {s: data / f"{s}.jsonl" for s in splits}
    if kg_source and not Path(kg_source).is_dir():
        raise UsageError(f"no KG source folder {kg_source}")
    config = load_config(profile)
    kg_config = config.kg if icl_k is None else replace(config.kg, icl_k=icl_k)
    if api_prompt is not None:
        kg_config = replace(kg_config, api_prompt=api_prompt)
    llm_config = config.llm
    if no_adapter:
        kg_config = replace(kg_config, api_adapter=None)
    if adapter:
        llm_config = replace(llm_config, adapters={**llm_config.adapters, ADAPTER_NAME: str(Path(adapter).resolve())})
        kg_config = replace(kg_config, api_adapter=ADAPTER_NAME)
    generator = make_generator(llm_config, config.models_dir)
    embedder = Embedder.from_config(config.embedder, config.models_dir)
    figures = {"profile": profile or "default", "adapter": kg_config.api_adapter and
               str(llm_config.adapters.get(kg_config.api_adapter)), "api_prompt": kg_config.api_prompt,
               "icl_k": kg_config.icl_k,
               "constrained": kg_config.constrained, "batch_size": config.pipeline.batch_size, "splits": {}}
    with tempfile.TemporaryDirectory(prefix="cragkg-") as built, \
            running_server(build(built, kg_source) if kg_source else None) as url:
        kg = KGPathway.from_config(replace(kg_config, api_url=url), embedder=embedder)
        for split, path in split_files.items():
            examples = sample(read_examples(path), limit, seed)
            print(f"{split}: {len(examples)} questions")
            result = evaluate(examples, kg, generator, config.pipeline.batch_size, show)
            figures["splits"][split] = result
            print(f"{split}: n={result['n']} compile {result['compile_rate']:.1%}  "
                  f"executes {result['execution_rate']:.1%}  correct {result['correct_rate']:.1%}  "
                  f"{result['seconds_per_question']:.2f} s/question", flush=True)
            if len(result["by_held"]) > 1:
                print("  " + "  ".join(f"held out by {kind}: {v['correct_rate']:.1%} of {v['n']}"
                                       for kind, v in result["by_held"].items()), flush=True)
    if json_path:
        Path(json_path).write_text(json.dumps(figures, indent=2), encoding="utf-8")
    return figures
