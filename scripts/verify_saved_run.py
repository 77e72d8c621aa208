"""Runs the verifier over a saved run that has no traces (e.g. one from before the verifier existed):
re-retrieves each question's web context with the profile's retriever (no LLM), checks the saved
prediction against it, and writes a predictions.jsonl whose records carry verifier traces, ready for
scripts/sweep_verifier.py.

    python scripts/verify_saved_run.py /tmp/base-sample/predictions.jsonl --out /tmp/base-verified

The context is the web pathway's (public-data facts, which the pipeline puts first, are not rebuilt), so a
prediction that came from public data or the KG is checked against the web pages only.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path


from models.config import load_config
from models.types import Query
from evaluation.data import DEFAULT_DATA_PATH, load_examples
from evaluation.runner import PREDICTIONS_FILE, PredictionLog
from models.verify import Candidate, SupportVerifier
from models.embedder import Embedder
from models.web import WebRetriever


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("predictions", help="a saved predictions.jsonl")
    parser.add_argument("--data", default=DEFAULT_DATA_PATH, help="the data the run answered")
    parser.add_argument("--task", type=int, default=1)
    parser.add_argument("--profile", default="cpu")
    parser.add_argument("--out", required=True, help="output dir for the traced predictions.jsonl")
    args = parser.parse_args(argv)

    config = load_config(args.profile, {"pipeline.task": args.task})
    embedder = Embedder.from_config(config.embedder, config.models_dir)
    web = WebRetriever.from_config(config.web, config.models_dir, embedder=embedder)
    verifier = SupportVerifier(config.verifier, embedder=embedder)
    examples = {e["interaction_id"]: e for e in load_examples(args.data)}
    records = PredictionLog(args.predictions).load()
    out = PredictionLog(Path(args.out) / PREDICTIONS_FILE)
    out.path.unlink(missing_ok=True)
    for record in records:
        example = examples[record["interaction_id"]]
        query = Query.from_crag(example)
        chunks = web.retrieve([query], task=args.task)[0]
        decision = verifier.verify([Candidate(query.text, record["prediction"], tuple(c.text for c in chunks),
                                              "web")])[0]
        attempt = {"pathway": "web", "raw_output": record["prediction"], "candidate": record["prediction"],
                   "chunks": [{"source": c.source, "kind": c.kind, "score": round(float(c.score), 4),
                               "text": c.text[:300]} for c in chunks],
                   "verifier": decision.as_trace()}
        out.append([{**record, "prediction": decision.answer,
                     "trace": {"source": "web", "why": decision.reason, "attempts": [attempt]}}])
        print(f"{decision.accepted!s:5} {record['prediction'][:60]!r:64} {decision.reason[:90]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
