"""The training command (`scripts/train_router.py`, `training/router.py`): trains from CRAG-format files, scores
held-out files."""
import os

from models.embedder import Embedder
from models.paths import resolve_repo_path
from models.routing import DomainClassifier
from scripts.train_router import main


def test_main_writes_the_artefact_and_reports(tmp_path, capsys, monkeypatch, embedder):
    monkeypatch.setattr(Embedder, "from_config", classmethod(lambda cls, cfg, models_dir: embedder))
    out = tmp_path / "router.joblib"
    evaluation = str(resolve_repo_path("../shared/crag/dev_data.jsonl.bz2"))
    main(["--profile", "cpu", "--out", str(out), "--estimator", "logreg", "--compare"]
         + (["--eval", evaluation] if os.path.exists(evaluation) else []))
    printed = capsys.readouterr().out
    assert "training queries: 260" in printed and f"saved logreg router to {out}" in printed
    assert printed.count("5x5-fold accuracy") == 2  # --compare: both estimators
    assert DomainClassifier.load(out).trained_on == 260
    assert ("accuracy on" in printed) == os.path.exists(evaluation)
