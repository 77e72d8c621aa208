"""evaluation/bench/retrievers.py (scripts/bench_retrievers.py): its rows and its weight sweep, without models."""
from types import SimpleNamespace

import numpy as np

from evaluation.bench import retrievers as bench
from models.config import load_config
from models.types import Chunk
from models.web.arm.retriever import ObjectScores
from tests.web.conftest import WordGenerator


def test_rows_compare_both_retrievers_and_the_arm_ablations():
    rows = bench.row_configs(load_config("cpu"), sweep=True)
    assert rows["parent_child"].retriever == "parent_child" and rows["arm"].retriever == "arm"
    assert rows["arm-unaligned"].arm.align is False and rows["arm-objects"].arm.embed == "objects"
    n = load_config("cpu").web.arm.ngrams_per_keyword
    assert {f"arm ngrams_per_keyword={k}" for k in {1, 3, 5} - {n}} | {"arm candidates=all"} <= set(rows)
    assert f"arm ngrams_per_keyword={n}" not in rows  # the profile's own value is the arm row
    plain = bench.row_configs(load_config("cpu"), sweep=False)
    assert len(plain) == 6 and plain["arm+structure"].arm.structure.enabled
    assert plain["arm+structure-llm"].arm.structure.verifier == "llm"


def test_sweep_reweights_the_stored_scores():
    parents = (Chunk("alpha", "u", "text"), Chunk("costco", "u", "text"))
    scores = ObjectScores(lexical=np.array([0.0, 1.0]), cosine=np.array([1.0, 0.0]))
    question = bench.Question(SimpleNamespace(interaction_id="q"), [("costco",)])
    row = bench.Row("arm", scores=[(scores, parents)])
    lines = bench.sweep_lines(row, [question], WordGenerator(), 100, (1,))
    cells = lines[2].strip("|").split("|")
    assert cells[1].strip() == "0" and cells[-1].strip() == "1"  # w=0: cosine picks alpha; w=1: lexical costco


def test_structure_line_reports_solve_and_compatibility_times_apart():
    row = bench.Row("arm+structure", solve_ms=[2.0, 8.0, 4.0], compatibility_ms=[900.0, 1100.0])
    line = bench.structure_line(row)
    assert "MIP solve 4.0 ms median, 8.0 ms max per draft (3 drafts)" in line
    assert "compatibility 1000 ms median, 1100 ms max" in line
