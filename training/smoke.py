"""Training smoke run on the CPU profile: labels -> a few LoRA steps -> the adapter loaded for inference.

    report = run_smoke(Path("/tmp/smoke"), steps=2, max_length=512, limit=8)   # the numbers below
    smoke_training(Path("outputs/smoke_training"))                           # + smoke_report.json, printed

1. `training.build_sft_data` labels the sample's questions (web context cut to `--context-tokens`, p_basic
   answers by the CPU model, the rules judge: a 135M model cannot judge) into `<out>/web_answer.jsonl`;
2. `training.train_lora` trains `--steps` optimiser steps (batch 1 x accumulation 4) into `<out>/adapter`;
3. `HFGenerator` loads the adapter as the profile would (`llm.adapters = {web_answer: <out>/adapter}`) and
   answers the training prompts with and without it.
It prints the label table, the step losses, the mean loss of the probe examples before and after training
(the number that should fall), and how many answers the adapter changed. Data: the bundled sample, or the
real dev file when the sample is missing. With a GPU, `--qlora on` runs the same with 4-bit loading. Its command
line is scripts/smoke_training.py.
"""
from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path


SAMPLE = Path("data/sample/crag_sample.jsonl")


def run_smoke(out: Path, steps: int = 5, max_length: int = 1024, limit: int = 20, qlora: str = "auto",
              compare: int = 8, data: str | None = None, context_tokens: int = 600) -> dict:
    """Runs the three stages (module docstring); returns the numbers it prints."""
    from models import crag_data
    from models.config import load_config
    from models.llm.generator import GenerationRequest
    from models.llm.hf_backend import HFGenerator
    from models.paths import resolve_repo_path
    from training.build_sft_data import LabelSettings, label_file
    from training.sft_data import read_records
    from training.train_lora import TrainConfig, train_files

    data = data or str(next((p for p in (resolve_repo_path(SAMPLE), crag_data.crag_path(crag_data.DEV_FILE)) if p.exists()), SAMPLE))
    # Absolute, because the profile reads a relative adapter path against the models directory, not against the
    # working directory the outputs are written in (`outputs/smoke_training` is the command's default).
    out = out.resolve()
    labels = out / "web_answer.jsonl"
    summary = label_file(LabelSettings(data=data, out=str(labels), limit=limit, judge="rules", profile="cpu",
                                       context_max_tokens=context_tokens))
    adapter = out / "adapter"
    result = train_files([str(labels)], TrainConfig(max_steps=steps, max_length=max_length, qlora=qlora),
                         out=str(adapter), profile="cpu")

    config = load_config("cpu")
    llm = replace(config.llm, adapters={"web_answer": str(adapter)})
    generator = HFGenerator(llm, config.models_dir)
    records = list(read_records(labels))[:compare]
    prompts = [r.messages[:-1] for r in records]
    tokens = config.pipeline.answer_max_new_tokens
    base = generator.generate([GenerationRequest(tuple(p), None, tokens) for p in prompts])
    tuned = generator.generate([GenerationRequest(tuple(p), "web_answer", tokens) for p in prompts])
    return {
        "data": data,
        "labels": summary["by_label_and_reason"],
        "records": summary["records"],
        "steps": result.steps,
        "step_losses": [round(x, 4) for x in result.losses],
        "eval_loss_before": result.eval_loss_before,
        "eval_loss_after": result.eval_loss_after,
        "outputs_changed": sum(b != t for b, t in zip(base, tuned)),
        "outputs_compared": len(prompts),
        "examples": [{"label": r.label, "base": b, "adapter": t} for r, b, t in zip(records, base, tuned)][:4],
    }


def smoke_training(out: Path, steps: int = 5, max_length: int = 1024, limit: int = 20, qlora: str = "auto",
                   data: str | None = None, context_tokens: int = 600) -> dict:
    """`run_smoke`, its report written to `out/smoke_report.json` and printed, then whether the loss fell."""
    report = run_smoke(out, steps, max_length, limit, qlora, data=data, context_tokens=context_tokens)
    (out / "smoke_report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))
    print(json.dumps(report, indent=1, ensure_ascii=False))
    fell = report["eval_loss_after"] < report["eval_loss_before"]
    print(f"\nloss {'fell' if fell else 'DID NOT FALL'}: {report['eval_loss_before']:.4f} -> "
          f"{report['eval_loss_after']:.4f}; adapter changed {report['outputs_changed']} of "
          f"{report['outputs_compared']} answers")
    return report
