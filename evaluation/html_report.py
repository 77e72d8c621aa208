"""One self-contained HTML page per evaluation run: the summary `report.md` has, and every question's evidence a
click away. A second run can be laid beside it: the questions whose verdict changed, both traces.

The page is made from the run's own files (`predictions.jsonl`, `verdicts.jsonl`, `summary.json`), so a finished or
an interrupted run can be (re)drawn. Everything is inside the one file: CSS, a little vanilla JavaScript, the chart
as inline SVG; no CDN, no server, no network. Page text is hostile input: the template is rendered by Jinja2 with
autoescaping on, so a `<script>` in a chunk is shown as text and never run; the rows' data reach the script only as
a JSON island (`<script type="application/json">`, with `<`, `>` and `&` escaped).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from jinja2 import Environment, FileSystemLoader, select_autoescape

from evaluation.explain import shown_scores
from evaluation.report import BREAKDOWNS, BUDGET_S
from evaluation.run_dir import RunDir

TEMPLATES = Path(__file__).resolve().parent / "templates"
CHART_METRICS = (("score", "#3b6ea8"), ("accuracy", "#4c9a5b"), ("hallucination", "#c0504d"))


def load_run(run_dir: str | Path) -> tuple[list[dict], dict[str, dict], dict | None]:
    """(prediction records, verdicts by interaction id, summary or None) of a run directory; a run that was
    interrupted has no summary and may have fewer verdicts than predictions."""
    run = RunDir(run_dir)
    return run.records(), run.verdicts(), run.summary()


def question_view(record: Mapping[str, Any], verdict: Mapping[str, Any] | None) -> dict:
    """What the page shows of one question: the fields `--explain` prints, as data for the template."""
    trace = record.get("trace") or {}
    verdict = verdict or {}
    attempts = []
    for attempt in trace.get("attempts") or []:
        verifier = attempt.get("verifier") or {}
        attempts.append({
            "pathway": attempt.get("pathway", ""), "raw": attempt.get("raw_output", ""),
            "candidate": attempt.get("candidate", ""), "accepted": bool(verifier.get("accepted")),
            "answer": verifier.get("answer", ""), "reason": verifier.get("reason", ""),
            "scores": shown_scores(verifier),
            "reader": (verifier.get("scores") or {}).get("reader"),  # the answer reader's P(right), where it read
            "supporting": verifier.get("supporting", ""),
            "chunks": [{"source": c.get("source", ""), "kind": c.get("kind", ""), "score": c.get("score"),
                        "text": c.get("text", "")} for c in attempt.get("chunks") or []],
        })
    latency = record.get("latency_s")
    return {
        "id": str(record.get("interaction_id", "")), "query": record.get("query", ""),
        "query_time": record.get("query_time", ""), "gold": record.get("gold", ""),
        "alternatives": list(record.get("alt_ans") or []), "prediction": record.get("prediction", ""),
        "verdict": verdict.get("outcome", "unjudged"), "decided_by": verdict.get("decided_by", ""),
        "explanation": verdict.get("explanation", ""), "official": verdict.get("official_outcome", ""),
        "domain": record.get("domain", ""), "task": trace.get("task", ""),
        "source": record.get("source") or trace.get("source") or "", "why": trace.get("why", ""),
        "why_kind": why_kind(trace.get("why", ""), trace.get("stop")),
        "latency": latency, "over_budget": bool(record.get("over_budget")) or (latency or 0) > BUDGET_S,
        "stages": dict(trace.get("stages") or {}), "llm_calls": list(trace.get("llm_calls") or []),
        "public_facts": list(trace.get("public_facts") or []), "kg": trace.get("kg") or {},
        "sql": trace.get("sql") or {}, "omni": trace.get("omni") or {}, "attempts": attempts,
    }


def why_kind(why: str, stop: str | None = None) -> str:
    """The kind of a "why" reason, for the page's filter: the check that decided (its `stop` code, "overlap"); for
    a reason without one (no pathway answered, a failed batch, a run saved before the codes) its words before the
    first number, colon or bracket ("verifier: lexical 0.40 < 0.5" -> "verifier")."""
    if stop:
        return stop
    head = why.split(":")[0].split("(")[0]
    words = []
    for word in head.split():
        if any(ch.isdigit() for ch in word):
            break
        words.append(word)
    return " ".join(words[:6]) or ("" if not why else "other")


def domain_bars(by_domain: Mapping[str, Mapping[str, float]], width: int = 640, row: int = 54) -> dict:
    """The by-domain chart's geometry for the inline SVG: one group of three bars (score, accuracy,
    hallucination) per domain, on a -1 .. 1 axis for the score and 0 .. 1 for the others."""
    left, right = 110, width - 20
    zero = left + (right - left) / 2
    half = (right - left) / 2
    groups = []
    for n, (domain, m) in enumerate(sorted(by_domain.items())):
        top = 30 + n * row
        bars = []
        for k, (metric, colour) in enumerate(CHART_METRICS):
            value = float(m.get(metric, 0.0))
            x0, x1 = sorted((zero, zero + value * half))
            bars.append({"metric": metric, "value": value, "x": round(x0, 1), "y": top + k * 14,
                         "w": round(max(x1 - x0, 1.0), 1), "colour": colour})
        groups.append({"domain": domain, "y": top + 16, "bars": bars})
    return {"width": width, "height": 40 + len(groups) * row, "zero": zero, "left": left, "right": right,
            "groups": groups, "legend": CHART_METRICS}


def changes(a: Sequence[dict], b: Sequence[dict]) -> list[dict]:
    """The questions (by id, in B's order) whose verdict differs between run A and run B, each with its kind:
    gained (B correct, A not), lost (A correct, B not), new hallucination (B hallucinated, A did not), changed."""
    before = {q["id"]: q for q in a}
    out = []
    for q in b:
        p = before.get(q["id"])
        if p is None or p["verdict"] == q["verdict"]:
            continue
        hallucinated = q["verdict"] == "hallucination"
        if q["verdict"] == "correct":
            kind = "gained"
        elif p["verdict"] == "correct":
            kind = "lost (new hallucination)" if hallucinated else "lost"
        else:
            kind = "new hallucination" if hallucinated else "changed"
        out.append({"id": q["id"], "kind": kind, "a": p, "b": q})
    return out


def render(run_dir: str | Path, against: str | Path | None = None) -> str:
    """The page of `run_dir`; with `against`, the comparison of `run_dir` (A) with `against` (B) instead."""
    records, verdicts, summary = load_run(run_dir)
    questions = [question_view(r, verdicts.get(str(r.get("interaction_id")))) for r in records]
    env = Environment(loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(default=True),
                      trim_blocks=True, lstrip_blocks=True)
    env.policies["json.dumps_kwargs"] = {"ensure_ascii": False, "sort_keys": False}
    context = {"run": str(run_dir), "summary": summary, "questions": questions, "breakdowns": BREAKDOWNS,
               "budget_s": BUDGET_S, "chart": domain_bars(summary["by_domain"]) if summary else None}
    if against is None:
        return env.get_template("report.html.j2").render(**context)
    b_records, b_verdicts, b_summary = load_run(against)
    b_questions = [question_view(r, b_verdicts.get(str(r.get("interaction_id")))) for r in b_records]
    return env.get_template("compare.html.j2").render(
        run_a=str(run_dir), run_b=str(against), summary_a=summary, summary_b=b_summary,
        changes=changes(questions, b_questions), n_a=len(questions), n_b=len(b_questions))


def write_html_report(run_dir: str | Path, against: str | Path | None = None, out: str | Path | None = None) -> Path:
    """Writes the page (`RUN_DIR/report.html`, or `RUN_DIR/compare.html` with `against`) and returns its path."""
    run = RunDir(run_dir)
    path = Path(out) if out else run.page_path if against is None else run.compare_page_path
    path.write_text(render(run.path, against), encoding="utf-8")
    return path
