"""Held out by content: does a fit or training set share a question with a set docs/results.md reports on?

    reported = {name: load(name) for name in reported_sets()}        # Question rows: entity words, gold forms
    for pair in shared(reported["sample"], fit_questions):          # same entity, same gold: the same question
        print(pair)

Two questions are the same question here when they ask about the same entity and have the same gold answer,
whatever their words: "which countries border switzerland?" (gold "france, germany, italy, austria and
liechtenstein") and "what are the neighbouring countries of switzerland" (gold "france, germany, italy,
austria, liechtenstein") are one question. Concretely, a pair is shared when
- a gold form of one equals a gold form of the other (`gold_forms`: the answer and each alternative, normalised:
  a number by its value, a date by its day, a list as the set of its items, any other text by the judge's
  `answer_key`); golds that state no fact ("invalid question", "i don't know") are never compared, and
- the two questions name a common entity word (`entity_words`: the question's words less the question and
  function words and the words common across the compared questions, so "switzerland" or "djokovic", never "how",
  "many" or "movie").
The attribute is not read from the words (a paraphrase changes them): the same entity with the same gold is taken
to be the same attribute, which flags every pair that shares entity, attribute and gold (and may flag an entity's
two attributes with one value: the check is stricter than the rule, never looser).

`scripts/fit_gate.py`'s fit sets and the api_generation adapter's training split are checked against every
reported set by `tests/verify/test_held_out.py`; the pairs that are shared on purpose are listed in `IN_SAMPLE`
(and marked "in-sample" in docs/results.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Iterable, Mapping, Sequence

from evaluation.normalize import parse_date, parse_number, split_list
from models.jsonl import read_jsonl
from models.paths import REPO_ROOT
from models.text import answer_key

NO_FACT = {"invalid question", "i don't know", "i dont know", "i don t know"}
# Question and function words, and the generic words of the question templates: never an entity.
FUNCTION_WORDS = frozenset("""
a an the of in on at to for from by with about as and or but not no nor is are was were be been being do does did
doing has have had having will would shall should can could may might must what which who whom whose when where why
how many much that this these those it its it's there their they them he his she her him i me my we our you your
s than then so if into over under after before during since until up down out off per each every any some all more
most less least first last one ever yet also just only still tell me please did whats what's who's whos where's
year years date day days month time times number count total name names called
larger smaller bigger higher lower older younger longer shorter taller earlier later better worse greater fewer
""".split())
_WORD = re.compile(r"[a-z0-9]+(?:[-'][a-z0-9]+)*")
TEMPLATE_ENTITIES = 4  # a word the templates use about this many different entities is a word of the asking


@dataclass(frozen=True)
class Question:
    """One question of a set, reduced to what the check compares."""

    set: str
    id: str
    query: str
    golds: frozenset
    words: frozenset  # the question's content words (entity words once the common ones are taken out)


@dataclass(frozen=True)
class Shared:
    """A question of a fit or training set that is a question of a reported set."""

    reported: Question
    fit: Question
    gold: tuple
    entity: tuple[str, ...]

    def __str__(self) -> str:
        return (f"{self.fit.set} {self.fit.id} {self.fit.query!r} = {self.reported.set} {self.reported.id} "
                f"{self.reported.query!r} (entity {' '.join(self.entity)}, gold {self.gold[1]})")


def gold_form(text: str) -> tuple | None:
    """One answer in the form golds are compared in; None when it states no fact."""
    text = str(text).strip()
    key = answer_key(text)
    if not key or key in NO_FACT or text.lower() in NO_FACT:
        return None
    date = parse_date(text)
    if date is not None and date.month:
        return ("date", (date.year, date.month, date.day))
    number = parse_number(text)
    if number is not None and len(re.sub(r"[\d.,$%\s-]", "", text)) <= 12:
        return ("number", round(number.value * (100 if number.percent else 1), 6))
    items = split_list(text)
    if len(items) > 1:
        return ("list", tuple(sorted({answer_key(i) for i in items if answer_key(i)})))
    return ("text", key)


def gold_forms(answer, alternatives: Iterable = ()) -> frozenset:
    """The gold answer and its alternatives, each in its compared form (those that state a fact)."""
    if isinstance(answer, (list, tuple)):  # kg_unseen's `expected`, the templates' answers: items of one answer
        answer = ", ".join(str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
                           for v in answer if v is not None)
    forms = {gold_form(a) for a in (answer, *alternatives) if str(a).strip()}
    return frozenset(f for f in forms if f is not None)


def content_words(query: str) -> frozenset:
    """The question's words less function words; possessives and plurals' apostrophes dropped."""
    found = (w[:-2] if w.endswith("'s") else w for w in _WORD.findall(query.lower().replace("’", "'")))
    return frozenset(w for w in found if w not in FUNCTION_WORDS and len(w) > 1)


def question(set_name: str, row: Mapping, index: int = 0) -> Question:
    """A Question from a CRAG row (`query`, `answer`, `alt_ans`) or a KG row (`query`, `expected`)."""
    answer = row["expected"] if "expected" in row and "answer" not in row else row.get("answer", "")
    return Question(set_name, str(row.get("interaction_id") or row.get("id") or index), row["query"],
                    gold_forms(answer, row.get("alt_ans") or ()), content_words(row["query"]))


def questions(set_name: str, rows: Iterable[Mapping]) -> list[Question]:
    return [question(set_name, row, i) for i, row in enumerate(rows)]


def template_words(examples: Iterable, min_entities: int = TEMPLATE_ENTITIES) -> frozenset:
    """Words the KG question templates use about `min_entities` or more different entities ("budget", "rating",
    "band", "oscars"): words of the asking, not of an entity. `examples`: `training.api_templates.generate`'s."""
    seen: dict[str, set] = {}
    for example in examples:
        for word in content_words(example.query):
            seen.setdefault(word, set()).add(tuple(example.entities))
    return frozenset(w for w, entities in seen.items() if len(entities) >= min_entities)


