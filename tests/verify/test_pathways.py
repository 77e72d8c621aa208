"""The answer's pathway is declared data (models/pathways.py): the verifier and the gate read the declaration, a
name nobody declared is refused by name, and no code outside the declaration spells an own-value pathway."""
import json
import re
import subprocess

import pytest

from models.paths import REPO_ROOT
from models.pathways import KG_DIRECT, SQL_DIRECT, WEB, declare, declared, named
from models.verify import Candidate, SupportVerifier, VerifierConfig, decide
from models.verify.decision import Stop
from models.verify.gate import CalibratedGate, features

QUERY, FACT = "when was avatar released?", "The release_date of Avatar is 2009-12-18."


def test_names_round_trip_and_an_unknown_name_is_refused_by_name():
    assert all(named(p.name) is p for p in declared())
    assert [p.name for p in declared() if p.own_value][:2] == ["kg-direct", "sql-direct"]  # built-ins first
    with pytest.raises(ValueError, match="unknown answer pathway 'wiki-direct'"):
        named("wiki-direct")


def test_a_name_declared_twice_must_be_declared_the_same_way():
    assert declare("kg-direct", own_value=True, what="KG") is KG_DIRECT
    with pytest.raises(ValueError, match="already declared"):
        declare("kg-direct")
    with pytest.raises(ValueError, match="needs `what`"):
        declare("almanac-direct", own_value=True)


def test_a_name_ending_in_direct_is_a_models_answer_unless_declared_otherwise():
    """The suffix means nothing: a model pathway named "*-direct" goes through the text checks; an own-value
    pathway of any name is kept as an exact value, as the KG's is."""
    verifier = SupportVerifier(VerifierConfig(min_similarity=0.0))
    model = declare("notes-direct")
    own = declare("ledger", own_value=True, what="ledger")
    by_model, by_own, by_kg = (verifier.verify([Candidate(QUERY, "2009-12-18", (FACT,), p)])[0]
                               for p in (model, own, KG_DIRECT))
    assert by_own.stop == by_kg.stop == Stop.EXACT_VALUE and by_own.reason.startswith("ledger value")
    assert by_model.stop != Stop.EXACT_VALUE
    # saved scores are replayed by the name they hold
    assert decide(by_own.scores, verifier.config).stop == Stop.EXACT_VALUE


def test_the_gate_one_hots_every_declared_pathway_and_refuses_a_gate_of_an_unknown_one(tmp_path):
    values = features({"source": SQL_DIRECT.name}, True)
    assert values["source=sql-direct"] == 1.0 and values["source=web"] == 0.0
    assert {f"source={p.name}" for p in declared()} <= set(values)
    shipped = REPO_ROOT / "models" / "gates" / "cpu.json"
    gate = CalibratedGate.load(shipped)  # the shipped gate names declared pathways: it loads
    assert f"source={WEB.name}" in gate.names
    data = json.loads(shipped.read_text(encoding="utf-8"))
    data["features"][0]["name"] = "source=wiki-direct"  # a gate fitted with a pathway this process lacks
    (tmp_path / "old.json").write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(ValueError, match=r"is not a fitted gate.*unknown answer pathway 'wiki-direct'"):
        CalibratedGate.load(tmp_path / "old.json")


def test_no_code_spells_an_own_value_pathway_but_the_declaration():
    """Branching on "kg-direct" (or on a "-direct" suffix) is what the declaration replaced."""
    own = [p.name for p in declared() if p.own_value and p.what in ("KG", "SQL")]
    pattern = "|".join([*(re.escape(f'"{name}"') for name in own), r'"-direct"'])
    found = subprocess.run(["git", "grep", "-n", "-E", pattern, "--", "*.py", ":!tests", ":!models/pathways.py"],
                           cwd=REPO_ROOT, capture_output=True, text=True).stdout
    assert found == ""
