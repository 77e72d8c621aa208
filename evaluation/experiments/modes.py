"""db3's cascade and OmniRetrieval's mode side by side: the rows, what the traces say, and the table
(the command line is scripts/compare_modes.py, whose docstring describes the columns).

`MODES` are the rows' profile overrides; `SUITES` the ablation's suites plus `public` (the public-data acceptance
set). From each run's prediction records: `trace_figures` (answer-in-context recall of what the answer attempts
read or proposed, and the conflicts between sources), `gold_sources` (the sources whose evidence states a gold
key, in the every-source run) and `selection` (source-selection accuracy of the omni run against them).
`run_modes` runs each row on each suite as a grid cell (`evaluation.experiments.grid.run_cell`), as the ablation does, and
writes the `table`.
"""
from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from evaluation.experiments.context_recall import answer_keys, found
from evaluation.experiments.grid import SUITES as ABLATION_SUITES, Outcome, run_cell, save_profile
from evaluation.sets import SETS as CATALOGUE
from evaluation.run_dir import Cell, RunDir
from models.pathways import named

log = logging.getLogger(__name__)

MODES: dict[str, dict] = {
    "db3": {"pipeline.mode": "db3"},
    "omni": {"pipeline.mode": "omni"},
    "omni-every-source": {"pipeline.mode": "omni", "omni.selection.k": 16, "omni.selection.min_score": -1.0},
}
SUITES = {**ABLATION_SUITES, "public": CATALOGUE["public_sql"].suite()}
GOLD_RUN = "omni-every-source"
STRUCTURED = ("kg", "sql", "public_data")


@dataclass(frozen=True)
class TraceFigures:
    """What one run's traces say beyond the judge's counts."""

    keys: int = 0  # gold keys of the questions that have any
    keys_found: int = 0  # of those, stated in what an answer attempt read or proposed
    conflicts: int = 0  # questions whose exact values differed (omni)
    rules: tuple[str, ...] = ()  # the rule that settled each conflict

    @property
    def recall(self) -> float:
        return self.keys_found / self.keys if self.keys else float("nan")


@dataclass(frozen=True)
class Selection:
    """Source-selection accuracy of one omni run against the gold sources of the every-source run."""

    known: int = 0  # questions with at least one gold source
    top1: int = 0
    any: int = 0
    structured_known: int = 0  # questions with a structured gold source
    any_structured: int = 0


def keys_of(record: dict) -> list:
    return answer_keys({"query": record.get("query", ""), "answer": record.get("gold", ""),
                        "alt_ans": record.get("alt_ans") or [], "question_type": record.get("question_type")})


def attempt_texts(record: dict) -> list[str]:
    """Every chunk an answer attempt read, and every candidate a direct (exact-value) attempt proposed."""
    texts = []
    for attempt in (record.get("trace") or {}).get("attempts") or []:
        texts += [c.get("text", "") for c in attempt.get("chunks") or []]
        if attempt.get("pathway") and named(attempt["pathway"]).own_value:
            texts.append(str(attempt.get("candidate") or ""))
    return texts


def trace_figures(rows: list[dict]) -> TraceFigures:
    keys = found_keys = conflicts = 0
    rules = []
    for record in rows:
        k = keys_of(record)
        keys += len(k)
        found_keys += found(k, attempt_texts(record))
        rule = ((record.get("trace") or {}).get("omni") or {}).get("evidence", {}).get("conflict", "")
        if rule and rule != "the sources agree":
            conflicts += 1
            rules.append(rule.split(":")[0])
    return TraceFigures(keys, found_keys, conflicts, tuple(rules))


def gold_sources(record: dict) -> set[str]:
    """The sources whose evidence, in an every-source omni run, states one of the record's gold keys."""
    evidence = ((record.get("trace") or {}).get("omni") or {}).get("evidence") or {}
    keys = keys_of(record)
    texts: dict[str, list[str]] = {}
    for item in evidence.get("items") or []:
        texts.setdefault(item.get("source", ""), []).append(item.get("text", ""))
    for exact in evidence.get("exact") or []:
        texts.setdefault(exact.get("source", ""), []).append(str(exact.get("value", "")))
    return {source for source, found_in in texts.items() if source and found(keys, found_in)}


