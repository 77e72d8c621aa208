"""evaluation/html_report.py: one self-contained page per run, drawn from the run's files; page text is
hostile input, shown and never run; the comparison lists exactly the questions whose verdict changed."""
import json
import logging
import re

import pytest

from evaluation import local_run
from evaluation.html_report import changes, question_view, render, why_kind, write_html_report
from scripts.report import main as report_main
from tests.test_local_evaluation import data, run, stand_in  # noqa: F401 - the fixtures

HOSTILE = '<script>document.title="pwned"</script><img src=x onerror="alert(1)">'


@pytest.fixture
def finished(data, tmp_path, stand_in):  # noqa: F811 - the fixtures of test_local_evaluation
    out = tmp_path / "run"
    assert run(data, out) == 0
    return out


def test_a_run_writes_its_page_with_one_row_per_prediction(finished):
    page = (finished / "report.html").read_text(encoding="utf-8")
    ids = [json.loads(line)["interaction_id"] for line in (finished / "predictions.jsonl").read_text().splitlines()]
    assert re.findall(r'<tbody class="q" data-id="([^"]+)"', page) == ids
    assert "<svg" in page and "Macro average of score over domains" in page and "Decided by" in page


def test_the_page_needs_no_network(finished):
    page = (finished / "report.html").read_text(encoding="utf-8")
    assert not re.search(r'<(?:script|link|img|iframe)[^>]+(?:src|href)=', page)  # nothing is fetched
    assert "default-src 'none'" in page  # and the browser is told to fetch nothing


def test_hostile_page_text_is_shown_never_run(finished):
    lines = (finished / "predictions.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["trace"]["attempts"][0]["chunks"][0]["text"] = HOSTILE
    record["prediction"] = HOSTILE
    (finished / "predictions.jsonl").write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    page = write_html_report(finished).read_text(encoding="utf-8")
    assert HOSTILE not in page and "<img" not in page
    assert "&lt;script&gt;document.title=&#34;pwned&#34;&lt;/script&gt;" in page
    assert page.count("<script>") == 1  # the page's own filter script only


def test_the_answer_readers_probability_is_shown_where_it_read_the_candidate(finished):
    lines = (finished / "predictions.jsonl").read_text().splitlines()
    record = json.loads(lines[0])  # the stand-in's traces carry no reader: this one is read
    record["trace"]["attempts"][0]["verifier"]["scores"]["reader"] = 0.734
    (finished / "predictions.jsonl").write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    page = write_html_report(finished).read_text(encoding="utf-8")
    assert page.count("answer reader P(right)") == 1 and "answer reader P(right) 0.73</summary>" in page


def test_an_interrupted_run_is_drawn_from_its_predictions(finished):
    (finished / "summary.json").unlink()
    (finished / "verdicts.jsonl").unlink()
    page = render(finished)
    assert "no summary yet" in page and page.count('<tbody class="q"') == len(
        (finished / "predictions.jsonl").read_text().splitlines())
    assert 'data-verdict="unjudged"' in page


def test_the_comparison_lists_exactly_the_changed_verdicts(finished, tmp_path):
    other = tmp_path / "other"
    other.mkdir()
    for name in ("predictions.jsonl", "summary.json"):
        (other / name).write_text((finished / name).read_text())
    verdicts = [json.loads(line) for line in (finished / "verdicts.jsonl").read_text().splitlines()]
    flipped = {verdicts[0]["interaction_id"]: "hallucination" if verdicts[0]["outcome"] != "hallucination"
               else "correct"}
    (other / "verdicts.jsonl").write_text("".join(
        json.dumps({**v, "outcome": flipped.get(v["interaction_id"], v["outcome"])}) + "\n" for v in verdicts))
    page = write_html_report(finished, against=other).read_text(encoding="utf-8")
    assert re.findall(r'<tr class="change" data-id="([^"]+)"', page) == list(flipped)
    assert report_main([str(finished), "--against", str(other), "--out", str(tmp_path / "c.html")]) == 0
    assert (tmp_path / "c.html").read_text(encoding="utf-8") == page


def test_kinds_of_change():
    def q(i, verdict):
        return {"id": i, "verdict": verdict}
    a = [q("1", "correct"), q("2", "missing"), q("3", "missing"), q("4", "correct"), q("5", "missing")]
    b = [q("1", "missing"), q("2", "correct"), q("3", "hallucination"), q("4", "hallucination"), q("5", "missing")]
    assert [(c["id"], c["kind"]) for c in changes(a, b)] == [
        ("1", "lost"), ("2", "gained"), ("3", "new hallucination"), ("4", "lost (new hallucination)")]


def test_a_record_without_a_trace_still_has_a_view():
    view = question_view({"interaction_id": "x", "query": "q?", "prediction": "a"}, None)
    assert view["verdict"] == "unjudged" and view["attempts"] == [] and view["over_budget"] is False


def test_why_kinds_group_by_the_deciding_checks_code():
    # one bucket per check, whatever the answer or the missing words the reason embeds
    assert why_kind("the evidence holding the answer shares 0.2 of the question's words < 0.50", "overlap") == "overlap"
    assert why_kind("lexical support (evidence) 0.50 < 1.00; not in the evidence: shares", "lexical") == "lexical"
    assert why_kind("'10 million shares' occurs in the evidence only inside something longer", "alone") == "alone"


def test_why_kinds_of_reasons_without_a_code_group_them_without_their_numbers():
    assert why_kind("verifier: lexical 0.40 < 0.5") == "verifier"
    assert why_kind("no evidence (kg empty)") == "no evidence"
    assert why_kind("") == ""


def test_the_script_refuses_a_folder_that_is_not_a_run(tmp_path):
    with pytest.raises(SystemExit) as exc:
        report_main([str(tmp_path)])
    assert exc.value.code == 2


def test_local_evaluation_logs_the_page_last(data, tmp_path, stand_in, caplog):  # noqa: F811
    caplog.set_level(logging.INFO, logger=local_run.log.name)
    assert run(data, tmp_path / "r") == 0
    assert caplog.records[-1].getMessage().endswith(str((tmp_path / "r" / "report.html").resolve()))
