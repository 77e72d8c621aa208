"""What an evaluation run reports: `summary.json`, `report.md` and a chart, from predictions and verdicts.

A prediction record is one line of `predictions.jsonl` (see `evaluation.runner`): gold fields, the model's
source and predicted domain, and the per-question latency. The summary holds
- the official metrics dict, and the same metrics by domain, question_type, static_or_dynamic and popularity
  (popularity only when the data has it, i.e. v5);
- the macro average of the score over domains, the official final ranking's aggregate (traffic weights
  were never published, so each question weighs the same inside its domain);
- how many predictions were unjudged (no judge could decide them) and the note that they are scored as
  hallucinations, as a failed judge call is in the official scorer, so such a score is a lower bound;
- beside the headline metrics (by default the normalized judge's), the official V3 metrics: the exact and
  invalid rules plus the configured LLM judge (rules only when there is none), with their own counts;
- router accuracy (predicted vs gold domain) when the model exposed its predicted domains;
- answer source counts (kg / public / web / llm / ...), and who decided each verdict;
- latency: median, p95, max per question and how many went over the grader's 30 s budget;
- one row per question: the answer, the gold, the verdict and who decided it, the pathway that answered and,
  from the trace, why (the verifier's reason, or why no pathway answered) — the full trace stays in
  predictions.jsonl (`local_evaluation.py --explain ID`).
"""
from __future__ import annotations

import json
import math
from collections import Counter
from pathlib import Path
from typing import Sequence

from evaluation.metrics import Verdict, compute_metrics, count_unjudged
from evaluation.run_dir import RunDir

BUDGET_S = 30.0  # the grader's per-question limit
BREAKDOWNS = ("domain", "question_type", "static_or_dynamic", "popularity")
UNJUDGED_NOTE = ("{n} prediction(s) were neither exact matches nor decided by a rule or judge: they are counted "
                 "as hallucinations, as a failed judge call is in the official scorer, so score and accuracy "
                 "are lower bounds.")


def summarize(records: Sequence[dict], verdicts: Sequence[Verdict], *, judge: str, trim: str,
              meta: dict | None = None, official: Sequence[Verdict] | None = None,
              official_judge: str = "") -> dict:
    """Everything `report.md` shows, as plain data (written to `summary.json`).

    Args:
        records: prediction records, aligned with `verdicts`.
        verdicts: from `score_predictions`.
        judge: the judge's name; trim: the trimmer's name (both recorded, as the score depends on them).
        meta: run facts to keep (data path, profile, task, ...).
        official: the official V3 verdicts for the same records, when `verdicts` are another judge's;
            official_judge: who judged those (e.g. `rules` or `openai:gpt-4-0125-preview`).

    Raises:
        ValueError: records and verdicts differ in length.
    """
    if len(records) != len(verdicts) or official is not None and len(official) != len(verdicts):
        raise ValueError(f"{len(records)} records but {len(verdicts)} verdicts"
                         + (f" and {len(official)} official verdicts" if official is not None else ""))
    n_unjudged = count_unjudged(verdicts)
    by = {key: _breakdown(records, verdicts, key) for key in BREAKDOWNS}
    if not any(by["popularity"]):  # before v5 every popularity is ""
        del by["popularity"]
    domain_scores = [m["score"] for name, m in by["domain"].items() if name]
    return {
        **(meta or {}),
        "metrics": compute_metrics(verdicts),
        "macro_score_over_domains": sum(domain_scores) / len(domain_scores) if domain_scores else 0.0,
        "judge": judge,
        "trim": trim,
        "n_unjudged": n_unjudged,
        "scoring_note": UNJUDGED_NOTE.format(n=n_unjudged) if n_unjudged else "",
        **{f"by_{key}": table for key, table in by.items()},
        "decided_by": decided_by_counts(verdicts),
        "official": official_summary(official, official_judge) if official is not None else None,
        "router": _router_accuracy(records),
        "sources": dict(Counter(r.get("source") or "unknown" for r in records).most_common()),
        "latency": latency_stats([r.get("latency_s") for r in records]),
        "questions": [_question_row(r, v) for r, v in zip(records, verdicts)],
    }


