"""`make adapters`' KG check (training/kg_probe.py, `AdapterMaker.check_kg`) and its summary, with no model.

The probe runs on a stub mock API of made-up names, then on real mock APIs: the bundled fixture KG serves the
bundled sample (written for it), not kg_unseen's questions (written for the acceptance KG, which serves them) and
not CRAG's dev questions (read from $CRAG_DATA where present; only counts are asserted or printed). The command's flow runs with its heavy steps (labelling, API data, training) stubbed: it
stops before labelling on a KG that does not serve the data, names the fix, trains web_answer and api_generation
with --without-kg-answer, keeps training api_generation when kg_answer has no record, and ends with a summary.
"""
from __future__ import annotations

import pytest

from models import crag_data
from models.kg.client import KGClientError
from models.paths import resolve_repo_path
from scripts.make_adapters import main, parse_args
from training import kg_probe
from training import make_adapters as ma
from tests.packaged import crag_file
from training.adapter_training import Trained
from training.kg_probe import KGProbe, named_by, probe_kg

SAMPLE = "data/sample/crag_sample.jsonl"


class StubKG:
    """A mock API of made-up names: each name search returns the names sharing a word with the query (as BM25
    ranks them), the movie searches as records; `tickers` have a market capitalisation, other tickers a 500."""

    def __init__(self, names=(), tickers=(), down=False):
        self.names, self.tickers, self.down, self.calls = list(names), set(tickers), down, []

    def _search(self, query):
        self.calls.append(query)
        if self.down:
            raise KGClientError("cannot reach the mock API", "/open/search_entity_by_name")
        asked = set(kg_probe.words(query))
        return [n for n in self.names if asked & set(kg_probe.words(n))][:10]

    open_search_entity_by_name = music_search_artist_entity_by_name = _search
    music_search_song_entity_by_name = finance_get_company_name = _search

    def movie_get_movie_info(self, query):
        return [{"title": name, "id": 1} for name in self._search(query)]

    def movie_get_person_info(self, query):
        return [{"name": name} for name in self._search(query)]

    def finance_get_market_capitalization(self, ticker):
        if ticker in self.tickers:
            return 1.5e11
        raise KGClientError("HTTP 500", "/finance/get_market_capitalization", 500)


def _ex(query, domain):
    return {"query": query, "domain": domain}


def test_a_name_is_named_by_a_question_by_all_its_own_words():
    own = set(kg_probe.words("what was the debut album of quillon marsh's band?"))
    assert named_by("Quillon Marsh", own) and named_by("The Quillon", own)
    assert not named_by("Quillon Marshes", own)  # every word of the name
    assert named_by("Zentrofax Corporation", set(kg_probe.words("did zentrofax pay a dividend")))  # a suffix
    assert not named_by("The Who", set(kg_probe.words("who sang it")))  # stop words only
    assert not named_by("Up", set(kg_probe.words("what went up")))  # under 4 characters
    assert kg_probe.content_words("What is the height of the Vornak Spire?") == ["height", "vornak", "spire"]


def test_the_probe_counts_the_questions_the_kg_serves_per_domain():
    kg = StubKG(["Vornak Spire", "Quillon Marsh", "Zorblax Rising", "Zentrofax Corporation", "Height Club"],
                tickers={"ZNTX"})
    examples = [_ex("how tall is the vornak spire?", "open"),
                _ex("when was zorblax rising released?", "movie"),
                _ex("where was quillon marsh born?", "music"),
                _ex("what is the eps of zntx?", "finance"),  # a ticker the KG has
                _ex("what is the height of the tallest tower?", "open"),  # "Height Club" is not named
                _ex("who scored in the derby on 2024-01-02?", "sports"),  # no name search: not probed
                _ex("what is the eps of qqqz?", "finance")]  # an unknown ticker: rejected, not found
    probe = probe_kg(examples, kg, "the stub KG")
    assert probe.domains == {"open": [1, 2], "movie": [1, 1], "music": [1, 1], "finance": [1, 2]}
    assert (probe.served, probe.probed, probe.not_probed, probe.ok) == (4, 6, 1, True)
    text = probe.text()
    assert text.startswith("the stub KG serves the data's entities: 4 of 6 probed questions") and "open 1/2" in text
    assert "vornak" not in text.lower()  # counts only, never a question or a name
    assert kg.calls[0] == "tall vornak spire"  # the content words are the query

    unserved = probe_kg(examples, StubKG(["Height Club"]), "another KG")
    assert (unserved.served, unserved.ok) == (0, False) and "does not serve" in unserved.text()
    assert probe_kg(examples, kg, "kg", limit=2).probed == 2
    nothing = probe_kg([_ex("who won on 2024-01-02?", "sports")], kg, "kg")
    assert nothing.ok and not nothing.conclusive and "not probed" in nothing.text()


