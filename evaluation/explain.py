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
        lines.append(f"  llm call  {call.get('stage')}: adapter {call.get('adapter')}, {call.get('prompt_tokens')} "
                     f"prompt + {call.get('output_tokens')} output tokens, {call.get('seconds')} s "
                     f"(batch of {call.get('batch')})")
    if trace.get("public_facts"):
        lines.append("public facts:")
        lines.extend(f"  - {fact}" for fact in trace["public_facts"])
    kg = trace.get("kg")
    if kg:
        lines.append(f"kg program {kg.get('program')!r} -> {kg.get('outcome')}"
                     + (f" ({kg.get('error')})" if kg.get("error") else ""))
        if kg.get("direct"):
            lines.append(f"  direct value {kg['direct']!r}")
        lines.extend(f"  fact: {fact}" for fact in kg.get("facts") or [])
    for attempt in trace.get("attempts") or []:
        verifier = attempt.get("verifier") or {}
        lines.append(f"{attempt.get('pathway')} answer: raw {attempt.get('raw_output', '')!r} -> candidate "
                     f"{attempt.get('candidate', '')!r}")
        lines.append(f"  verifier: {'accepted' if verifier.get('accepted') else 'rejected'} -> "
                     f"{verifier.get('answer')!r}: {verifier.get('reason')}")
        scores = {k: v for k, v in (verifier.get("scores") or {}).items() if k not in ("candidate", "supporting")}
        if scores:
            lines.append(f"  scores: {json.dumps(scores, ensure_ascii=False)}")
        if verifier.get("supporting"):
            lines.append(f"  best supporting sentence: {verifier['supporting']!r}")
        for chunk in attempt.get("chunks") or []:
            lines.append(f"  chunk [{chunk.get('kind')}] {chunk.get('source')} ({chunk.get('score')}): "
                         f"{chunk.get('text', '')[:120]!r}")
    return "\n".join(lines)
