"""`format_trace` prints ElectricSheep's stage decisions (attribute, knowledge, calculator, reasoning, page
processing) where a profile ran them, and nothing for them where it did not."""
from evaluation.explain import format_trace

RECORD = {"interaction_id": "q1", "query": "how much higher did msft close than aapl?", "prediction": "i don't know",
          "gold": "223.57"}
STAGES = {
    "web": {"extractors": ["trafilatura", "selectolax"], "sentence_chunks": True, "extract_s": 1.24, "chunk_s": 0.07},
    "attribute": {"label": "dynamic", "method": "classifier", "policy": "idk", "failed": False, "seconds": 0.02,
                  "action": "idk"},
    "knowledge": {"note": "Microsoft trades as MSFT.", "seconds": 7.7},
    "calculator": {"expression": "406.22 - 182.65", "value": 223.57, "votes": 3, "samples": 5,
                   "rejected": ["__import__('os'): names are not allowed"], "seconds": 9.1},
    "reasoning": {"source": "backup", "answer": "i don't know", "output": "The answer is", "seconds": 12.5},
}


def test_every_electric_sheep_stage_is_printed_with_its_decision_and_seconds():
    text = format_trace({**RECORD, "trace": {"source": "reasoning", **STAGES}})
    assert "web pages  extractors trafilatura, selectolax; sentence groups on; extract 1.24 s, chunk 0.07 s" in text
    assert "attribute  dynamic by classifier, policy idk -> idk (0.02 s)" in text
    assert "knowledge  note 'Microsoft trades as MSFT.' (7.7 s)" in text
    assert "calculator 406.22 - 182.65 = 223.57 (3 of 5 samples; 9.1 s)" in text
    assert "  rejected: __import__('os'): names are not allowed" in text
    assert "reasoning  backup -> \"i don't know\" (12.5 s)" in text and "output: 'The answer is'" in text


def test_a_failed_predictor_and_an_empty_calculation_say_so():
    trace = {"attribute": {**STAGES["attribute"], "failed": True, "action": None},
             "calculator": {"value": None, "seconds": 3.0}}
    text = format_trace({**RECORD, "trace": trace})
    assert "(prediction failed: taken as dynamic), policy idk -> answer" in text
    assert "calculator no value (3.0 s)" in text


def test_stages_the_profile_did_not_run_print_nothing():
    text = format_trace({**RECORD, "trace": {"source": "web", "attempts": []}})
    for label in ("web pages", "attribute", "knowledge", "calculator", "reasoning"):
        assert f"\n{label}" not in text


def test_a_kg_program_shows_its_repairs_and_the_checks_that_did_not_pass():
    kg = {"program": 'get_soccer_on_date("2024-02-17", "rivermouth athletic")["opponent"]',
          "repaired": 'get_soccer_on_date("rivermouth athletic", "2024-02-17")["opponent"]', "outcome": "executed",
          "checks": [{"check": "slot", "verdict": "repaired", "why": "team_name and date swapped"},
                     {"check": "kind", "verdict": "passed", "why": ""},
                     {"check": "key", "verdict": "not final", "why": "the value comes from 'opponent'"}]}
    text = format_trace({**RECORD, "trace": {"kg": kg}})
    assert "run as 'get_soccer_on_date(\"rivermouth athletic\", \"2024-02-17\")[\"opponent\"]'" in text
    assert "check slot: repaired (team_name and date swapped)" in text
    assert "check key: not final (the value comes from 'opponent')" in text and "check kind" not in text


def test_the_sql_statement_its_repair_and_its_checks_are_printed():
    trace = {"sql": {"statement": "SELECT name FROM companies WHERE ticker IN ('msft', 'aapl')", "error": "",
                     "repaired": ["name IN ('msft', 'aapl') -> ticker IN ('msft', 'aapl')"],
                     "rows": [["Microsoft Corporation"]],
                     "problems": ["market_cap: the store holds one snapshot of a figure that changes daily"]}}
    text = format_trace({"interaction_id": "q", "query": "msft or aapl?", "prediction": "i don't know",
                         "trace": trace})
    assert "sql statement \"SELECT name FROM companies WHERE ticker IN ('msft', 'aapl')\"" in text
    assert "  repaired: name IN ('msft', 'aapl') -> ticker IN ('msft', 'aapl')" in text
    assert '  rows: [["Microsoft Corporation"]]' in text
    assert "  check: market_cap: the store holds one snapshot" in text


def test_the_omni_trace_says_which_sources_were_engaged_and_which_exact_value_was_kept():
    trace = {"source": "kg-direct", "omni": {
        "selection": {"how": "embedding", "engaged": ["kg", "web"], "scores": {"kg": 0.61, "sql": 0.2}},
        "evidence": {"items": [{"source": "kg", "kept": True}, {"source": "web", "kept": False}],
                     "exact": [{"source": "kg", "value": "3", "support": 1}, {"source": "sql", "value": "4",
                                                                             "support": 0}],
                     "conflict": "agreement: kg's value is stated by 1 other item(s)", "chosen": "kg"}}}
    text = format_trace({**RECORD, "trace": trace})
    assert "omni sources (embedding): engaged ['kg', 'web']; scores kg 0.61, sql 0.2" in text
    assert "omni evidence: 1 of 2 items kept" in text
    assert "exact value sql: '4' (stated by 0 other item(s))" in text
    assert "conflict: agreement: kg's value" in text and "kept: kg's value" in text
