"""Ablation of ElectricSheep's stages (seed 001 Table 2) with this package's evaluator.

    python scripts/ablation.py --data ../shared/crag/dev_data.jsonl.bz2 --tokenizer ../shared/crag/tokenizer \\
        [--profile cpu] [--task 1] [--only base all] [--output-root /tmp/ablation] [--dry-run]

For every configuration (the base profile plus dotted overrides; `--only` picks some) it resolves and checks
the profile with `load_config`, saves it as `<output-root>/<name>/profile.yaml`, runs `local_evaluation.py`
with that profile in a subprocess (one process per configuration: each builds its own models, and a crash
costs one row), reads the metrics line it prints and finally prints one table: score, accuracy,
hallucination and missing rates. A rerun resumes each configuration's
predictions (local_evaluation's own resume). `--dry-run` writes the profiles and prints the commands only.

The stages switch on through their own profile sections; a configuration only measures something once
the pipeline reads that section.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from models.config import REPO_ROOT, ConfigError, load_config, save_config  # noqa: E402

WEB = {"web.main_content.enabled": True, "web.sentence_chunks.enabled": True}
ATTRIBUTES = {"attributes.enabled": True}
CALCULATOR = {"calculator.enabled": True}
KNOWLEDGE = {"reasoning.knowledge.enabled": True}
REASONING = {"reasoning.enabled": True}
NO_BACKUP = {"reasoning.backup.enabled": False}
CONFIGURATIONS: dict[str, dict] = {
    "base": {},
    "+web": WEB,
    "+attributes(idk)": ATTRIBUTES,
    "+attributes(verify)": {**ATTRIBUTES, "attributes.dynamic_policy": "verify"},
    "+reasoning": REASONING,
    "+reasoning-backup": {**REASONING, **NO_BACKUP},
    "+reasoning+calculator": {**REASONING, **CALCULATOR},
    "+reasoning+knowledge": {**REASONING, **KNOWLEDGE},
    "all": {**WEB, **ATTRIBUTES, **CALCULATOR, **KNOWLEDGE, **REASONING},
}


def command(args, profile_path: Path, out_dir: Path) -> list[str]:
    cmd = [sys.executable, str(REPO_ROOT / "local_evaluation.py"), "--profile", str(profile_path), "--task",
           str(args.task), "--output-dir", str(out_dir), "--data", args.data]
    if args.limit:
        cmd += ["--limit", str(args.limit)]
    if args.tokenizer:
        cmd += ["--tokenizer", args.tokenizer]
    return cmd


def metrics_line(stdout: str) -> dict | None:
    """The last JSON object line local_evaluation printed (its metrics dict), or None."""
    for line in reversed(stdout.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", default="data/sample/crag_sample.jsonl")
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--task", type=int, default=1, choices=(1, 2, 3))
    parser.add_argument("--limit", type=int)
    parser.add_argument("--tokenizer")
    parser.add_argument("--only", nargs="+", choices=sorted(CONFIGURATIONS), help="configurations to run")
    parser.add_argument("--output-root", default="outputs/ablation")
    parser.add_argument("--dry-run", action="store_true")
    args = parser.parse_args()

    rows = []
    for name in args.only or CONFIGURATIONS:
        out_dir = Path(args.output_root) / name.replace("+", "plus-").replace("(", "-").replace(")", "")
        out_dir.mkdir(parents=True, exist_ok=True)
        try:
            config = load_config(args.profile, CONFIGURATIONS[name])
        except ConfigError as exc:
            print(f"{name}: bad configuration: {exc}", file=sys.stderr)
            return 2
        profile_path = out_dir / "profile.yaml"
        save_config(config, profile_path)
        cmd = command(args, profile_path, out_dir)
        print(f"[{name}] {' '.join(cmd)}", flush=True)
        if args.dry_run:
            continue
        done = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True)
        metrics = metrics_line(done.stdout)
        if done.returncode != 0 or metrics is None:
            print(f"[{name}] failed (exit {done.returncode}): {done.stderr.strip()[-400:]}", file=sys.stderr)
        rows.append((name, metrics))
    if rows:
        print(f"\n{'configuration':24} {'score':>7} {'accuracy':>9} {'halluc.':>8} {'missing':>8} {'n':>5}")
        for name, m in rows:
            if m is None:
                print(f"{name:24} {'failed':>7}")
                continue
            print(f"{name:24} {m.get('score', float('nan')):7.3f} {m.get('accuracy', float('nan')):9.3f} "
                  f"{m.get('hallucination', float('nan')):8.3f} {m.get('missing', float('nan')):8.3f} "
                  f"{m.get('total', 0):5}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
