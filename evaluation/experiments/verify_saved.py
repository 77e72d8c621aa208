"""Running the verifier over a saved run that has no traces, as scripts/verify_saved_run.py does (its docstring
says what is rebuilt and what is not).

`verify_saved_run` re-retrieves each question's web context with the profile's retriever (no LLM), checks the saved
prediction against it with the support verifier, and writes a predictions.jsonl whose records carry verifier traces,
ready for the verifier sweep (`evaluation/experiments/verifier_sweep.py`).
"""
from __future__ import annotations


from evaluation.data import DEFAULT_DATA_PATH, load_examples
from evaluation.run_dir import RunDir, read_records
from evaluation.runner import PredictionLog
from models.config import load_config
from models.embedder import Embedder
from models.pathways import WEB
from models.types import Query
from models.verify import Candidate, SupportVerifier
from models.web import WebRetriever


def verify_saved_run(predictions: str, out_dir: str, data: str = DEFAULT_DATA_PATH, task: int = 1,
                     profile: str = "cpu") -> int:
    """Verifies every saved prediction of `predictions` (a run of `data` as Task `task`) and writes the traced
    records to `out_dir`/predictions.jsonl, printing one line per question."""
    config = load_config(profile, {"pipeline.task": task})
    embedder = Embedder.from_config(config.embedder, config.models_dir)
    web = WebRetriever.from_config(config.web, config.models_dir, embedder=embedder)
    verifier = SupportVerifier(config.verifier, embedder=embedder)
    examples = {e["interaction_id"]: e for e in load_examples(data)}
    records = read_records(predictions)
    out = PredictionLog(RunDir(out_dir).predictions_path)
    out.path.unlink(missing_ok=True)
    for record in records:
        example = examples[record["interaction_id"]]
        query = Query.from_crag(example)
        chunks = web.retrieve([query], task=task)[0].items
        decision = verifier.verify([Candidate(query.text, record["prediction"], tuple(c.text for c in chunks),
                                              WEB)])[0]
        attempt = {"pathway": WEB.name, "raw_output": record["prediction"], "candidate": record["prediction"],
                   "chunks": [{"source": c.source, "kind": c.kind, "score": round(float(c.score), 4),
                               "text": c.text[:300]} for c in chunks],
                   "verifier": decision.as_trace()}
        out.append([{**record, "prediction": decision.answer,
                     "trace": {"source": WEB.name, "why": decision.reason, "stop": decision.stop.value,
                               "attempts": [attempt]}}])
        print(f"{decision.accepted!s:5} {record['prediction'][:60]!r:64} {decision.reason[:90]}", flush=True)
    return 0
