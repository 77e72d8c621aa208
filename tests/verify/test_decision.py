"""Decisions carry the check that decided as a code; the reason is rendered from it, in the words the traces had
before the codes, and nothing reads the words back."""
from dataclasses import replace

import pytest

from models.types import IDK, INVALID
from models.verify import Stop, VerifierConfig
from models.verify.decision import REASONS, Decision, render
from models.verify.gate import THRESHOLD_STOPS, features
from models.verify.verifier import decide_by_rules

BASE = VerifierConfig()
STRICT = replace(BASE, min_sentence_support=0.5, min_question_overlap=0.5, min_similarity=0.6)
CHECKED = {"candidate": "paris", "source": "web", "claims": 1, "novel": 1, "lexical": 1.0, "chunk": 1.0,
           "sentence": 1.0, "full_chunk": 1.0, "overlap": 0.8, "similarity": 0.9, "missing": []}

# (scores, config) -> the code and the exact reason the rules give
RULES = [
    ({"candidate": "yes", "computed": {"answer": "yes", "reason": "both options compared"}}, BASE,
     Stop.COMPUTED, "both options compared"),
    ({"candidate": "yes", "computed": {"answer": "", "reason": "no evidence sentence states 'x'"}}, BASE,
     Stop.NOT_COMPUTED, "no evidence sentence states 'x'"),
    ({"candidate": IDK}, BASE, Stop.ABSTAINED, "the model abstained"),
    ({"candidate": "paris"}, replace(BASE, enabled=False), Stop.DISABLED, "verifier disabled"),
    ({"candidate": INVALID}, BASE, Stop.PREMISE_UNCONTRADICTED, "no evidence contradicts the premise"),
    ({"candidate": INVALID, "contradiction": "He never did."}, BASE, Stop.PREMISE_CONTRADICTED,
     "the evidence contradicts the premise"),
    ({"candidate": "paris", "refusal": "a place, not a date"}, BASE, Stop.REFUSAL, "a place, not a date"),
    ({"candidate": "paris", "span": "", "kind": "date"}, BASE, Stop.NO_SPAN,
     "the answer names no date the question asks for"),
    ({"candidate": "paris", "claims": 0}, BASE, Stop.UNCHECKABLE, "nothing in the answer can be checked"),
    ({**CHECKED, "novel": 0, "choice": True}, BASE, Stop.CHOICE,
     "a choice between the question's options: nothing to check against the evidence"),
    ({**CHECKED, "novel": 0}, BASE, Stop.RESTATEMENT, "restates the question: nothing to check against the evidence"),
    ({**CHECKED, "lexical": 0.5, "missing": ["shares", "similarity"]}, BASE, Stop.LEXICAL,
     "lexical support (evidence) 0.50 < 1.00; not in the evidence: shares, similarity"),
    ({**CHECKED, "sentence": 0.5}, replace(BASE, support_scope="sentence"), Stop.LEXICAL,
     "lexical support (sentence) 0.50 < 1.00; not stated together in one sentence"),
    ({**CHECKED, "alone": False}, BASE, Stop.ALONE,
     "'paris' occurs in the evidence only inside something longer (a rank \"top 10\", a longer name \"Hebrew "
     "Bible\") or as an author's byline"),
    ({**CHECKED, "source": "kg-direct"}, BASE, Stop.EXACT_VALUE, "KG value (lexical 1.00)"),
    ({**CHECKED, "source": "sql-direct"}, BASE, Stop.EXACT_VALUE, "SQL value (lexical 1.00)"),
    ({**CHECKED, "full_chunk": 0.25}, STRICT, Stop.SENTENCE,
     "the model's whole sentence is not supported by one chunk (0.25 < 0.50): the span may be taken out of context"),
    ({**CHECKED, "overlap": 0.2}, STRICT, Stop.OVERLAP,
     "the evidence holding the answer shares 0.2 of the question's words < 0.50"),
    ({**CHECKED, "similarity": 0.3}, STRICT, Stop.SIMILARITY, "similarity 0.3 < 0.60"),
    ({**CHECKED, "similarity": None}, STRICT, Stop.SIMILARITY, "similarity None < 0.60"),
    (CHECKED, BASE, Stop.SUPPORTED, "supported (lexical 1.00, similarity 0.9)"),
]