def selection(omni_rows: list[dict], gold_rows: list[dict]) -> Selection:
    gold = {r.get("interaction_id"): gold_sources(r) for r in gold_rows}
    known = top1 = anyone = structured_known = any_structured = 0
    for record in omni_rows:
        sources = gold.get(record.get("interaction_id")) or set()
        engaged = (((record.get("trace") or {}).get("omni") or {}).get("selection") or {}).get("engaged") or []
        if not sources:
            continue
        known += 1
        top1 += bool(engaged) and engaged[0] in sources
        anyone += bool(sources & set(engaged))
        structured = sources & set(STRUCTURED)
        if structured:
            structured_known += 1
            any_structured += bool(structured & set(engaged))
    return Selection(known, top1, anyone, structured_known, any_structured)


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} ({part / whole:.0%})" if whole else "n/a"


def readable_records(run: RunDir) -> list[dict]:
    """The run's records; none, logged, when its predictions.jsonl is corrupt (its figures then show none)."""
    try:
        return run.records()
    except (OSError, ValueError) as exc:
        log.warning("%s: unreadable (%s); its records are left out", run.predictions_path, exc)
        return []


def table(root: Path, suites: list[str]) -> str:
    lines = ["| suite | mode | correct / missing / halluc. (n) | score | s/q | answer in context | "
             "selection top-1 | selection any | any structured | conflicts (rule) |", "|---" * 10 + "|"]
    for suite in suites:
        gold_rows = readable_records(RunDir(root / GOLD_RUN / suite))
        for mode in MODES:
            run = RunDir(root / mode / suite)
            cell = run.cell() or Cell("not run")
            if cell.status != "ok":
                lines.append(f"| {suite} | {mode} | {cell.status} | | | | | | | |")
                continue
            rows = readable_records(run)
            figures = trace_figures(rows)
            picked = selection(rows, gold_rows) if mode == "omni" and gold_rows else None
            rules = ", ".join(f"{r} {figures.rules.count(r)}" for r in sorted(set(figures.rules)))
            lines.append(
                f"| {suite} | {mode} | {cell.correct} / {cell.missing} / {cell.hallucination} ({cell.total}) | "
                f"{cell.score:+.3f} | {cell.seconds:.1f} | {_share(figures.keys_found, figures.keys)} | "
                + (f"{_share(picked.top1, picked.known)} | {_share(picked.any, picked.known)} | "
                   f"{_share(picked.any_structured, picked.structured_known)} | " if picked else "— | — | — | ")
                + (f"{figures.conflicts}{f' ({rules})' if rules else ''} |" if mode != "db3" else "— |"))
    return "\n".join(lines)


def run_modes(suites: list[str] = tuple(SUITES), *, only: list[str] | None = None, profile: str = "cpu",
              limit: int | None = None, lock: str = "", output_root: str = "outputs/modes", rerun: bool = False,
              dry_run: bool = False) -> int:
    """Runs (or reads) every mode of `only` (default all) on `suites`, prints the table of all the modes and
    writes it to `<output_root>/modes.md` (also after every run). Returns the exit status: 2 when a mode's
    profile does not load, else 0."""
    root = Path(output_root).resolve()
    for mode in only or MODES:
        profile_path = save_profile(profile, MODES[mode], root / mode, mode)
        if profile_path is None:
            return 2
        for suite_name in suites:
            outcome = run_cell(f"{mode} / {suite_name}", SUITES[suite_name], profile_path, root / mode / suite_name,
                               limit=limit, lock=lock, rerun=rerun, dry_run=dry_run)
            if outcome in (Outcome.RAN, Outcome.FAILED):
                (root / "modes.md").write_text(table(root, suites) + "\n", encoding="utf-8")  # rows so far
    text = table(root, suites)
    (root / "modes.md").write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0