def _question_row(record: dict, verdict: Verdict) -> dict:
    trace = record.get("trace") or {}
    return {"id": str(record.get("interaction_id", ""))[:8], "query": record.get("query", ""),
            "prediction": verdict.prediction, "gold": record.get("gold", ""), "outcome": verdict.outcome,
            "decided_by": verdict.decided_by, "source": record.get("source") or trace.get("source") or "",
            "why": trace.get("why", "")}


def decided_by_counts(verdicts: Sequence[Verdict]) -> dict[str, int]:
    """How many verdicts each rule or judge gave: exact, invalid-rule, idk-rule, normalized, the LLM judge's
    name (e.g. local), judge-error:<name>, unjudged."""
    return dict(Counter(v.decided_by.removeprefix("judge:") for v in verdicts).most_common())


def official_summary(verdicts: Sequence[Verdict], judge: str) -> dict:
    return {"judge": judge, "metrics": compute_metrics(verdicts), "n_unjudged": count_unjudged(verdicts),
            "decided_by": decided_by_counts(verdicts)}


def _breakdown(records: Sequence[dict], verdicts: Sequence[Verdict], key: str) -> dict:
    groups: dict[str, list[Verdict]] = {}
    for record, verdict in zip(records, verdicts):
        groups.setdefault(str(record.get(key) or ""), []).append(verdict)
    return {name: compute_metrics(groups[name]) for name in sorted(groups)}


def _router_accuracy(records: Sequence[dict]) -> dict:
    routed = [r for r in records if r.get("predicted_domain")]
    correct = sum(r["predicted_domain"] == r.get("domain") for r in routed)
    return {"accuracy": correct / len(routed) if routed else None, "n": len(routed)}


def latency_stats(latencies: Sequence[float | None]) -> dict:
    """Median, p95 (nearest rank), max and mean seconds per question, and the count over the 30 s budget."""
    values = sorted(float(x) for x in latencies if isinstance(x, (int, float)) and math.isfinite(x))
    if not values:
        return {"n": 0, "median_s": None, "p95_s": None, "max_s": None, "mean_s": None, "n_over_budget": 0}
    middle = len(values) // 2
    median = values[middle] if len(values) % 2 else (values[middle - 1] + values[middle]) / 2
    return {
        "n": len(values),
        "median_s": median,
        "p95_s": values[max(0, math.ceil(0.95 * len(values)) - 1)],
        "max_s": values[-1],
        "mean_s": sum(values) / len(values),
        "n_over_budget": sum(x > BUDGET_S for x in values),
    }


def write_report(summary: dict, out_dir: str | Path) -> dict[str, Path]:
    """Writes `summary.json`, `report.md` and the per-domain chart into `out_dir`.

    Returns:
        {"summary": path, "report": path, "chart": path}.
    """
    run = RunDir(out_dir)
    run.path.mkdir(parents=True, exist_ok=True)
    paths = {"summary": run.summary_path, "report": run.report_path, "chart": run.chart_path}
    paths["summary"].write_text(json.dumps(summary, indent=2, sort_keys=False) + "\n", encoding="utf-8")
    plot_domains(summary["by_domain"], paths["chart"])
    paths["report"].write_text(render_markdown(summary), encoding="utf-8")
    return paths


