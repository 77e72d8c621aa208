"""Local evaluation, never imported at inference. The evaluator `local_evaluation.py` runs, here at the top: CRAG
data files (`data`), the V3 scoring rules (`metrics`), the judges (`judge`, `normalized_judge` with `normalize` and
`answer_match`), the resumable prediction run (`runner`, `ray_runner`), a run folder read back (`run_dir`), the
report (`report`, `html_report`, `explain`) and run comparison (`compare`). In subpackages below it, importing it and
never imported by it: `experiments/` (the grid runner and its grids of runs, what is read from runs, the latency
projection), `bench/` (the benchmarks), `acceptance/` (the builders of the acceptance data) and `servers/` (LLM
servers started for runs and tests). The answer gate's fit is in training/gate/, which imports this package, never
the reverse."""
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
