"""summary.json, report.md and the chart, with the official macro average over domains."""
import json

import pytest

from evaluation.metrics import Verdict
from evaluation.report import latency_stats, summarize, write_report


def verdict(outcome, decided_by="exact"):
    return Verdict(outcome, decided_by, "", "p", exact=decided_by == "exact" and outcome == "correct")


def record(domain, question_type="simple", popularity="", source="web", predicted_domain="", latency_s=1.0):
    return {"interaction_id": f"{domain}-{question_type}", "domain": domain, "question_type": question_type,
            "static_or_dynamic": "static", "popularity": popularity, "source": source,
            "predicted_domain": predicted_domain, "latency_s": latency_s}


@pytest.fixture
def run():
    records = [record("movie", predicted_domain="movie", latency_s=2.0),
               record("movie", "comparison", source="kg", predicted_domain="music", latency_s=40.0),
               record("finance", latency_s=4.0), record("finance", source="kg", latency_s=1.0),
               record("finance", latency_s=3.0),
               record("open", source="llm", latency_s=None)]
    verdicts = [verdict("correct"), verdict("hallucination", "unjudged"),  # movie: score 0
                verdict("correct"), verdict("missing", "idk-rule"), verdict("missing", "idk-rule"),  # finance 1/3
                verdict("hallucination", "judge:local")]  # open: -1
    return records, verdicts


def test_summary_macro_average_breakdowns_router_sources_latency(run):
    summary = summarize(*run, judge="rules", trim="rule", meta={"task": 1})
    assert summary["task"] == 1 and summary["judge"] == "rules" and summary["trim"] == "rule"
    assert summary["metrics"]["total"] == 6 and summary["metrics"]["score"] == pytest.approx(0.0)
    assert {d: m["score"] for d, m in summary["by_domain"].items()} == pytest.approx(
        {"finance": 1 / 3, "movie": 0.0, "open": -1.0})
    assert summary["macro_score_over_domains"] == pytest.approx((1 / 3 + 0.0 - 1.0) / 3)
    assert summary["by_question_type"]["comparison"]["total"] == 1
    assert "by_popularity" not in summary  # no v5 popularity in this data
    assert summary["router"] == {"accuracy": 0.5, "n": 2}
    assert summary["sources"] == {"web": 3, "kg": 2, "llm": 1}
    assert summary["decided_by"] == {"exact": 2, "idk-rule": 2, "unjudged": 1, "local": 1}
    assert summary["official"] is None
    assert summary["n_unjudged"] == 1 and "counted as hallucinations" in summary["scoring_note"]
    assert summary["latency"]["n"] == 5 and summary["latency"]["n_over_budget"] == 1
    assert summary["latency"]["median_s"] == 3.0 and summary["latency"]["max_s"] == 40.0


def test_popularity_is_reported_when_present(run):
    records, verdicts = run
    records = [r | {"popularity": "head" if i % 2 else "tail"} for i, r in enumerate(records)]
    summary = summarize(records, verdicts, judge="rules", trim="rule")
    assert set(summary["by_popularity"]) == {"head", "tail"} and summary["scoring_note"]


def test_files_are_written(run, tmp_path):
    summary = summarize(*run, judge="local", trim="llama2-tokenizer", meta={"data": "d.jsonl", "profile": "cpu"})
    paths = write_report(summary, tmp_path / "out")
    assert json.loads(paths["summary"].read_text())["macro_score_over_domains"] == pytest.approx(-2 / 9)
    report = paths["report"].read_text()
    for expected in ("**score 0.0000**", "Macro average of score over domains** (the final ranking's aggregate): "
                     "-0.2222", "| finance | 3 | 0.333 |", "Unjudged: 1", "Domain accuracy 0.5000 over 2",
                     "over the 30 s budget", "scores_by_domain.png", "llama2-tokenizer"):
        assert expected in report
    assert paths["chart"].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_empty_run_still_reports(tmp_path):
    summary = summarize([], [], judge="rules", trim="rule")
    assert summary["metrics"]["total"] == 0 and summary["macro_score_over_domains"] == 0.0
    assert "no latencies recorded" in write_report(summary, tmp_path)["report"].read_text()
    with pytest.raises(ValueError):
        summarize([record("movie")], [], judge="rules", trim="rule")


def test_latency_percentiles():
    stats = latency_stats([float(x) for x in range(1, 101)] + [None, float("nan")])
    assert (stats["n"], stats["median_s"], stats["p95_s"], stats["max_s"], stats["n_over_budget"]) == (
        100, 50.5, 95.0, 100.0, 70)


def test_official_numbers_are_reported_beside_the_chosen_judge(run, tmp_path):
    records, verdicts = run
    official = [verdict("hallucination", "unjudged") if v.decided_by.startswith("judge") else v for v in verdicts]
    normalized = [verdict("correct", "judge:normalized") if v.decided_by == "judge:local" else v for v in verdicts]
    summary = summarize(records, normalized, judge="normalized", trim="rule", official=official,
                        official_judge="rules")
    assert summary["decided_by"] == {"exact": 2, "idk-rule": 2, "unjudged": 1, "normalized": 1}
    assert summary["official"]["judge"] == "rules" and summary["official"]["n_unjudged"] == 2
    assert summary["official"]["metrics"]["n_correct"] == 2 and summary["metrics"]["n_correct"] == 3
    report = write_report(summary, tmp_path)["report"].read_text()
    assert "## Metrics (V3 rules, judge: normalized)" in report
    assert "## Official V3 metrics (exact and invalid rules + judge: rules)" in report
    assert "Unjudged (counted as hallucinations): 2; decided by: exact 2, unjudged 2, idk-rule 2" in report
    with pytest.raises(ValueError):
        summarize(records, normalized, judge="normalized", trim="rule", official=official[:2])


def test_the_report_says_per_question_why_it_was_answered_or_not(run, tmp_path):
    records, verdicts = run
    records = [dict(records[0], query="who directed | inception?", gold="christopher nolan",
                    trace={"source": "web", "why": "similarity 0.41 < 0.50"})] + records[1:]
    summary = summarize(records, verdicts, judge="normalized", trim="rule")
    first = summary["questions"][0]
    assert first["why"] == "similarity 0.41 < 0.50" and first["outcome"] == "correct" and first["decided_by"] == "exact"
    assert len(summary["questions"]) == len(records)
    report = write_report(summary, tmp_path)["report"].read_text()
    assert "## Per question" in report and "| movie-si | who directed / inception? | p | christopher nolan | " \
                                          "correct (exact) | web | similarity 0.41 < 0.50 |" in report
