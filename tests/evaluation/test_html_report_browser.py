"""The report page in a real browser: headless Chromium opens a small run's report.html from disk, runs
its script, and the DOM it leaves is read back (`--dump-dom`). Chromium comes from the system's packages
(`.ci/run` installs it where missing): absent, a skip here and a failure in CI (tests/packaged.py)."""
import http.server
import json
import re
import shutil
import subprocess
import threading

import pytest

from evaluation.html_report import write_html_report
from tests.packaged import missing_installed
from tests.test_local_evaluation import data, run, stand_in  # noqa: F401 - the fixtures


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        if shutil.which(name):
            return shutil.which(name)
    missing_installed("no Chromium on PATH (apt-get install chromium; .ci/run does)")


class Canary(http.server.BaseHTTPRequestHandler):
    """Counts every request: hostile page text points here, and nothing may ever ask."""

    hits: list = []

    def do_GET(self):  # noqa: N802 - the handler's name
        Canary.hits.append(self.path)
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def canary():
    Canary.hits = []
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Canary)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def dump_dom(page, fragment: str, tmp_path) -> str:
    """The DOM after the page's script ran, as headless Chromium serialises it."""
    result = subprocess.run(
        [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", f"--user-data-dir={tmp_path / 'p'}",
         "--virtual-time-budget=3000", "--dump-dom", f"{page.resolve().as_uri()}{fragment}"],
        capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout


@pytest.fixture
def hostile_run(data, tmp_path, stand_in, canary):  # noqa: F811 - the fixtures of test_local_evaluation
    out = tmp_path / "run"
    assert run(data, out) == 0
    lines = (out / "predictions.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["trace"]["attempts"][0]["chunks"][0]["text"] = (
        f'<script>document.title="pwned";fetch("{canary}/script")</script><img src="{canary}/img" '
        f'onerror="document.title=\'pwned\'"><link rel="stylesheet" href="{canary}/css">')
    (out / "predictions.jsonl").write_text("\n".join([json.dumps(record), *lines[1:]]) + "\n")
    return out, write_html_report(out)


def rows(dom: str) -> list[tuple[str, str, bool]]:
    """(id, verdict, hidden) of every question row in the DOM, in order."""
    return [(m.group(1), re.search(r'data-verdict="([^"]*)"', m.group(0)).group(1), " hidden" in m.group(0))
            for m in re.finditer(r'<tbody class="q" data-id="([^"]+)"[^>]*>', dom)]


def test_the_table_rows_are_the_predictions_and_the_script_ran(hostile_run, tmp_path):
    out, page = hostile_run
    dom = dump_dom(page, "", tmp_path)
    ids = [json.loads(line)["interaction_id"] for line in (out / "predictions.jsonl").read_text().splitlines()]
    assert [i for i, _, _ in rows(dom)] == ids
    assert f"{len(ids)} of {len(ids)} shown" in dom  # the filter script ran


def test_filtering_by_verdict_shows_only_those_rows(hostile_run, tmp_path):
    _, page = hostile_run
    for verdict in ("correct", "missing", "hallucination"):
        shown = [(i, v) for i, v, hidden in rows(dump_dom(page, f"#verdict={verdict}", tmp_path)) if not hidden]
        assert shown and {v for _, v in shown} == {verdict}


def test_hostile_text_is_shown_runs_nothing_and_nothing_is_fetched(hostile_run, tmp_path):
    _, page = hostile_run
    dom = dump_dom(page, "", tmp_path)
    assert "<title>CRAG evaluation" in dom and "pwned" not in dom.split("</title>")[0]  # no script of it ran
    assert "&lt;script&gt;document.title=" in dom  # shown as text
    assert not re.search(r"<img|<link", dom)  # no element was made of it
    assert Canary.hits == []  # and the page asked for nothing