def test_the_share_needed_is_a_floor_of_the_probed_questions():
    assert KGProbe("kg", {"open": [3, 12]}).ok  # 25 %
    assert not KGProbe("kg", {"open": [2, 12]}).ok
    assert not KGProbe("kg", {"open": [0, 1]}).ok


def test_an_unreachable_mock_api_stops_the_probe():
    with pytest.raises(KGClientError):
        probe_kg([_ex("how tall is the vornak spire?", "open")], StubKG(down=True), "kg")


# ---------------------------------------------------------------------------------------------- the fixture KG
def test_the_fixture_kg_serves_the_bundled_sample(tmp_path, monkeypatch):
    """The questions `make adapters`' end-to-end test labels (the sample's first 7) pass the check on the KG the
    command starts without $CRAG_MOCK_API_URL (`AdapterMaker.probe`, the real path)."""
    monkeypatch.delenv(ma.MOCK_API_ENV, raising=False)
    maker = _maker(tmp_path, limit=7)
    try:
        probe = maker.probe()
    finally:
        maker.work.session._stack.close()
    assert probe.ok and probe.probed == 7 and probe.kg.startswith("the bundled fixture KG"), probe.text()
    print(probe.text())


def test_the_probe_tells_the_kg_a_question_set_was_written_for_from_another(tmp_path):
    """kg_unseen's questions are written over the acceptance KG, whose entities are disjoint from the fixture's
    (data/kg_acceptance/README.md): served there, not on the fixture KG."""
    from evaluation.data import load_examples
    from mock_api.bundled_kg import build
    from mock_api.server import running_server
    from models.kg.client import MockAPIClient

    found = {}
    for name, kg_dir in (("acceptance", build(tmp_path / "kg", resolve_repo_path("data/kg_acceptance"))),
                         ("fixture", None)):
        with running_server(kg_dir) as url, MockAPIClient(url) as client:
            found[name] = probe_kg(load_examples("data/acceptance/kg_unseen.jsonl"), client, f"the {name} KG")
    assert found["acceptance"].ok and not found["fixture"].ok, [p.text() for p in found.values()]
    print("\n".join(p.text() for p in found.values()))


def test_the_fixture_kg_does_not_serve_the_crag_dev_questions():
    """What `make adapters DATA=<dev file>` without $CRAG_MOCK_API_URL found out only after labelling."""
    dev_data = crag_file(crag_data.DEV_FILE)
    from evaluation.data import load_examples
    from mock_api.server import running_server
    from models.kg.client import MockAPIClient

    with running_server() as url, MockAPIClient(url) as client:
        probe = probe_kg(load_examples(dev_data), client, "the bundled fixture KG")
    assert probe.conclusive and not probe.ok, probe.text()  # counts only
    print(probe.text())


# ---------------------------------------------------------------------------------------------- the command
def _maker(tmp_path, **settings):
    base = tmp_path / "Meta-Llama-3-8B-Instruct"
    base.mkdir(exist_ok=True)
    (base / "config.json").write_text("{}")
    lines = []
    maker = ma.AdapterMaker(ma.Settings(data=SAMPLE, base=str(base), device="cpu", work=str(tmp_path / "work"),
                                        adapters_dir=str(tmp_path / "adapters"), **settings),
                            say=lines.append, repo_root=tmp_path)
    maker.lines = lines
    return maker


def _stubbed(tmp_path, probe, no_record=(), **settings):
    """An AdapterMaker whose heavy steps only record that they ran (`maker.ran`); `probe` is what the KG probe
    finds; the adapters in `no_record` have no training record."""
    maker = _maker(tmp_path, **settings)
    maker.ran = []
    maker.probe = lambda: maker.ran.append("probe") or probe
    maker.work.session.close = lambda: None

    def step(name):
        return lambda *args: maker.ran.append(name + "".join(f"_{a}" for a in args)) or {"records": 3}

    for name in ("labels", "api_templates", "api_bootstrap", "api_sft"):
        setattr(maker.data, name, step(name))

    def train(adapter):
        maker.ran.append(f"train_{adapter}")
        if adapter in no_record:
            raise ma.MakeAdaptersError(f"{adapter}: no training record in labels_{adapter}/{adapter}.jsonl")
        (maker.adapter_dirs[adapter]).mkdir(parents=True)
        return Trained({"steps": 2, "examples": 3})

    maker.trainer.train = train
    return maker


