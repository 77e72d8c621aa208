"""Template-generated API data: every target compiles, runs on the bundled KG to the answer read from the KG
sources, generation is reproducible, and the held-out splits share no entity / template with training."""
import random
from collections import Counter, defaultdict

import pytest

from models.kg.apis import compile_program, signatures
from models.kg.config import KGConfig
from models.kg.examples import ExamplePool
from models.kg.language import format_program
from models.paths import resolve_repo_path
from models.types import DOMAINS
from training.api_templates import (HELDOUT_TEMPLATES, TABLES, UNASKED_FUNCTIONS, DomainTable, FixtureKG, Template,
                                    cap_per_template, check_answer, crag_register, generate, program_entities,
                                    split_examples, templates)


@pytest.fixture(scope="module")
def examples():
    return generate(FixtureKG.load(), seed=0)


@pytest.fixture(scope="module")
def pool():
    return ExamplePool.load(resolve_repo_path(KGConfig().icl_pool))


@pytest.fixture(scope="module")
def splits(examples, pool):
    return split_examples(examples, program_entities(e.program for e in pool.examples), seed=0)


def test_every_template_fills_and_every_target_compiles_canonically(examples):
    by_template = defaultdict(list)
    for example in examples:
        by_template[example.template].append(example)
    assert set(by_template) == {t.id for t in templates()}, "a template that fits no entity"
    for example in examples:
        assert format_program(compile_program(example.program, example.domain)) == example.program, example.id
        assert example.expected and example.entities, example.id
    assert {e.domain for e in examples} == set(DOMAINS)
    assert set(HELDOUT_TEMPLATES) <= set(by_template)


def test_catalogue_covers_the_language():
    programs = " ".join(t.program for t in templates())
    for operator in ("ALL ", "AVG ", "(*)", "sort(", "[:1]", '["len"]', "eq(", "ge(", "le("):
        assert operator in programs, operator
    asked = {name for t in templates() for name in signatures(t.domain) if f"{name}(" in t.program}
    every = {name for domain in DOMAINS for name in signatures(domain)}
    assert every - asked == set(UNASKED_FUNCTIONS)


def test_generation_is_reproducible(examples):
    again = generate(FixtureKG.load(), seed=0)
    assert [e.to_json() for e in again] == [e.to_json() for e in examples]
    assert [e.query_time for e in generate(FixtureKG.load(), seed=1)] != [e.query_time for e in examples]


def test_splits_are_disjoint_in_entities_and_templates(splits, pool):
    train, held_entities, held_templates = splits["train"], splits["heldout_entities"], splits["heldout_templates"]
    assert train and held_entities and held_templates
    train_entities = {x for e in train for x in e.entities}
    pool_entities = program_entities(e.program for e in pool.examples)
    for example in held_entities:
        new = [x for x in example.entities if x not in train_entities]
        assert new, f"{example.id} names only training entities"
        assert not set(new) & pool_entities, f"{example.id}: an in-context entity held out"
    assert not {e.template for e in train} & set(HELDOUT_TEMPLATES)
    assert not {x for e in held_templates for x in e.entities} - train_entities
    assert not {e.template for e in held_entities} & set(HELDOUT_TEMPLATES)
    assert {e.held for e in held_templates} == {"phrasing", "template"}
    assert not [e for e in train + held_entities if e.held]
    pool_queries = {e.query.lower() for e in pool.examples}
    assert not pool_queries & {e.query.lower() for e in held_entities + held_templates}


def test_unseen_phrasings_never_reach_training(examples, splits):
    """The split definition (catalogue.py): an `unseen` phrasing of a template, and every phrasing of a held-out
    template, is asked only in heldout_templates; each template declares at least one unseen phrasing."""
    by_id = {t.id: t for t in templates()}
    for template in by_id.values():
        assert template.unseen and len(template.questions) >= 3, template.id
    for example in splits["train"] + splits["heldout_entities"]:
        template = by_id[example.template]
        phrasing = int(example.id.rsplit("-", 1)[1])
        assert phrasing < len(template.questions) and not template.heldout, example.id
    for example in splits["heldout_templates"]:
        template = by_id[example.template]
        assert template.heldout or int(example.id.rsplit("-", 1)[1]) >= len(template.questions), example.id
    assert {"eps"} <= set(HELDOUT_TEMPLATES)  # get_stock_eps: a whole function's only template
    assert 15 <= len(HELDOUT_TEMPLATES) <= len(by_id) // 4


def test_every_domain_is_one_table_declaring_each_template_once():
    assert sorted(table.domain for table in TABLES) == sorted(DOMAINS)
    table = DomainTable("movie")
    table.template('get_movie("{movie}")["year"]', "what year is {movie}")(lambda kg: ())
    with pytest.raises(ValueError, match="declared twice"):
        table.template('get_movie("{movie}")["title"]', "which {movie}", name="<lambda>")(lambda kg: ())
    with pytest.raises(ValueError, match="music template"):
        table.add(Template("x", "music", ("q",), "p", lambda kg: ()))


def test_crag_register_writes_as_users_type():
    rng = random.Random(0)
    seen = {crag_register("what is the close of aapl on 2024-02-27?", rng) for _ in range(200)}
    assert any(not q.endswith("?") for q in seen) and any(q.endswith("?") for q in seen)
    assert any(q.startswith("what's") for q in seen) and any(q.startswith("what is") for q in seen)
    assert any("february 27, 2024" in q for q in seen) and any("2024-02-27" in q for q in seen)
    assert any("02/27/2024" in q for q in seen)
    a, b = random.Random(3), random.Random(3)
    assert [crag_register("who is x?", a) for _ in range(20)] == [crag_register("who is x?", b) for _ in range(20)]


