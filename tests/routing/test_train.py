"""The training command: trains from CRAG-format files, compares estimators, scores held-out files."""
import os

from models.routing import DomainClassifier, load_labelled_queries
from models.routing.train import compare_estimators, main


def test_compare_estimators_scores_both(hash_embedder):
    texts, labels = load_labelled_queries(["data/router"])
    scores = compare_estimators(texts, labels, hash_embedder(), repeats=1)
    assert set(scores) == {"logreg", "svm"} and all(0.0 <= s <= 1.0 for s in scores.values())


def test_main_writes_the_artefact_and_reports(tmp_path, capsys, monkeypatch, embedder):
    from models.web.embedder import Embedder

    monkeypatch.setattr(Embedder, "from_config", classmethod(lambda cls, cfg, models_dir: embedder))
    out = tmp_path / "router.joblib"
    evaluation = "/work/shared/crag/dev_data.jsonl.bz2"
    main(["--profile", "cpu", "--out", str(out), "--estimator", "logreg"]
         + (["--eval", evaluation] if os.path.exists(evaluation) else []))
    printed = capsys.readouterr().out
    assert "training queries: 260" in printed and f"saved logreg router to {out}" in printed
    assert DomainClassifier.load(out).trained_on == 260
    assert ("accuracy on" in printed) == os.path.exists(evaluation)