def render_markdown(summary: dict) -> str:
    """The human-readable report."""
    m = summary["metrics"]
    lines = ["# CRAG local evaluation", ""]
    facts = {k: summary[k] for k in ("data", "profile", "task", "judge", "trim") if k in summary}
    lines += [f"- **{k}**: {v}" for k, v in facts.items()]
    official = summary.get("official")
    title = "Official metrics (V3 rules)" if official is None else f"Metrics (V3 rules, judge: {summary['judge']})"
    lines += ["", f"## {title}", "", _score_line(m), "",
              f"**Macro average of score over domains** (the final ranking's aggregate): "
              f"{summary['macro_score_over_domains']:.4f}", ""]
    if summary.get("scoring_note"):
        lines += [f"> **Unjudged: {summary['n_unjudged']}.** {summary['scoring_note']}", ""]
    if official is not None:
        lines += [f"## Official V3 metrics (exact and invalid rules + judge: {official['judge']})", "",
                  _score_line(official["metrics"]), "", f"Unjudged (counted as hallucinations): "
                  f"{official['n_unjudged']}; decided by: "
                  + ", ".join(f"{name} {n}" for name, n in official["decided_by"].items()), ""]
    for key in BREAKDOWNS:
        if f"by_{key}" in summary:
            lines += [f"## By {key}", ""] + _metrics_table(summary[f"by_{key}"], key) + [""]
    router = summary["router"]
    lines += ["## Router", ""]
    lines += [f"Domain accuracy {router['accuracy']:.4f} over {router['n']} questions.", ""] if router["n"] else [
        "The model did not expose predicted domains.", ""]
    lines += ["## Answer sources", "", "| source | n |", "|---|---|"]
    lines += [f"| {name} | {n} |" for name, n in summary["sources"].items()]
    lines += ["", "## Decided by", "", "| rule or judge | n |", "|---|---|"]
    lines += [f"| {name} | {n} |" for name, n in summary["decided_by"].items()]
    lat = summary["latency"]
    lines += ["", "## Latency per question", ""]
    lines += ([f"median {lat['median_s']:.2f} s, p95 {lat['p95_s']:.2f} s, max {lat['max_s']:.2f} s, "
               f"mean {lat['mean_s']:.2f} s; {lat['n_over_budget']} of {lat['n']} over the {BUDGET_S:.0f} s budget"]
              if lat["n"] else ["no latencies recorded"])
    lines += ["", f"![score, accuracy and hallucination by domain]({RunDir.CHART})", ""]
    if summary.get("questions"):
        lines += ["## Per question", "", "Why each question was answered or not; the whole trace: "
                  "`python local_evaluation.py --output-dir <this dir> --explain <id>`.", "",
                  "| id | question | answer | gold | verdict (by) | source | why |", "|---|---|---|---|---|---|---|"]
        lines += [f"| {q['id']} | {_cell(q['query'], 70)} | {_cell(q['prediction'], 40)} | {_cell(q['gold'], 40)} | "
                  f"{q['outcome']} ({q['decided_by']}) | {q['source']} | {_cell(q['why'], 110)} |"
                  for q in summary["questions"]]
        lines += [""]
    return "\n".join(lines)


def _cell(text, limit: int) -> str:
    """One markdown table cell: one line, no pipes, at most `limit` characters."""
    text = " ".join(str(text or "").split()).replace("|", "/")
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"


def _score_line(m: dict) -> str:
    return (f"**score {m['score']:.4f}** = accuracy {m['accuracy']:.4f} - hallucination {m['hallucination']:.4f} "
            f"(missing {m['missing']:.4f}; {m['n_correct']} correct of which {m['n_correct_exact']} exact, "
            f"{m['n_miss']} missing, {m['n_hallucination']} hallucinated, {m['total']} total)")


def _metrics_table(table: dict, key: str) -> list[str]:
    rows = [f"| {key} | n | score | accuracy | hallucination | missing |", "|---|---|---|---|---|---|"]
    for name, m in table.items():
        rows.append(f"| {name or '(none)'} | {m['total']} | {m['score']:.3f} | {m['accuracy']:.3f} | "
                    f"{m['hallucination']:.3f} | {m['missing']:.3f} |")
    return rows


def plot_domains(by_domain: dict, path: str | Path) -> None:
    """Grouped bars of score, accuracy and hallucination per domain (matplotlib, Agg: no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(by_domain) or ["(no data)"]
    series = {"score": "#4c72b0", "accuracy": "#55a868", "hallucination": "#c44e52"}
    fig, ax = plt.subplots(figsize=(max(6.0, 1.3 * len(names) + 3), 3.6))
    width = 0.8 / len(series)
    for k, (metric, color) in enumerate(series.items()):
        values = [by_domain.get(name, {}).get(metric, 0.0) for name in names]
        ax.bar([i + (k - 1) * width for i in range(len(names))], values, width, label=metric, color=color)
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xticks(range(len(names)), [n or "(none)" for n in names])
    ax.set_ylim(-1.05, 1.05)
    ax.set_ylabel("fraction of questions")
    ax.set_title("CRAG V3 metrics by domain")
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0), fontsize=8)  # outside: bars reach both -1 and 1
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
