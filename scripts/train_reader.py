"""Trains the answer reader (`verifier.reader`) of a profile from its `verifier.reader_base`, on CPU.

    python scripts/train_reader.py --profile cpu                     # MiniLM-L6 -> models/readers/cpu (`make verifier`)
    python scripts/train_reader.py --profile g4dn --if-present       # bge-reranker-v2-m3, where its weights are
    python scripts/train_reader.py --profile cpu --output /tmp/r --epochs 1
    python scripts/train_reader.py --evaluate models/readers/cpu --data /tmp/examples.jsonl  # no training

Reads `data/reader/reader_examples.jsonl` (`scripts/make_reader_data.py`), trains a LoRA adapter and a one-logit
head over the base on its training questions, prints the held-out loss, F1 and ms per candidate, and saves the
adapter (small: the base ships elsewhere) with `training_log.json` beside it; the held-out F1 is also given per
origin of the examples (`traced`: the package's own judged candidates). `--evaluate FOLDER` measures a saved reader
on the held-out examples of `--data` instead, training nothing. The library is `training/reader/train.py`.
"""
from __future__ import annotations

import argparse
import json
import sys

from models.config import load_config
from models.paths import REPO_ROOT, ModelNotFoundError, resolve_model_path
from training.reader.examples import OUTPUT, read_examples
from training.reader.train import ReaderSettings, data_digest, evaluate_reader, train_reader

DEFAULTS = ReaderSettings()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--profile", default="cpu", help="whose verifier.reader_base to train from")
    parser.add_argument("--data", default=str(REPO_ROOT / OUTPUT))
    parser.add_argument("--output", help="where to save the reader (default models/readers/<profile>)")
    parser.add_argument("--if-present", action="store_true",
                        help="exit 0 with a note when the base's weights are not in place (instead of failing)")
    parser.add_argument("--epochs", type=int, default=DEFAULTS.epochs)
    parser.add_argument("--batch-size", type=int, default=DEFAULTS.batch_size)
    parser.add_argument("--learning-rate", type=float, default=DEFAULTS.learning_rate)
    parser.add_argument("--seed", type=int, default=DEFAULTS.seed)
    parser.add_argument("--evaluate", metavar="FOLDER", help="measure the reader saved in FOLDER; train nothing")
    args = parser.parse_args(argv)
    if args.evaluate:
        figures = evaluate_reader(args.evaluate, read_examples(args.data), load_config(args.profile).models_dir)
        print(json.dumps({"reader": args.evaluate, "data": args.data, **figures}, indent=1))
        return 0
    config = load_config(args.profile)
    base = config.verifier.reader_base
    if not base:
        parser.error(f"profile {args.profile!r} names no verifier.reader_base")
    try:
        resolve_model_path(base, config.models_dir, "answer reader's base")
    except ModelNotFoundError as exc:
        if args.if_present:
            print(f"[{args.profile}] reader not trained: {exc}")
            return 0
        raise SystemExit(str(exc)) from exc
    output = args.output or str(REPO_ROOT / "models" / "readers" / config.name)
    settings = ReaderSettings(epochs=args.epochs, batch_size=args.batch_size, learning_rate=args.learning_rate,
                              seed=args.seed)
    figures = train_reader(read_examples(args.data), base, config.models_dir, output, settings,
                           data_sha256=data_digest(args.data))
    print(json.dumps({"profile": args.profile, "base": base, "output": output, **figures}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
