"""scripts/sweep_verifier.py over a saved run without verifier scores: every setting replays the saved predictions,
so every setting scores the same, and the profile's own setting is printed, marked."""
import json

from evaluation.experiments.verifier_sweep import AXES
from scripts.sweep_verifier import main


def test_the_sweep_prints_every_setting_s_scores_and_marks_the_profile_s(tmp_path, capsys):
    rows = [{"interaction_id": "1", "query": "capital of australia?", "gold": "canberra", "prediction": "canberra"},
            {"interaction_id": "2", "query": "capital of peru?", "gold": "lima", "prediction": "i don't know"}]
    run = tmp_path / "run"
    run.mkdir()
    (run / "predictions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main([str(run), "--top", "1"]) == 0
    out = capsys.readouterr().out.splitlines()
    settings = 1
    for values in AXES.values():
        settings *= len(values)
    assert out[0] == f"{settings} of {settings} settings give every run a score >= 0 and hallucination <= 20 %"
    assert out[1].startswith(f"normalized judge; {settings} settings;")
    assert all("mean +0.500 |" in line and "run: +0.50 0.50 0.00 (1/1/0) [+0.50]" in line for line in out[2:])
    assert len(out) in (3, 4) and out[-1].startswith("* mean")  # the best setting, then the profile's
