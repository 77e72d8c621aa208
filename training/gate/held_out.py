"""Held out by content: does a fit or training set share a question with a set docs/results.md reports on?

    reported = {name: load(name) for name in reported_sets()}        # Question rows: entity words, gold forms
    for pair in shared(reported["sample"], fit_questions):          # same entity, same gold: the same question
        print(pair)

Two questions are the same question here when they ask about the same entity and their gold answers state the
same fact, whatever their words: "which countries border switzerland?" (gold "france, germany, italy, austria and
liechtenstein") and "what are the neighbouring countries of switzerland" (gold "france, germany, italy,
austria, liechtenstein") are one question; so are "in which country was the founder of spacex born?" ("south
africa") and "in which city was whoever started spacex born?" ("pretoria, transvaal, south africa"), whose gold
holds the other's. Concretely, a pair is shared when
- their golds state the same fact (`golds_match`; each gold is the answer and each alternative, normalised by
  `gold_form`: a number by its value, a date by its day, a list as the set of its items, any other text by the
  judge's `answer_key`): two forms are equal; or one gold's words hold the other's whole ("south africa" in
  "pretoria, transvaal, south africa"); or a number or a date one gold states is stated by the other among its
  words ("24" and "24 grand slam singles titles"). Golds that state no fact ("invalid question", "i don't
  know") are never compared; and
- the two questions name a common entity word (`content_words` less the words common to the question templates,
  so "switzerland" or "djokovic", never "how", "many" or "movie"). A word that names an entity is never common:
  a word of an entity's name in the bundled KG ("apple"), a number or year ("2019"), a month ("march").
The attribute is not read from the words (a paraphrase changes them): the same entity with the same gold is taken
to be the same attribute, which flags every pair that shares entity, attribute and gold (and may flag an entity's
two attributes with one value: the check is stricter than the rule, never looser).

`scripts/fit_gate.py`'s fit sets and the api_generation adapter's training split are checked against every
reported set by `tests/verify/test_held_out.py` (and `scripts/check_held_out.py`, which prints the pairs). A pair
shared on purpose is listed one by one in `IN_SAMPLE_FILE` with its reason, only on a set the catalogue
(`evaluation.sets`) says is in-sample for what shares it (docs/results.md marks those); a pair the rule flags that
is not one question is set apart by hand in `NOT_SAME`, with what differs.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from evaluation.normalize import find_dates, find_numbers, parse_date, parse_number, split_list
from evaluation.sets import GATE, SETS, held_out_sets, reported_sets
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
    golds: frozenset  # the gold forms (`gold_form`) of the answer and its alternatives
    words: frozenset  # the question's content words (entity words once the common ones are taken out)
    texts: frozenset = frozenset()  # each gold's words (`answer_key`), for one gold held whole in another
    stated: frozenset = frozenset()  # every number and date the golds state among their words


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


def joined(answer) -> str:
    """One answer's text: kg_unseen's `expected` and the templates' answers are lists, the items of one answer."""
    if isinstance(answer, (list, tuple)):
        return ", ".join(str(int(v)) if isinstance(v, float) and v.is_integer() else str(v)
                         for v in answer if v is not None)
    return str(answer)


def gold_forms(answer, alternatives: Iterable = ()) -> frozenset:
    """The gold answer and its alternatives, each in its compared form (those that state a fact)."""
    answer = joined(answer)
    forms = {gold_form(a) for a in (answer, *alternatives) if str(a).strip()}
    return frozenset(f for f in forms if f is not None)


# Golds too short to say anything held inside another: "yes" is in many sentences, never the same fact.
TRIVIAL = frozenset({"yes", "no", "true", "false", "none", "zero", "one", "all", "both", "neither"})
MONTHS = frozenset("""january february march april may june july august september october november december
jan feb mar apr jun jul aug sep sept oct nov dec""".split())


def stated_values(text: str) -> frozenset:
    """The number `text` states among its words when it states one ("24 grand slam singles titles"), and its date
    when it states one full date, in `gold_form`'s shapes. A score or a formation ("4-2-3-1") states several and is
    no one number."""
    text = str(text)
    numbers, dates = find_numbers(text), [d for d in find_dates(text) if d.month]
    found = {("number", round(n.value * (100 if n.percent else 1), 6)) for n in numbers if len(numbers) == 1}
    found |= {("date", (d.year, d.month, d.day)) for d in dates if len(dates) == 1}
    return frozenset(found)


