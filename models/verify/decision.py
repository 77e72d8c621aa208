"""What the verifier made of one candidate: the answer, whether it was accepted, and which check decided (`Stop`).

The decision carries the check as a code and the values its reason shows; the reason text is rendered from them.
Readers group and compute by the code (the calibrated gate's `stop_*` features, the HTML page's "why" filter); the
text, which embeds the answer and the words found missing, is for people and is never parsed.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Callable, Mapping


class Stop(str, Enum):
    """Which check decided a candidate (a `str`, so the trace holds the plain value)."""

    # the rules (`verifier.decide_by_rules`), in the order they are checked
    COMPUTED = "computed"  # a choice, yes/no or count question answered in code from the evidence
    NOT_COMPUTED = "not_computed"  # ... which the evidence could not answer
    ABSTAINED = "abstained"  # the model said "i don't know"
    DISABLED = "disabled"  # `verifier.enabled: false`: every answer is kept
    PREMISE_UNCONTRADICTED = "premise_uncontradicted"  # "invalid question", but no evidence negates the premise
    PREMISE_CONTRADICTED = "premise_contradicted"  # "invalid question", and an evidence sentence negates it
    REFUSAL = "refusal"  # the answer is not the kind of answer the question asks for
    NO_SPAN = "no_span"  # the answer names nothing of the kind the question asks for
    UNCHECKABLE = "uncheckable"  # nothing in the answer can be looked up in the evidence
    CHOICE = "choice"  # one of the question's own options: nothing to check
    RESTATEMENT = "restatement"  # the answer only restates the question
    LEXICAL = "lexical"  # the answer's words are not (together) in the evidence
    ALONE = "alone"  # found only inside something longer
    EXACT_VALUE = "exact_value"  # a KG program's or SQL statement's own value, of the asked kind
    SENTENCE = "sentence"  # the model's whole sentence is not supported by one chunk
    OVERLAP = "overlap"  # the evidence holding the answer is not about the question's words
    SIMILARITY = "similarity"  # the best supporting sentence is not about the question
    SUPPORTED = "supported"  # every check passed
    # what decides after (or instead of) the rules
    CALIBRATED = "calibrated"  # the calibrated gate's P(correct) against the break-even point
    READER = "reader"  # the answer reader's P(right) against the break-even point
    LLM_CHECK = "llm_check"  # the LLM support check did not confirm the answer
    DYNAMIC_IDK = "dynamic_idk"  # the attribute policy: a dynamic question without KG evidence
    DYNAMIC_STRICTER = "dynamic_stricter"  # ... which failed the stricter check
    VERIFIER_FAILED = "verifier_failed"  # the check itself raised
    NO_CONTEXT = "no_context"  # there was nothing to answer from (no model call)
    NO_OUTPUT = "no_output"  # the model's output is missing or empty


def _lexical(d: Mapping[str, Any]) -> str:
    where = f"not in the evidence: {', '.join(d['missing'])}" if d["missing"] else \
        f"not stated together in one {d['scope']}"
    return f"lexical support ({d['scope']}) {d['lexical']:.2f} < {d['min']:.2f}; {where}"


def _no_output(d: Mapping[str, Any]) -> str:
    return f"no model output ({d['error']})" if d.get("error") else \
        "no model output (the deadline cut the generation, or it was empty)"


# the reason each code renders, from the decision's `details` (a format string over them, or a function)
REASONS: Mapping[Stop, str | Callable[[Mapping[str, Any]], str]] = {
    Stop.COMPUTED: "{reason}",
    Stop.NOT_COMPUTED: "{reason}",
    Stop.ABSTAINED: "the model abstained",
    Stop.DISABLED: "verifier disabled",
    Stop.PREMISE_UNCONTRADICTED: "no evidence contradicts the premise",
    Stop.PREMISE_CONTRADICTED: "the evidence contradicts the premise",
    Stop.REFUSAL: "{refusal}",
    Stop.NO_SPAN: "the answer names no {kind} the question asks for",
    Stop.UNCHECKABLE: "nothing in the answer can be checked",
    Stop.CHOICE: "a choice between the question's options: nothing to check against the evidence",
    Stop.RESTATEMENT: "restates the question: nothing to check against the evidence",
    Stop.LEXICAL: _lexical,
    Stop.ALONE: "{answer!r} occurs in the evidence only inside something longer (a rank \"top 10\", a longer name "
                "\"Hebrew Bible\") or as an author's byline",
    Stop.EXACT_VALUE: "{what} value (lexical {lexical:.2f})",
    Stop.SENTENCE: "the model's whole sentence is not supported by one chunk ({whole:.2f} < {min:.2f}): the span "
                   "may be taken out of context",
    Stop.OVERLAP: "the evidence holding the answer shares {overlap} of the question's words < {min:.2f}",
    Stop.SIMILARITY: "similarity {similarity} < {min:.2f}",
    Stop.SUPPORTED: "supported (lexical {lexical:.2f}, similarity {similarity})",
    Stop.CALIBRATED: "calibrated gate: P(correct) {p:.2f} {side} 0.5 ({why}); rules: {rules}",
    Stop.READER: "answer reader: P(right) {p:.2f} {side} 0.5; rules: {rules}",
    Stop.LLM_CHECK: "the LLM check did not confirm the answer",
    Stop.DYNAMIC_IDK: "dynamic question without KG evidence (attribute predictor; attributes.dynamic_policy idk)",
    Stop.DYNAMIC_STRICTER: "dynamic question without KG evidence, stricter check (attributes.dynamic_policy verify): "
                           "{stricter}",
    Stop.VERIFIER_FAILED: "verifier failed: {error}",
    Stop.NO_CONTEXT: "no context to answer from",
    Stop.NO_OUTPUT: _no_output,
}


def render(stop: Stop, details: Mapping[str, Any]) -> str:
    """The reason text of a decision stopped by `stop`, with the values it shows."""
    reason = REASONS[stop]
    return reason(details) if callable(reason) else reason.format(**details)


@dataclass(frozen=True)
class Decision:
    """What the verifier made of one candidate (goes into the trace as it is).

    Attributes:
        answer: the candidate, or "i don't know".
        accepted: whether the answer passed.
        stop: the check that decided.
        scores: every score computed for the candidate.
        supporting: the best supporting sentence.
        details: the values the reason shows (thresholds, the missing words, ...), by name.
    """

    answer: str
    accepted: bool
    stop: Stop
    scores: Mapping[str, Any] = field(default_factory=dict)
    supporting: str = ""
    details: Mapping[str, Any] = field(default_factory=dict)

    @property
    def reason(self) -> str:
        return render(self.stop, self.details)

    def as_trace(self) -> dict:
        return {"accepted": self.accepted, "answer": self.answer, "reason": self.reason, "stop": self.stop.value,
                "scores": dict(self.scores), "supporting": self.supporting}
