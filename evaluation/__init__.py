"""Local evaluation, never imported at inference: CRAG data files (`data`), the V3 scoring rules, judges,
the resumable prediction run and the report; and the library behind the evaluation command lines of scripts/: the
run folder read back (`run_dir`), the grids of runs (`grid`) of the ablation, the mode comparison and the current
results (`ablation`, `modes`, `current_results`), run comparison (`compare`), the benchmarks
(`bench/`), the accuracy of the attribute predictor (`attribute_accuracy`), the verifier sweep (`verifier_sweep`,
with `verify_saved` for runs without traces), the gate's fit (`gate_fit`) and the latency projection
(`latency_model`). What measures training's own artefacts (API generation, the key-match sweep over generated
questions, the gate's refit on generated fit sets) is in training/, which imports this package, never the reverse."""
from evaluation.judge import CachingJudge, Judgement, JudgeItem, LocalJudge, OpenAIJudge, RulesJudge, make_judge, \
    parse_judge_response
from evaluation.metrics import ScoreItem, Verdict, compute_metrics, count_unjudged, score_predictions
from evaluation.normalized_judge import NormalizedJudge
from evaluation.report import summarize, write_report
from evaluation.runner import PredictionLog, Scorings, run_predictions, score_official_and_normalized, score_records, \
    write_verdicts

__all__ = [
    "CachingJudge", "JudgeItem", "Judgement", "LocalJudge", "NormalizedJudge", "OpenAIJudge", "PredictionLog",
    "RulesJudge", "ScoreItem", "Scorings", "Verdict", "compute_metrics", "count_unjudged", "make_judge",
    "parse_judge_response", "run_predictions", "score_official_and_normalized", "score_predictions",
    "score_records", "summarize", "write_report", "write_verdicts",
]
