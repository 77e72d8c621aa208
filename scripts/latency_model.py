"""The g4dn profiles' time per batch of 16, projected from a traced CPU run of the real pipeline.

    python scripts/latency_model.py trace --task 1 --limit 4 --out /tmp/lat-t1   # CPU run with g4dn prompt shapes
    python scripts/latency_model.py trace --task 2 --limit 4 --out /tmp/lat-t2
    python scripts/latency_model.py trace --task 3 --limit 4 --data data/sample/crag_sample_task3.jsonl --out /tmp/lat-t3
    python scripts/latency_model.py project /tmp/lat-t1 /tmp/lat-t2 /tmp/lat-t3   # [--profiles g4dn g4dn-hf]
    python scripts/latency_model.py project /tmp/lat-t3 --calibration gpu_bench.json  # measured constants (gpu_bench.py)

`trace` runs `local_evaluation.py` on the CPU models with the g4dn profile's shapes (batch 16, 50 recalled
and 10 reranked parents, 4,000 context tokens, 4 in-context KG examples, its token caps) and an unbounded
per-question budget, so every stage runs and its LLM calls are recorded in each answer's trace
(`trace["llm_calls"]`: stage, adapter, prompt_tokens, output_tokens); a 135M model answering 4,000-token
prompts on a laptop is slow, so a few questions per task (`--limit`) are traced. `project` replays the first 16
questions of each run (repeated when a run has fewer) through `models/latency.py` on 4x T4, fp16, under each of
`--profiles` (default both): `g4dn`, vLLM with tensor parallel 4, and `g4dn-hf`, transformers + peft with the layers
split over the four cards (one card at a time), one `generate` per adapter group of at most 8 rows, padded:
- each traced LLM stage as vLLM's one batched call or the HF backend's calls in turn, with the adapter the g4dn
  profiles give that stage (LoRA's cost where there is one), both as traced and in the worst case a stage must fit
  (the bar is judged on it): every output at its token cap and every answer prompt with its whole context
  budget (4,000 tokens) filled;
- db3's domain-routing prompt on the base model (the g4dn router; the CPU profile uses a classifier);
- web: page parsing timed here on one core (taken as the g4dn host's per-core speed, pages parsed in turn),
  then the embedder over every child chunk and the query, the cross-encoder over the recalled parents (the
  `recall_k` longest, an upper bound) and,
  in Task 3, over the page snippets (preselection), counted with the g4dn chunk sizes at 4 characters per token;
- KG: every API call the traced programs made, at 50 ms each (an HTTP round trip to a mock API on the
  grader's network; ours answers in a few ms locally); in the worst case `kg.max_calls_per_question` each.
Token counts come from the CPU model's tokenizer (SmolLM2, 49k vocabulary), which splits English into
more tokens than Llama 3's 128k vocabulary: the projection errs long.
The library is `evaluation/experiments/latency_model.py`.
"""
from __future__ import annotations

import argparse
import sys

from evaluation.experiments.latency_model import DEV_QUESTIONS, PROFILES, project_runs, trace
from models.config import REPO_ROOT


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    t = sub.add_parser("trace", help="a traced CPU run with the g4dn shapes")
    t.add_argument("--task", type=int, choices=(1, 2, 3), default=1)
    t.add_argument("--data", default=str(REPO_ROOT / "data" / "sample" / "crag_sample.jsonl"))
    t.add_argument("--out", default="")
    t.add_argument("--limit", type=int, default=0, help="only the first N questions (0: all)")
    p = sub.add_parser("project", help="project traced runs onto 4x T4")
    p.add_argument("runs", nargs="+")
    p.add_argument("--dev-questions", type=int, default=DEV_QUESTIONS,
                   help="also project a full data set of this many questions onto N g4dn servers (0: no)")
    p.add_argument("--servers", default="1,2,4,8", help="server counts for that projection")
    p.add_argument("--profiles", nargs="+", choices=PROFILES, default=list(PROFILES),
                   help="the g4dn profiles projected (their LLM backend: vLLM, or transformers + peft)")
    p.add_argument("--calibration", default="",
                   help="a scripts/gpu_bench.py JSON: its measured efficiencies and host costs replace the assumed ones")
    args = parser.parse_args(argv)
    if args.command == "trace":
        return trace(args.task, args.data, args.out, args.limit)
    return project_runs(args.runs, args.dev_questions, args.servers, args.profiles, args.calibration)


if __name__ == "__main__":
    sys.exit(main())