def test_dates_in_words_reach_the_generator_as_the_api_writes_them():
    """The register writes dates in words; the KG checks give the model the ISO date back, so a trained target
    ("2024-02-27") stays right for every surface form."""
    from models.kg.checks.dates import normalise_dates, question_dates
    from models.types import parse_query_time

    now = parse_query_time("03/01/2024, 10:00:00 PT")
    rng = random.Random(0)
    for _ in range(30):
        question = crag_register("what was the close of aapl on 2024-02-27", rng)
        assert "2024-02-27" in normalise_dates(question, question_dates(question, now)), question


@pytest.mark.parametrize("answer,expected,same", [
    ([2010], [2010.0], True), (["Christopher Nolan"], ["christopher nolan "], True),
    ([183.1300001], [183.13], True), (["a", "b"], ["b", "a"], True),
    ([183.2], [183.13], False), (["a"], ["a", "b"], False), (["a", "a"], ["a", "b"], False),
    (["inception"], ["Inception: The Cobol Job"], False), ([True], [1], False),
])
def test_check_answer(answer, expected, same):
    assert check_answer(answer, expected) is same


def _sample(examples, per_template):
    by_template = defaultdict(list)
    for example in examples:
        by_template[example.template].append(example)
    rng = random.Random(0)
    return [e for group in by_template.values() for e in rng.sample(group, min(per_template, len(group)))]


def _execute_all(examples):
    from mock_api.server import running_server
    from models.kg.client import MockAPIClient
    from models.kg.pathway import KGPathway
    from training.api_scoring import score_program

    with running_server() as url:
        kg = KGPathway(KGConfig(), MockAPIClient(url, 5.0, 1))
        wrong = [(e.id, e.program, s) for e in examples if not (s := score_program(kg, e, e.program)).correct]
    assert not wrong, wrong[:5]


def test_targets_execute_to_their_expected_value_sample(examples):
    _execute_all(_sample(examples, 2))


@pytest.mark.slow
def test_targets_execute_to_their_expected_value_all(examples):
    _execute_all(examples)


def test_a_wrong_program_scores_wrong(examples):
    from mock_api.server import running_server
    from models.kg.client import MockAPIClient
    from models.kg.pathway import KGPathway
    from training.api_scoring import score_program

    example = next(e for e in examples if e.template == "movie_release_date" and "inception" in e.entities)
    with running_server() as url:
        kg = KGPathway(KGConfig(), MockAPIClient(url, 5.0, 1))
        assert score_program(kg, example, example.program).correct
        near_duplicate = score_program(kg, example, 'get_movie("inception: the cobol job")["release_date"]')
        assert near_duplicate.executed and not near_duplicate.correct
        assert not score_program(kg, example, 'get_movie("inception"').compiled
        assert not score_program(kg, example, "None").executed


def test_cap_per_template_keeps_at_most_n_of_each_and_is_seeded(examples):
    capped = cap_per_template(examples, 5, seed=0)
    counts = Counter(e.template for e in capped)
    assert max(counts.values()) == 5 and set(counts) == {e.template for e in examples}
    assert [e.id for e in capped] == [e.id for e in examples if e in set(capped)]  # original order
    assert [e.id for e in cap_per_template(examples, 5, seed=0)] == [e.id for e in capped]
    assert [e.id for e in cap_per_template(examples, 5, seed=1)] != [e.id for e in capped]
    assert cap_per_template(examples, None) == list(examples)


def test_every_key_the_records_carry_is_asked_or_declared_unasked(examples):
    """coverage.py: one call of each function on the bundled KG; every key its records carry is asked by a template,
    taught through a function of the same records, or named in UNASKED_KEYS with its reason; an open-domain
    infobox key is exempt ("*") only when a single fixture entity holds it."""
    import re

    from mock_api.server import running_server
    from models.kg.client import MockAPIClient
    from models.kg.executor import execute
    from models.kg.pathway import KGPathway
    from models.types import parse_query_time
    from training.api_templates.coverage import SAME_RECORDS, UNASKED_KEYS, asked_keys

    asked = asked_keys(templates())
    holders = Counter(k for entity in FixtureKG.load().open_entities.values() for k in entity["infobox"])
    missing = []
    with running_server() as url:
        kg = KGPathway(KGConfig(), MockAPIClient(url, 5.0, 1))
        for domain in DOMAINS:
            for name in signatures(domain):
                example = next((e for e in examples if e.domain == domain and e.program.startswith(name + "(")), None)
                if example is None:  # asked only after a `*` (play-by-play): its keys are declared as a whole
                    assert "*" in UNASKED_KEYS[name], name
                    continue
                call = re.sub(r'(\["[^"]+"\]|\[:\d+\])+$', "", example.program.split("\n")[0])
                result = execute(compile_program(call, domain), kg.client, now=parse_query_time(example.query_time),
                                 limits=kg.limits, matcher=kg.matcher)
                carried = {key for s in result.statements if s.table is not None for row in s.table.rows[:3]
                           for key in row.fields}
                assert carried, name
                taught = asked.get(name, set()) | asked.get(SAME_RECORDS.get(name, ""), set())
                declared = {**UNASKED_KEYS.get(SAME_RECORDS.get(name, ""), {}), **UNASKED_KEYS.get(name, {})}
                for key in sorted(carried - taught - set(declared)):
                    if "*" not in declared or holders[key] > 1:
                        missing.append(f"{name}[{key!r}]")
    assert not missing, f"keys neither asked nor declared unasked: {missing}"
