"""Trains one LoRA adapter on a chat-format SFT file (db3 Appendix B, Table 1), with peft and plain torch.

    python scripts/train_lora.py --data data/sft/web_answer.jsonl --adapter web_answer --profile g4dn
    python scripts/train_lora.py --data labels.jsonl --out /tmp/adapter --max-steps 8 --max-length 1024

Defaults are db3's Table 1 (LoRA r=8, alpha=16 on q/k/v/up/down/gate_proj; lr 2e-4, cosine after a 10% warm-up;
batch 1 x gradient accumulation 4; 2 epochs; max length 2048); 4-bit QLoRA with `--qlora auto` exactly when a CUDA
device is visible. The output is a peft adapter folder plus `training_log.json`. What each setting does and why:
`training/train_lora.py`.
"""
from __future__ import annotations

import argparse
import logging
from typing import Sequence

from training.train_lora import PRECISIONS, TrainConfig, TrainResult, train_files


def main(argv: Sequence[str] | None = None) -> TrainResult:
    defaults = TrainConfig()
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", required=True, nargs="+", help="chat-format SFT .jsonl file(s)")
    target = parser.add_mutually_exclusive_group(required=True)
    target.add_argument("--out", help="adapter folder to write")
    target.add_argument("--adapter", help="write to the folder the profile's llm.adapters names for NAME")
    parser.add_argument("--profile", default=None,
                        help="profile for the base model and --adapter (default $CRAG_PROFILE)")
    parser.add_argument("--base", default=None, help="base model: pkg:..., a folder, or a .gguf (default llm.path)")
    parser.add_argument("--epochs", type=float, default=defaults.epochs)
    parser.add_argument("--max-steps", type=int, default=defaults.max_steps, help="optimiser steps (overrides epochs)")
    parser.add_argument("--max-length", type=int, default=defaults.max_length)
    parser.add_argument("--lr", type=float, default=defaults.lr)
    parser.add_argument("--grad-accum", type=int, default=defaults.grad_accum)
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
    parser.add_argument("--qlora", choices=("auto", "on", "off"), default=defaults.qlora)
    parser.add_argument("--precision", choices=("auto", *PRECISIONS), default=defaults.precision,
                        help="auto: bf16 where the GPU has it natively, else fp16 with a loss scaler; fp32 on CPU")
    parser.add_argument("--eval-examples", type=int, default=defaults.eval_examples)
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--save-every", type=int, default=defaults.save_every,
                        help="snapshot the adapter every N optimiser steps (needs --checkpoint-dir)")
    parser.add_argument("--checkpoint-dir", default=None, help="folder for the snapshots")
    args = parser.parse_args(argv)
    if args.save_every and not args.checkpoint_dir:
        raise SystemExit("--save-every needs --checkpoint-dir")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = TrainConfig(epochs=args.epochs, max_steps=args.max_steps, max_length=args.max_length, lr=args.lr,
                         grad_accum=args.grad_accum, batch_size=args.batch_size, qlora=args.qlora,
                         precision=args.precision, eval_examples=args.eval_examples, seed=args.seed,
                         save_every=args.save_every)
    return train_files(args.data, config, args.out, args.adapter, args.profile, args.base, args.checkpoint_dir)


if __name__ == "__main__":
    main()
