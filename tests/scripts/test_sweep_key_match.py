"""scripts/sweep_key_match.py, which chose `kg.key_match_threshold`, runs end to end on template pairs (one
example per template, against the bundled mock API) and prints its table and its choice."""
import re

from scripts.sweep_key_match import main


def test_the_sweep_prints_a_table_and_chooses_a_threshold(capsys):
    assert main(["--per-template", "1"]) == 0
    out = capsys.readouterr().out
    right, wrong = map(int, re.search(r"(\d+) right-key pairs, (\d+) wrong-key pairs", out).groups())
    assert right > 20 and wrong > right  # every right key comes with up to three wrong ones of the same rows
    assert out.count("\n| 0.") == 17 and re.search(r"chosen: kg.key_match_threshold = 0\.\d\d", out)
