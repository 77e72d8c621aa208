"""Training smoke run on the CPU profile: labels -> a few LoRA steps -> the adapter loaded for inference.

    python scripts/smoke_training.py                       # ~20 labels from the bundled sample, 5 steps
    python scripts/smoke_training.py --steps 2 --max-length 512 --limit 8 --out /tmp/smoke

1. `training.build_sft_data` labels the sample's questions (web context cut to `--context-tokens`, p_basic
   answers by the CPU model, the rules judge: a 135M model cannot judge) into `<out>/web_answer.jsonl`;
2. `training.train_lora` trains `--steps` optimiser steps (batch 1 x accumulation 4) into `<out>/adapter`;
3. `HFGenerator` loads the adapter as the profile would (`llm.adapters = {web_answer: <out>/adapter}`) and
   answers the training prompts with and without it.
It prints the label table, the step losses, the mean loss of the probe examples before and after training
(the number that should fall), and how many answers the adapter changed. Data: the bundled sample, or the
real dev file when the sample is missing. With a GPU, `--qlora on` runs the same with 4-bit loading.
"""
from __future__ import annotations

import argparse
import json
import os
from dataclasses import replace
from pathlib import Path


SAMPLE = Path("data/sample/crag_sample.jsonl")
DEV = Path("../shared/crag/dev_data.jsonl.bz2")


def run_smoke(out: Path, steps: int = 5, max_length: int = 1024, limit: int = 20, qlora: str = "auto",
              compare: int = 8, data: str | None = None, context_tokens: int = 600) -> dict:
    """Runs the three stages (module docstring); returns the numbers it prints."""
    from models.config import load_config
    from models.llm.generator import GenerationRequest
    from models.llm.hf_backend import HFGenerator
    from models.paths import resolve_repo_path
    from training import build_sft_data, train_lora
    from training.sft_data import read_records

    data = data or str(next((p for p in (resolve_repo_path(SAMPLE), resolve_repo_path(DEV)) if p.exists()), SAMPLE))
    labels = out / "web_answer.jsonl"
    summary = build_sft_data.main(["--data", data, "--out", str(labels), "--limit", str(limit), "--judge", "rules",
                                   "--profile", "cpu", "--context-max-tokens", str(context_tokens)])
    adapter = out / "adapter"
    result = train_lora.main(["--data", str(labels), "--out", str(adapter), "--profile", "cpu", "--max-steps",
                              str(steps), "--max-length", str(max_length), "--qlora", qlora])

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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default="outputs/smoke_training", help="labels, adapter and report go here")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument("--max-length", type=int, default=1024)
    parser.add_argument("--limit", type=int, default=20, help="questions to label")
    parser.add_argument("--context-tokens", type=int, default=600,
                        help="context budget of the labels (the profile's 2,000 make CPU training slow)")
    parser.add_argument("--qlora", choices=("auto", "on", "off"), default="auto")
    parser.add_argument("--data", default=None, help="CRAG file (default: the bundled sample)")
    args = parser.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(os.cpu_count() or 1))
    out = Path(args.out)
    report = run_smoke(out, args.steps, args.max_length, args.limit, args.qlora, data=args.data,
                       context_tokens=args.context_tokens)
    (out / "smoke_report.json").write_text(json.dumps(report, indent=1, ensure_ascii=False))
    print(json.dumps(report, indent=1, ensure_ascii=False))
    fell = report["eval_loss_after"] < report["eval_loss_before"]
    print(f"\nloss {'fell' if fell else 'DID NOT FALL'}: {report['eval_loss_before']:.4f} -> "
          f"{report['eval_loss_after']:.4f}; adapter changed {report['outputs_changed']} of "
          f"{report['outputs_compared']} answers")


if __name__ == "__main__":
    main()