@lru_cache(maxsize=1)
def common_words() -> frozenset:
    """The words that are never entity words: the templates' words over the bundled KG (generated here)."""
    from training.api_templates import FixtureKG, generate

    return template_words(generate(FixtureKG.load(), seed=0))


def _gold_words(form: tuple) -> frozenset:
    """The words of a gold form: a choice question names its answer, which is then no entity of the question."""
    values = form[1] if form[0] == "list" else (form[1],)
    return frozenset(w for v in values for w in str(v).split())


def shared(reported: Sequence[Question], fit: Sequence[Question], common: frozenset | None = None) -> list[Shared]:
    """Every (reported, fit) pair with a common gold form and a common entity word."""
    common = common_words() if common is None else common
    by_gold: dict[tuple, list[Question]] = {}
    for q in reported:
        for form in q.golds:
            by_gold.setdefault(form, []).append(q)
    found, seen = [], set()
    for f in fit:
        for form in sorted(f.golds, key=repr):
            for r in by_gold.get(form, ()):
                entity = tuple(sorted((r.words & f.words) - common - _gold_words(form)))
                if entity and (r.id, f.id) not in seen:
                    seen.add((r.id, f.id))
                    found.append(Shared(r, f, form, entity))
    return found


# The sets docs/results.md reports on that are bundled (file, tasks it is run as). The real dev questions
# ($CRAG_DATA/dev_data.jsonl.bz2, not shipped) are checked where the file is present.
BUNDLED_REPORTED = {
    "sample": ("data/sample/crag_sample.jsonl", (1, 2)),  # the bundled sample (Task 1) and the Task-2 sample
    "task3": ("data/sample/crag_sample_task3.jsonl", (3,)),
    "kg_unseen": ("data/acceptance/kg_unseen.jsonl", (2,)),
    "kg_wordings": ("data/acceptance/kg_wordings.jsonl", (2,)),
    "checkable": ("data/acceptance/checkable.jsonl", (2,)),
    "public_sql": ("data/acceptance/public_sql.jsonl", (1,)),
}
# The reported sets no generated fit set may share a question with (the fit's own acceptance sets excepted: they
# are fitted on and reported, in-sample, docs/results.md says so).
HELD_OUT_FROM_GATE = ("sample", "task3", "kg_unseen")


def read_set(name: str) -> list[Question]:
    """A bundled reported set's questions."""
    return questions(name, read_jsonl(REPO_ROOT / BUNDLED_REPORTED[name][0], lambda row: row))


def held_out_questions() -> list[Question]:
    """The questions of the bundled sets the gate is reported on and never fitted on (`HELD_OUT_FROM_GATE`)."""
    return [q for name in HELD_OUT_FROM_GATE for q in read_set(name)]


def sharing(candidates: Sequence[Question], reported: Sequence[Question]) -> set[str]:
    """The ids of `candidates` that share a question (entity and gold) with one of `reported`."""
    return {pair.fit.id for pair in shared(reported, candidates)}


# Sharing on purpose: (what is fitted or trained, reported set) -> why. docs/results.md marks each in-sample.
IN_SAMPLE = {
    ("gate", "kg_wordings"): "a fit set of the gate, reported in the current-results table",
    ("gate", "checkable"): "a fit set of the gate, reported in the current-results table",
    ("gate", "public_sql"): "a fit set of the gate, reported in the current-results table",
    ("api_generation", "sample"): "the KG adapter's training templates ask the Task-2 sample's questions",
    ("api_generation", "task3"): "the KG adapter's training templates ask the Task-3 sample's questions",
    ("api_generation", "kg_wordings"): "the KG adapter was trained on the same entities and attributes, in other "
                                       "words (kg_wordings holds out the wording, not the fact)",
    ("api_generation", "checkable"): "the KG adapter was trained on the facts its choices and counts read",
}
# Pairs the check flags that are not one question: (fit id, reported id) -> what differs (read by hand).
NOT_SAME = {
    ("sql-aggregate-02", "4034d7a7-dfd8-5689-aa01-7207ad8c8fa6"):
        "most Grammys won at the 2020 Grammys, not the 2020 best new artist (one winner, two attributes)",
}


def unexplained(owner: str, fitted: Mapping[str, Sequence[Question]],
                reported: Mapping[str, Sequence[Question]]) -> list[Shared]:
    """The pairs of `owner`'s fit or training sets and the reported sets that share a question, less those
    `IN_SAMPLE` names for `owner` and those `NOT_SAME` sets apart."""
    return [pair for name, group in reported.items() if (owner, name) not in IN_SAMPLE
            for fit in fitted.values() for pair in shared(group, fit)
            if (pair.fit.id, pair.reported.id) not in NOT_SAME]
