"""scripts/eval_api_generation.py: a missing file, split or KG source folder is a usage error (exit 2), before any
model loads."""
import pytest

from models.config import REPO_ROOT
from scripts.eval_api_generation import main

KG_UNSEEN = str(REPO_ROOT / "data" / "acceptance" / "kg_unseen.jsonl")


@pytest.mark.parametrize("argv, message", [
    (["--file", "nowhere.jsonl"], "no file nowhere.jsonl"),
    (["--data", "nowhere", "--splits", "heldout_entities"], "no ['heldout_entities'] in nowhere: run python "
                                                            "scripts/make_api_data.py --out nowhere first"),
    (["--file", KG_UNSEEN, "--kg-source", "nowhere"], "no KG source folder nowhere")])
def test_unusable_arguments_are_usage_errors(argv, message, capsys, monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    assert exit_info.value.code == 2 and message in capsys.readouterr().err