def golds_match(a: Question, b: Question) -> tuple | None:
    """The gold form by which `a` and `b` state the same fact (module docstring), else None."""
    common = a.golds & b.golds
    if common:
        return min(common, key=repr)
    for one, other in ((a, b), (b, a)):
        values = sorted((f for f in one.golds if f[0] in ("number", "date")), key=repr)
        for form in values:
            if form in other.stated:
                return form
        for text in sorted(one.texts):
            if text in TRIVIAL or len(text) < 3 or not content_words(text):
                continue
            if any(text != held and f" {text} " in f" {held} " for held in other.texts):
                return ("text", text)
    return None


def content_words(query: str) -> frozenset:
    """The question's words less function words; possessives and plurals' apostrophes dropped."""
    found = (w[:-2] if w.endswith("'s") else w for w in _WORD.findall(query.lower().replace("’", "'")))
    return frozenset(w for w in found if w not in FUNCTION_WORDS and len(w) > 1)


def question(set_name: str, row: Mapping, index: int = 0) -> Question:
    """A Question from a CRAG row (`query`, `answer`, `alt_ans`) or a KG row (`query`, `expected`)."""
    answer = row["expected"] if "expected" in row and "answer" not in row else row.get("answer", "")
    alternatives = list(row.get("alt_ans") or ())
    golds = gold_forms(answer, alternatives)
    texts = [joined(answer), *alternatives] if golds else []  # a gold that states no fact is never compared
    return Question(set_name, str(row.get("interaction_id") or row.get("id") or index), row["query"], golds,
                    content_words(row["query"]), frozenset(answer_key(str(t)) for t in texts if answer_key(str(t))),
                    frozenset(v for t in texts for v in stated_values(t)))


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


def naming_words(examples: Iterable, asking: frozenset) -> frozenset:
    """The words of the entities' names the templates ask about ("apple", "djokovic", "spacex"), less the words the
    templates' own phrasings ask with (`asking`: "grammys", "members", "win" are in song and band names too)."""
    return frozenset(w for example in examples for entity in example.entities for w in content_words(str(entity))
                     if w not in asking)


def asking_words(patterns: Iterable[str]) -> frozenset:
    """The words of the templates' phrasings, their `{slot}` placeholders left out."""
    return frozenset(w for pattern in patterns for w in content_words(re.sub(r"\{[^}]*\}", " ", pattern)))


def names_an_entity(word: str) -> bool:
    """A number, a year or a date, or a month: what a question names, never how it asks."""
    return any(ch.isdigit() for ch in word) or word in MONTHS


@lru_cache(maxsize=1)
def common_words() -> frozenset:
    """The words that are never entity words: the templates' words over the bundled KG (generated here), less the
    words that name an entity (`naming_words`, `names_an_entity`)."""
    from training.api_templates import FixtureKG, generate, templates

    examples = generate(FixtureKG.load(), seed=0)
    naming = naming_words(examples, asking_words(q for t in templates() for q in (*t.questions, *t.unseen)))
    return frozenset(w for w in template_words(examples) if w not in naming and not names_an_entity(w))


def _gold_words(form: tuple) -> frozenset:
    """The words of a gold form: a choice question names its answer, which is then no entity of the question."""
    values = form[1] if form[0] == "list" else (form[1],)
    return frozenset(w for v in values for w in str(v).split())


SMALL_COUNT = 100  # counts below this recur across unrelated questions ("2 goals", "2 wins")


def _coincidence(entity: tuple[str, ...], form: tuple) -> bool:
    """A shared date ("feb", "2024") and a small count: two questions about one day, not one fact."""
    return (all(names_an_entity(w) for w in entity) and form[0] == "number" and float(form[1]).is_integer()
            and abs(form[1]) < SMALL_COUNT)


def shared(reported: Sequence[Question], fit: Sequence[Question], common: frozenset | None = None) -> list[Shared]:
    """Every (reported, fit) pair whose golds state the same fact (`golds_match`) and that names a common entity
    word."""
    common = common_words() if common is None else common
    found = []
    for f in fit:
        for r in reported:
            if not (r.words & f.words) - common:  # cheap first: no common entity word, no shared question
                continue
            form = golds_match(r, f)
            if form is None:
                continue
            entity = tuple(sorted((r.words & f.words) - common - _gold_words(form)))
            if entity and not _coincidence(entity, form):
                found.append(Shared(r, f, form, entity))
    return found


# The bundled sets docs/results.md reports on (the catalogue's reported sets less CRAG's own files, which are checked
# where $CRAG_DATA holds them), and those the answer gate is never fitted on.
BUNDLED_REPORTED = {name: s for name, s in reported_sets().items() if not s.crag_file}
HELD_OUT_FROM_GATE = tuple(name for name in held_out_sets(GATE) if name in BUNDLED_REPORTED)


def read_set(name: str) -> list[Question]:
    """A bundled reported set's questions."""
    return questions(name, read_jsonl(REPO_ROOT / BUNDLED_REPORTED[name].data, lambda row: row))


