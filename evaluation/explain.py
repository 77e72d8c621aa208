"""One prediction record's trace as text: why a question was answered so, or not at all
(`local_evaluation.py --explain ID`)."""
from __future__ import annotations

import json
from typing import Any, Mapping


def format_trace(record: Mapping[str, Any], verdict: Mapping[str, Any] | None = None) -> str:
    """The record's question, answer, gold and verdict, then its trace stage by stage."""
    trace = record.get("trace") or {}
    lines = [f"question   {record.get('query', '')}  ({record.get('interaction_id', '')}, {record.get('query_time', '')})",
             f"answer     {record.get('prediction', '')!r}  from {trace.get('source') or record.get('source') or '?'}",
             f"gold       {record.get('gold', '')!r}  alt {record.get('alt_ans') or []}"]
    if verdict:
        lines.append(f"verdict    {verdict.get('outcome')} ({verdict.get('decided_by')}: {verdict.get('explanation')})")
    if not trace:
        lines.append("(no trace saved for this question)")
        return "\n".join(lines)
    if trace.get("why"):
        lines.append(f"why        {trace['why']}")
    lines.append(f"task {trace.get('task')}, predicted domain {trace.get('domain')} "
                 f"(true {record.get('domain', '?')}, type {record.get('question_type', '?')})")
    stages = trace.get("stages") or {}
    if stages:
        lines.append("stages (s, whole batch): " + ", ".join(f"{k} {v}" for k, v in stages.items()))
    for call in trace.get("llm_calls") or []:
        adapter = call.get("adapter") if not call.get("adapter_missing") else \
            f"none (the base model stood in for the missing {call['adapter_missing']})"
        lines.append(f"  llm call  {call.get('stage')}: adapter {adapter}, {call.get('prompt_tokens')} "
                     f"prompt + {call.get('output_tokens')} output tokens, {call.get('seconds')} s "
                     f"(batch of {call.get('batch')})")
    lines.extend(_electric_sheep_lines(trace))
    if trace.get("public_facts"):
        lines.append("public facts:")
        lines.extend(f"  - {fact}" for fact in trace["public_facts"])
    kg = trace.get("kg")
    if kg:
        lines.append(f"kg program {kg.get('program')!r} -> {kg.get('outcome')}"
                     + (f" ({kg.get('error')})" if kg.get("error") else ""))
        if kg.get("repaired"):
            lines.append(f"  run as {kg['repaired']!r}")
        lines.extend(f"  check {c['check']}: {c['verdict']} ({c['why']})" for c in kg.get("checks") or []
                     if c.get("verdict") != "passed")
        if kg.get("direct"):
            lines.append(f"  direct value {kg['direct']!r}")
        lines.extend(f"  fact: {fact}" for fact in kg.get("facts") or [])
    sql = trace.get("sql")
    if sql:
        lines.append(f"sql statement {sql.get('statement')!r}" + (f" ({sql['error']})" if sql.get("error") else ""))
        lines.extend(f"  repaired: {change}" for change in sql.get("repaired") or [])
        if sql.get("rows"):
            lines.append(f"  rows: {json.dumps(sql['rows'], ensure_ascii=False)[:200]}")
        lines.extend(f"  check: {problem}" for problem in sql.get("problems") or [])
        if sql.get("value"):
            lines.append(f"  direct value {sql['value']!r}")
    lines.extend(_omni_lines(trace.get("omni") or {}))
    for attempt in trace.get("attempts") or []:
        verifier = attempt.get("verifier") or {}
        lines.append(f"{attempt.get('pathway')} answer: raw {attempt.get('raw_output', '')!r} -> candidate "
                     f"{attempt.get('candidate', '')!r}")
        lines.append(f"  verifier: {'accepted' if verifier.get('accepted') else 'rejected'} -> "
                     f"{verifier.get('answer')!r}: {verifier.get('reason')}")
        scores = shown_scores(verifier)
        if scores:
            lines.append(f"  scores: {json.dumps(scores, ensure_ascii=False)}")
        if verifier.get("supporting"):
            lines.append(f"  best supporting sentence: {verifier['supporting']!r}")
        for chunk in attempt.get("chunks") or []:
            lines.append(f"  chunk [{chunk.get('kind')}] {chunk.get('source')} ({chunk.get('score')}): "
                         f"{chunk.get('text', '')[:120]!r}")
    return "\n".join(lines)


def shown_scores(verifier: Mapping[str, Any]) -> dict:
    """The verifier's scores a reader is shown: all but the candidate and the supporting sentence, which are
    printed on their own."""
    return {k: v for k, v in (verifier.get("scores") or {}).items() if k not in ("candidate", "supporting")}


def _omni_lines(omni: Mapping[str, Any]) -> list[str]:
    """OmniRetrieval's mode (pipeline.mode omni): the sources chosen and why, the evidence kept, the exact values."""
    lines = []
    selection = omni.get("selection")
    if selection:
        scores = ", ".join(f"{k} {v}" for k, v in (selection.get("scores") or {}).items())
        lines.append(f"omni sources ({selection.get('how')}): engaged {selection.get('engaged')}; scores {scores}")
    evidence = omni.get("evidence")
    if evidence:
        items = evidence.get("items") or []
        lines.append(f"omni evidence: {sum(1 for i in items if i.get('kept'))} of {len(items)} items kept")
        lines.extend(f"  exact value {e.get('source')}: {e.get('value')!r} (stated by {e.get('support')} other "
                     f"item(s))" for e in evidence.get("exact") or [])
        if evidence.get("conflict"):
            lines.append(f"  conflict: {evidence['conflict']}")
        if evidence.get("chosen"):
            lines.append(f"  kept: {evidence['chosen']}'s value")
    return lines


def _electric_sheep_lines(trace: Mapping[str, Any]) -> list[str]:
    """ElectricSheep's stages (Yuan et al. 2024), where the profile ran them: their decisions and seconds."""
    lines = []
    web = trace.get("web")
    if web:
        lines.append(f"web pages  extractors {', '.join(web.get('extractors') or []) or '-'}; sentence groups "
                     f"{'on' if web.get('sentence_chunks') else 'off'}; extract {web.get('extract_s')} s, "
                     f"chunk {web.get('chunk_s')} s")
    attribute = trace.get("attribute")
    if attribute:
        lines.append(f"attribute  {attribute.get('label')} by {attribute.get('method')}"
                     + (" (prediction failed: taken as dynamic)" if attribute.get("failed") else "")
                     + f", policy {attribute.get('policy')} -> {attribute.get('action') or 'answer'} "
                       f"({attribute.get('seconds')} s)")
    knowledge = trace.get("knowledge")
    if knowledge:
        lines.append(f"knowledge  note {knowledge.get('note')!r} ({knowledge.get('seconds')} s)")
    calculator = trace.get("calculator")
    if calculator:
        if calculator.get("value") is None:
            lines.append(f"calculator no value ({calculator.get('seconds')} s)")
        else:
            lines.append(f"calculator {calculator.get('expression')} = {calculator.get('value')} "
                         f"({calculator.get('votes')} of {calculator.get('samples')} samples; "
                         f"{calculator.get('seconds')} s)")
        lines.extend(f"  rejected: {reason}" for reason in calculator.get("rejected") or [])
    reasoning = trace.get("reasoning")
    if reasoning:
        lines.append(f"reasoning  {reasoning.get('source')} -> {reasoning.get('answer')!r} ({reasoning.get('seconds')} s)")
        if reasoning.get("output"):
            lines.append(f"  output: {reasoning['output'][:300]!r}")
    return lines
