"""Training smoke run on the CPU profile: labels -> a few LoRA steps -> the adapter loaded for inference.

    python scripts/smoke_training.py                       # ~20 labels from the bundled sample, 5 steps
    python scripts/smoke_training.py --steps 2 --max-length 512 --limit 8 --out /tmp/smoke

It labels the sample's questions (the rules judge), trains `--steps` LoRA steps on them and loads the adapter as
the profile would, then prints the label table, the step losses, the mean loss of the probe examples before and
after training (the number that should fall), and how many answers the adapter changed; the stages are in
`training/smoke.py`. With a GPU, `--qlora on` runs the same with 4-bit loading.
"""
from __future__ import annotations

import argparse
import logging
import os
from pathlib import Path

from training.smoke import smoke_training


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
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    smoke_training(Path(args.out), args.steps, args.max_length, args.limit, args.qlora, args.data,
                   args.context_tokens)


if __name__ == "__main__":
    main()
