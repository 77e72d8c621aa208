"""The training command (`scripts/train_router.py`, `training/router.py`): trains from CRAG-format files, scores
held-out files."""
from models import crag_data
from models.embedder import Embedder
from models.routing import DomainClassifier
from scripts.train_router import main
from tests.packaged import crag_file_if_present


def test_main_writes_the_artefact_and_reports(tmp_path, capsys, monkeypatch, embedder):
    monkeypatch.setattr(Embedder, "from_config", classmethod(lambda cls, cfg, models_dir: embedder))
    out = tmp_path / "router.joblib"
    evaluation = crag_file_if_present(crag_data.DEV_FILE)
    main(["--profile", "cpu", "--out", str(out), "--estimator", "logreg", "--compare"]
         + (["--eval", str(evaluation)] if evaluation else []))
    printed = capsys.readouterr().out
    assert "training queries: 260" in printed and f"saved logreg router to {out}" in printed
    assert printed.count("5x5-fold accuracy") == 2  # --compare: both estimators
    assert DomainClassifier.load(out).trained_on == 260
    assert ("accuracy on" in printed) == (evaluation is not None)
