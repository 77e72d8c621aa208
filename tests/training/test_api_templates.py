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
from training.api_templates import (HELDOUT_TEMPLATES, UNASKED_FUNCTIONS, FixtureKG, cap_per_template, check_answer,
                                    generate, program_entities, split_examples, templates)


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
    assert {e.template for e in held_templates} <= set(HELDOUT_TEMPLATES)
    assert not {x for e in held_templates for x in e.entities} - train_entities
    assert not {e.template for e in held_entities} & set(HELDOUT_TEMPLATES)
    pool_queries = {e.query.lower() for e in pool.examples}
    assert not pool_queries & {e.query.lower() for e in held_entities + held_templates}


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
