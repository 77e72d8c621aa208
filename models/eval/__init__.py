"""Local evaluation: the CRAG V3 scoring rules, judges, the resumable prediction run and the report."""
from models.eval.judge import CachingJudge, Judgement, JudgeItem, LocalJudge, OpenAIJudge, RulesJudge, make_judge, \
    parse_judge_response
from models.eval.metrics import ScoreItem, Verdict, compute_metrics, count_unjudged, score_predictions
from models.eval.normalized_judge import NormalizedJudge
from models.eval.report import summarize, write_report
from models.eval.runner import PredictionLog, Scorings, run_predictions, score_official_and_normalized, score_records, \
    write_verdicts

__all__ = [
    "CachingJudge", "JudgeItem", "Judgement", "LocalJudge", "NormalizedJudge", "OpenAIJudge", "PredictionLog",
    "RulesJudge", "ScoreItem", "Scorings", "Verdict", "compute_metrics", "count_unjudged", "make_judge",
    "parse_judge_response", "run_predictions", "score_official_and_normalized", "score_predictions",
    "score_records", "summarize", "write_report", "write_verdicts",
]
