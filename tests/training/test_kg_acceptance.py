"""The unseen-entity acceptance set (`data/acceptance/kg_unseen.jsonl` over `data/kg_acceptance/`): every gold
program compiles canonically and gives its expected answer against a mock API serving the acceptance KG, no
entity of that KG occurs in the fixture KG, and no question is one the fixture templates produce."""
import json
import re
import string

import pytest

from mock_api.bundled_kg import build
from mock_api.server import running_server
from models.kg.apis import compile_program
from models.kg.language import format_program
from models.paths import REPO_ROOT
from models.types import DOMAINS
from training.api_scoring import score_program
from training.api_templates import FixtureKG, TemplateExample, generate, read_examples
from training.template_data import kg_pathway

ACCEPTANCE_KG = REPO_ROOT / "data" / "kg_acceptance"
QUESTIONS = REPO_ROOT / "data" / "acceptance" / "kg_unseen.jsonl"
_ID = re.compile(r"kgu-(movie|music|finance|sports|open)-\d\d\Z")
_PUNCTUATION = str.maketrans("", "", string.punctuation)


def _plain(text: str) -> str:
    """Case-folded, punctuation stripped, whitespace collapsed."""
    return " ".join(str(text).casefold().translate(_PUNCTUATION).split())


@pytest.fixture(scope="module")
def examples():
    return read_examples(QUESTIONS)


@pytest.fixture(scope="module")
def kg(tmp_path_factory):
    """The scripts' KG pathway (profile embedder and matcher, as `training.template_data.kg_pathway` builds it) over
    a mock API serving the acceptance KG, built once for the module."""
    kg_dir = build(tmp_path_factory.mktemp("cragkg_acceptance"), ACCEPTANCE_KG)
    with running_server(kg_dir) as url:
        yield kg_pathway("cpu", url)


def test_every_line_is_a_template_example_with_a_canonical_program(examples):
    lines = [line for line in QUESTIONS.read_text(encoding="utf8").splitlines() if line.strip()]
    assert len(examples) == len(lines) >= 50
    assert len({e.id for e in examples}) == len(examples)
    for line, example in zip(lines, examples):
        assert set(json.loads(line)) == {"id", "template", "query", "query_time", "domain", "program", "entities",
                                         "expected"}, example.id
        assert TemplateExample.from_json(example.to_json()) == example
        assert _ID.match(example.id) and example.id.split("-")[1] == example.domain, example.id
        assert example.template.startswith("natural:") and example.expected and example.entities, example.id
        assert re.fullmatch(r"\d\d/\d\d/\d{4}, \d\d:\d\d:\d\d PT", example.query_time), example.id
        assert all(e == e.lower() for e in example.entities), example.id
        assert format_program(compile_program(example.program, example.domain)) == example.program, example.id
    assert {e.domain for e in examples} == set(DOMAINS)


def test_gold_programs_give_the_expected_answers_on_the_acceptance_kg(examples, kg):
    wrong = [(e.id, e.program, s.answer, s.error, e.expected) for e in examples
             if not (s := score_program(kg, e, e.program)).correct]
    assert not wrong, wrong


def _entity_names(source: FixtureKG) -> dict[str, set[str]]:
    teams = {g[side]["team"] for g in source.nba_games for side in ("home", "away")}
    teams |= {row[side] for row in source.soccer for side in ("home", "away")}
    return {
        "movie titles": {m["title"] for m in source.movies},
        "people": set(source.persons) | {name for m in source.movies for name, *_ in m["cast"] + m["crew"]},
        "artists": set(source.artists),
        "songs": set(source.songs) | {w for a in source.artists.values() for w in a.get("works") or ()},
        "tickers and companies": ({r["ticker"] for r in source.prices} | set(source.info)
                                  | {r["Symbol"] for r in source.companies} | {r["Name"] for r in source.companies}),
        "teams": teams,
        "open entities": set(source.open_entities),
    }


def test_no_acceptance_entity_occurs_in_the_fixture():
    fixture_names = {_plain(n) for names in _entity_names(FixtureKG.load()).values() for n in names}
    for kind, names in _entity_names(FixtureKG.load(ACCEPTANCE_KG)).items():
        assert names, kind
        shared = sorted(n for n in names if _plain(n) in fixture_names)
        assert not shared, f"{kind} also in data/kg_fixture: {shared}"


def test_no_question_is_one_the_fixture_templates_ask(examples):
    template_questions = {_plain(e.query) for e in generate(FixtureKG.load())}
    assert not [e.query for e in examples if _plain(e.query) in template_questions]
