"""The answer reader in the answer path: its P(right) goes into the scores of the candidates of the pathways it reads
(the trace), it is a feature of the calibrated gate, and `verifier.gate: reader` keeps a candidate iff P >= 0.5. The
committed CPU reader loads from its packaged base and tells a stated answer from one the evidence does not
state."""
import pytest

from models.config import load_config
from models.deadline import Deadline
from models.pathways import KG_DIRECT, SQL_DIRECT, WEB
from models.types import IDK
from models.verify import Candidate, Stop, SupportVerifier, VerifierConfig
from models.verify.gate import features
from models.verify.verifier import decide, decide_by_rules, load_gate
from tests.packaged import missing_packaged_model

CONTEXT = ("Inception is a 2010 science fiction film. It was released in the United States on July 15, 2010. "
           "Christopher Nolan directed it.")


class FixedReader:
    """A reader that answers `p` for every candidate and records what it was asked."""

    def __init__(self, p=0.8, fail=False):
        self.p, self.fail, self.asked = p, fail, []

    def probabilities(self, items):
        if self.fail:
            raise RuntimeError("reader broke")
        self.asked.extend(items)
        return [self.p] * len(items)


def _candidate(answer="Christopher Nolan", pathway=WEB, query="who directed inception?"):
    return Candidate(query, answer, (CONTEXT,), pathway)


def test_the_reader_reads_the_candidates_of_its_pathways_once_in_a_batch():
    reader = FixedReader(0.8)
    verifier = SupportVerifier(VerifierConfig(reader_pathways=("web", "sql-direct")), reader=reader)
    decisions = verifier.verify([_candidate(), _candidate("2010", KG_DIRECT, "when was inception released?"),
                                 _candidate("2010", SQL_DIRECT, "when was inception released?"), _candidate(IDK)])
    assert [d.scores.get("reader") for d in decisions] == [0.8, None, 0.8, None]
    assert [q for q, _, _ in reader.asked] == ["who directed inception?", "when was inception released?"]
    assert reader.asked[0][1] == "Christopher Nolan" and reader.asked[0][2] == (CONTEXT,)
    assert decisions[0].as_trace()["scores"]["reader"] == 0.8  # in the trace as the verifier saved it


def test_no_time_left_or_a_broken_reader_leaves_the_candidates_unread_and_decided():
    for reader, deadline in ((FixedReader(), Deadline(0)), (FixedReader(fail=True), None)):
        decisions = SupportVerifier(VerifierConfig(), reader=reader).verify([_candidate()], deadline)
        assert "reader" not in decisions[0].scores and decisions[0].accepted


def test_the_reader_gate_keeps_a_candidate_iff_p_is_at_least_one_half():
    config = VerifierConfig(gate="reader")
    scores = SupportVerifier(VerifierConfig()).scores(_candidate())
    kept = decide({**scores, "reader": 0.5}, config)
    assert (kept.accepted, kept.answer, kept.stop) == (True, "Christopher Nolan", Stop.READER)
    assert kept.reason == "answer reader: P(right) 0.50 >= 0.5; rules: supported (lexical 1.00, similarity None)"
    refused = decide({**scores, "reader": 0.49}, config)
    assert (refused.accepted, refused.answer, refused.stop) == (False, IDK, Stop.READER)
    unread = decide(scores, config)  # not read: the rules decide
    assert unread == decide_by_rules(scores, config)


def test_the_reader_gate_may_keep_what_a_threshold_refused_and_never_answers_where_nothing_is_kept():
    config = VerifierConfig(gate="reader", min_similarity=0.99)
    scores = {**SupportVerifier(VerifierConfig()).scores(_candidate()), "similarity": 0.5, "reader": 0.9}
    assert not decide_by_rules(scores, config).accepted and decide(scores, config).accepted
    nothing = SupportVerifier(VerifierConfig()).scores(_candidate(IDK))
    assert decide({**nothing, "reader": 0.99}, config).answer == IDK


def test_the_reader_gate_needs_a_reader_and_no_fitted_gate():
    with pytest.raises(ValueError, match="verifier.reader"):
        SupportVerifier(VerifierConfig(gate="reader"))
    assert load_gate(VerifierConfig(gate="reader")) is None


def test_the_readers_probability_is_a_feature_of_the_calibrated_gate_and_missing_is_indicated():
    read = features({"source": "web", "candidate": "x", "claims": 1, "reader": 0.73}, True)
    assert read["has_reader"] == 1.0 and read["reader"] == 0.73
    unread = features({"source": "web", "candidate": "x", "claims": 1}, True)
    assert unread["has_reader"] == 0.0 and unread["reader"] == 0.0


def test_the_committed_cpu_reader_tells_a_stated_answer_from_an_unstated_one():
    from models.paths import ModelNotFoundError
    from models.verify.reader import load_reader

    config = load_config("cpu")
    assert config.verifier.reader, "the CPU profile names its answer reader"
    try:
        reader = load_reader(config.verifier, config.models_dir)
    except ModelNotFoundError as exc:
        missing_packaged_model(f"the answer reader's base: {exc}")
    question = "who directed the film zephyrine?"
    right, wrong = reader.probabilities([
        (question, "anselm quarrie", ("Zephyrine is a 2004 film directed by Anselm Quarrie.",)),
        (question, "anselm quarrie", ("Zephyrine is a 2004 film directed by Odile Fenwick.",))])
    assert 0 <= wrong < right <= 1


def test_the_committed_cpu_reader_was_trained_on_the_committed_examples():
    from models.paths import REPO_ROOT, resolve_repo_path
    from training.reader.examples import OUTPUT
    from training.reader.train import stale_reader

    folder = resolve_repo_path(load_config("cpu").verifier.reader)
    assert stale_reader(folder, REPO_ROOT / OUTPUT) is None, "retrain it: make verifier"