def held_out_questions() -> list[Question]:
    """The questions of the bundled sets the gate is reported on and never fitted on (`HELD_OUT_FROM_GATE`)."""
    return [q for name in HELD_OUT_FROM_GATE for q in read_set(name)]


def sharing(candidates: Sequence[Question], reported: Sequence[Question]) -> set[str]:
    """The ids of `candidates` that share a question (entity and gold) with one of `reported`."""
    return {pair.fit.id for pair in shared(reported, candidates)}


# Why what is fitted or trained shares questions with a set the catalogue says it is in-sample for (`evaluation.sets`:
# `in_sample_for`; docs/results.md marks the set in-sample). The pairs themselves are listed one by one in
# `IN_SAMPLE_FILE`, each with its reason, so a new pair is caught even on an in-sample set.
IN_SAMPLE_REASONS = {
    ("gate", "kg_wordings"): "kg_wordings is a fit set of the gate; the gate's other fit sets ask its KG facts too",
    ("gate", "checkable"): "checkable is a fit set of the gate; the gate's other fit sets ask its KG facts too",
    ("gate", "public_sql"): "public_sql is a fit set of the gate; the gate's other fit sets ask its facts too",
    ("api_generation", "task2"): "the KG adapter's training templates ask the Task-2 sample's questions",
    ("api_generation", "task3"): "the KG adapter's training templates ask the Task-3 sample's questions",
    ("api_generation", "kg_wordings"): "the KG adapter was trained on the same entities and attributes, in other "
                                       "words (kg_wordings holds out the wording, not the fact)",
    ("api_generation", "checkable"): "the KG adapter was trained on the facts its choices and counts read",
}
IN_SAMPLE_FILE = "data/gate/in_sample_pairs.json"


# Pairs the check flags that are not one question: (fit id, reported id) -> what differs (read by hand).
NOT_SAME = {
    ("sql-aggregate-02", "4034d7a7-dfd8-5689-aa01-7207ad8c8fa6"):
        "most Grammys won at the 2020 Grammys, not the 2020 best new artist (one winner, two attributes)",
}


def pair_key(owner: str, pair: Shared) -> str:
    """One allowed pair as `IN_SAMPLE_FILE` lists it: owner, fit set and id, reported set and id."""
    return f"{owner} {pair.fit.set}:{pair.fit.id} = {pair.reported.set}:{pair.reported.id}"


def in_sample_pairs(path: str | Path = REPO_ROOT / IN_SAMPLE_FILE) -> dict[str, str]:
    """The allowed pairs (`pair_key`) with their reasons; none when the file does not exist."""
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}


def found_pairs(owner: str, fitted: Mapping[str, Sequence[Question]],
                reported: Mapping[str, Sequence[Question]]) -> list[Shared]:
    """Every pair of `owner`'s fit or training sets and the reported sets that share a question, less those
    `NOT_SAME` sets apart and a fit set's pairs with itself (a set fitted on is in-sample by the catalogue)."""
    return [pair for name, group in reported.items() for fit_name, fit in fitted.items() if fit_name != name
            for pair in shared(group, fit) if (pair.fit.id, pair.reported.id) not in NOT_SAME]


def unexplained(owner: str, fitted: Mapping[str, Sequence[Question]], reported: Mapping[str, Sequence[Question]],
                allowed: Mapping[str, str] | None = None) -> list[Shared]:
    """The pairs `found_pairs` finds that `allowed` (default: `in_sample_pairs()`) does not list."""
    allowed = in_sample_pairs() if allowed is None else allowed
    return [pair for pair in found_pairs(owner, fitted, reported) if pair_key(owner, pair) not in allowed]


def allow_list(found: Mapping[str, Sequence[Shared]]) -> dict[str, str]:
    """The allowed pairs for `found` (owner -> its pairs), each with its reason (`IN_SAMPLE_REASONS`).

    Raises:
        ValueError: a pair on a set the catalogue does not say is in-sample for its owner: such a pair is a leak,
            removed from the fit or training set, or set apart by hand in `NOT_SAME`, never allowed wholesale.
    """
    listed, leaks = {}, []
    for owner, pairs in found.items():
        for pair in pairs:
            reason = IN_SAMPLE_REASONS.get((owner, pair.reported.set))
            if reason is None or owner not in SETS[pair.reported.set].in_sample_for:
                leaks.append(f"{owner}: {pair}")
            else:
                listed[pair_key(owner, pair)] = reason
    if leaks:
        raise ValueError("questions shared with sets held out from what shares them:\n" + "\n".join(leaks))
    return dict(sorted(listed.items()))