# the codes other deciders set, with the values they pass and the reason they render
OTHERS = [
    (Stop.CALIBRATED, {"p": 0.734, "side": ">=", "why": "rules_accepted +1.20", "rules": "supported"},
     "calibrated gate: P(correct) 0.73 >= 0.5 (rules_accepted +1.20); rules: supported"),
    (Stop.CALIBRATED, {"p": 0.2, "side": "<", "why": "stop_overlap -0.90", "rules": "similarity 0.3 < 0.60"},
     "calibrated gate: P(correct) 0.20 < 0.5 (stop_overlap -0.90); rules: similarity 0.3 < 0.60"),
    (Stop.READER, {"p": 0.5, "side": ">=", "rules": "lexical support (chunk) 0.50 < 1.00"},
     "answer reader: P(right) 0.50 >= 0.5; rules: lexical support (chunk) 0.50 < 1.00"),
    (Stop.LLM_CHECK, {}, "the LLM check did not confirm the answer"),
    (Stop.DYNAMIC_IDK, {}, "dynamic question without KG evidence (attribute predictor; attributes.dynamic_policy idk)"),
    (Stop.DYNAMIC_STRICTER, {"stricter": "similarity 0.3 < 0.60"},
     "dynamic question without KG evidence, stricter check (attributes.dynamic_policy verify): similarity 0.3 < 0.60"),
    (Stop.VERIFIER_FAILED, {"error": "RuntimeError: boom"}, "verifier failed: RuntimeError: boom"),
    (Stop.NO_CONTEXT, {"error": None}, "no context to answer from"),
    (Stop.NO_OUTPUT, {"error": "HTTP 500"}, "no model output (HTTP 500)"),
    (Stop.NO_OUTPUT, {"error": None}, "no model output (the deadline cut the generation, or it was empty)"),
]


@pytest.mark.parametrize("scores, config, stop, reason", RULES, ids=[f"{r[2].value}-{i}" for i, r in enumerate(RULES)])
def test_each_rule_stops_with_its_code_and_renders_its_reason(scores, config, stop, reason):
    decision = decide_by_rules(scores, config)
    assert (decision.stop, decision.reason) == (stop, reason)
    assert decision.as_trace()["stop"] == stop.value and decision.as_trace()["reason"] == reason


@pytest.mark.parametrize("stop, details, reason", OTHERS, ids=[f"{o[0].value}-{i}" for i, o in enumerate(OTHERS)])
def test_the_codes_beyond_the_rules_render_their_reasons(stop, details, reason):
    assert render(stop, details) == reason == Decision(IDK, False, stop, details=details).reason


def test_every_code_is_pinned_and_renders():
    assert set(REASONS) == set(Stop)
    assert {r[2] for r in RULES} | {o[0] for o in OTHERS} == set(Stop)


def test_the_gates_stop_features_read_the_code_not_the_words():
    missing_shares = decide_by_rules({**CHECKED, "lexical": 0.5, "missing": ["shares", "similarity"]}, BASE)
    values = features(missing_shares.scores, missing_shares.accepted, missing_shares.stop)
    assert values["stop_lexical"] == 1.0
    assert values["stop_overlap"] == values["stop_similarity"] == 0.0  # "shares", "similarity" are only words here
    for stop in THRESHOLD_STOPS:
        on = features(CHECKED, False, stop)
        assert [name for name in on if name.startswith("stop_") and on[name]] == [f"stop_{stop.value}"]
        assert not any(v for n, v in features(CHECKED, True, stop).items() if n.startswith("stop_"))
    assert features(CHECKED, False, stop.value)[f"stop_{stop.value}"] == 1.0  # a saved trace's plain value