SERVED = KGProbe("the KG at $CRAG_MOCK_API_URL", {"open": [5, 6], "movie": [4, 4]})
NOT_SERVED = KGProbe("the bundled fixture KG (no $CRAG_MOCK_API_URL)", {"open": [1, 12], "finance": [0, 9]})


def test_a_kg_that_does_not_serve_the_data_stops_the_command_before_labelling(tmp_path):
    maker = _stubbed(tmp_path, NOT_SERVED)
    with pytest.raises(ma.MakeAdaptersError) as stopped:
        maker.run()
    message = str(stopped.value)
    assert maker.ran == ["probe"]  # nothing labelled, nothing trained
    assert message.startswith("the bundled fixture KG (no $CRAG_MOCK_API_URL) does not serve the data's entities: "
                              "1 of 21 probed questions")
    assert f"set {ma.MOCK_API_ENV}=http://localhost:8000" in message and "--without-kg-answer" in message
    assert "no training record" in message and "Nothing was labelled" in message


def test_without_kg_answer_says_so_up_front_and_trains_the_other_two(tmp_path):
    maker = _stubbed(tmp_path, NOT_SERVED, without_kg_answer=True)
    results = maker.run()
    assert maker.ran == ["probe", "labels_web_answer", "api_templates", "api_bootstrap", "api_sft",
                         "train_web_answer", "train_api_generation"]
    text = "\n".join(maker.lines)
    up_front = text.index("kg_answer is skipped (--without-kg-answer; the bundled fixture KG")
    assert up_front < text.index("[labels_kg_answer] skipped: --without-kg-answer")
    assert "api_bootstrap writes will find facts" in text  # the KG's other use, said
    summary = text[text.index("summary ("):]
    assert "trained web_answer, api_generation; skipped kg_answer" in summary
    assert "  kg_answer: skipped: --without-kg-answer; the bundled fixture KG (no $CRAG_MOCK_API_URL) does not " \
           "serve" in summary and "adapter_fallback" in summary
    assert f"  api_generation: trained -> {tmp_path / 'adapters' / 'api_generation'} (2 steps, 3 examples)" in summary
    assert results["summary"]["kg_answer"]["outcome"] == "skipped" and results["kg_probe"]["served"] == 1
    assert not any("kg_answer" in line for line in results["lfs_lines"])  # only what it has is committed


def test_an_adapter_without_a_record_does_not_stop_the_next_and_the_command_fails_after_the_summary(tmp_path):
    maker = _stubbed(tmp_path, SERVED, no_record=("kg_answer",))
    with pytest.raises(ma.MakeAdaptersError, match="^kg_answer not trained .*: kg_answer: no training record"):
        maker.run()
    assert maker.ran[-3:] == ["train_web_answer", "train_kg_answer", "train_api_generation"]
    text = "\n".join(maker.lines)
    assert text.startswith("KG check: the KG at $CRAG_MOCK_API_URL serves the data's entities: 9 of 10")
    assert "[train_kg_answer] not trained: kg_answer: no training record" in text
    assert "trained web_answer, api_generation; skipped kg_answer" in text
    assert "  kg_answer: skipped: no training record in labels_kg_answer/kg_answer.jsonl" in text


def test_the_check_is_skipped_when_the_steps_that_read_the_kg_are_done(tmp_path, monkeypatch):
    maker = _stubbed(tmp_path, NOT_SERVED)
    monkeypatch.setattr(maker.work, "done", lambda name, inputs: True)
    results = maker.run()
    assert "probe" not in maker.ran and "kg_probe" not in results
    assert not any("KG check" in line for line in maker.lines)
    assert "summary (" in "\n".join(maker.lines) and "trained web_answer, kg_answer, api_generation" in \
        "\n".join(maker.lines)


def test_a_mock_api_that_does_not_answer_stops_the_command(tmp_path):
    maker = _stubbed(tmp_path, None)

    def down():
        raise KGClientError("/open/search_entity_by_name: cannot reach the mock API at http://x", "/open")

    maker.probe = down
    with pytest.raises(ma.MakeAdaptersError, match="the mock API does not answer .*start it"):
        maker.run()


def test_the_script_takes_the_flag_and_stops_with_the_reason_not_a_traceback(monkeypatch):
    assert parse_args(["--data", "d", "--base", "b", "--without-kg-answer"]).without_kg_answer
    assert not parse_args(["--data", "d", "--base", "b"]).without_kg_answer

    def stops(settings):
        raise ma.MakeAdaptersError("the KG does not serve the data's entities")

    monkeypatch.setattr("scripts.make_adapters.make_adapters", stops)
    with pytest.raises(SystemExit, match="^make adapters stopped: the KG does not serve"):
        main(["--data", "d", "--base", "b"])
