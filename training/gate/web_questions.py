"""Labelled web questions for fitting the answer gate: KG template questions with five rendered pages.

    questions = gate_questions(FixtureKG.load(), seed=0)      # 250-400 CRAG-format records, three cases
    write_gate_data(questions, "data/gate/gate_questions.jsonl")
    make_gate_web_questions(check=True)                       # the committed file is a fresh build (0) or not (1)

The gate is a logistic regression over each candidate answer's trace features; it needs answers that are right
and answers that are wrong, read off web pages. The acceptance sets have no pages, and the sets the gate is
reported on (the bundled sample, the dev questions, `kg_unseen.jsonl` with its KG) must not be fitted on. So the
questions here are the KG templates' own (`training.api_templates`), and their pages are rendered from the
fixture KG's records (`data/kg_fixture/`, read through the templates' `fill` functions, never the acceptance KG).

Each record is a CRAG row (the fields of `data/sample/crag_sample.jsonl`, read by `evaluation.data`) with exactly
five `search_results` and a `gate_case`:
- "stated" (about 60 %): one or two pages state the gold value (the entity's record as prose, table, list, or
  heading + paragraphs, or a question-and-answer post), beside near misses (the same attribute of another entity
  of the same template, or the entity's other attributes) and an unrelated page;
- "absent" (about 25 %): pages about the entity and near misses, none of which states the asked value (checked
  word by word: neither the gold nor an alternative occurs in any page), so "i don't know" is the right answer;
- "conflict" (about 15 %): an older page states a wrong value (another entity's, or a nudged number) and a newer
  page the right one (`page_last_modified` tells them apart).

Design decisions:
- Questions come from the held-out splits first (`heldout_entities`, `heldout_templates`, split as
  `training.template_data.split_for_pool` does with the default in-context pool, the split the CPU adapter was
  trained on), `train` only to fill a template's quota; at most `per_template` per template and one phrasing per
  entity, so no template or entity dominates. Answers that are empty or lists of more than three are skipped.
- The gold `answer` is lower case (as `data/acceptance/kg_wordings.jsonl` writes it); `alt_ans` holds other
  spellings (a date in words, a number with thousands separators, a list joined with "and").
- All randomness is `random.Random` seeded from `seed` and the question's own key, output keys are in a fixed
  order and nothing depends on time or the machine, so a rebuild is byte-identical (`check`, the command line's
  `--check`: scripts/make_gate_web_questions.py).
- Page chrome (site names, navigation, footers) holds no digits, so a number answer of an "absent" question cannot
  appear in it by accident; the domains are `example.*` names, never real sites.
"""
from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path
from typing import Iterable, Sequence

from evaluation.sets import GATE, held_out_sets
from models.jsonl import read_jsonl
from training.api_templates import FixtureKG, Template, TemplateExample, generate, split_examples, templates
from training.gate.web_pages import (Fact, comparison_page, gold_answer, is_future, label_of, max_page_age, page_age,
                                     page_text, qa_page, record_page, states, subject_of, value_text)

CASES = ("stated", "absent", "conflict")
CASE_SHARES = (0.60, 0.25, 0.15)  # stated, absent, conflicting; the remainder after rounding goes to "stated"
PAGES = 5  # search_results per question (Tasks 1/2)
MAX_ITEMS = 3  # longer list answers are skipped: a gate example should have one checkable answer
MAX_ANSWER_CHARS = 60
DEFAULT_OUT = "data/gate/gate_questions.jsonl"
REPO = Path(__file__).resolve().parents[2]
# The bundled sets the gate is reported on and never fitted on (`evaluation.sets`): no question of theirs is asked.
REPORTED = tuple(dict.fromkeys(s.data for s in held_out_sets(GATE).values() if not s.crag_file))
_MULTI_HOP = {"director_birthday", "open_founder_birthplace", "open_founder_born", "open_capital_population",
              "open_capital_country", "open_largest_city_population"}  # a second lookup on the first one's answer
_SPLIT_ORDER = ("heldout_entities", "heldout_templates", "train")  # preference when picking questions


# ------------------------------------------------------------------------------------------------ formatting


# ------------------------------------------------------------------------------------------------ facts

def kg_facts(kg: FixtureKG, catalogue: Sequence[Template] | None = None) -> dict[str, list[Fact]]:
    """template id -> one `Fact` per filling, in `generate`'s order (filling n is examples `<id>-<n>-*`)."""
    facts = {}
    for template in catalogue or templates():
        facts[template.id] = [
            Fact(template.id, template.domain, tuple(sorted((k, str(v)) for k, v in f.slots.items())),
                 subject_of(f.slots, f.entities), label_of(template.id), value_text(f.expected), tuple(f.expected))
            for f in template.fill(kg)]
    return facts


def _usable(expected: Sequence) -> bool:
    if not expected or len(expected) > MAX_ITEMS or any(v is None or str(v).strip() == "" for v in expected):
        return False
    return len(value_text(expected)) <= MAX_ANSWER_CHARS


def default_protected() -> set[str]:
    """The in-context pool's entities, never held out (`training.template_data.split_for_pool`'s split)."""
    from models.kg.config import KGConfig
    from models.kg.examples import ExamplePool
    from models.paths import resolve_repo_path
    from training.api_templates import program_entities

    pool = ExamplePool.load(resolve_repo_path(KGConfig().icl_pool))
    return program_entities(e.program for e in pool.examples)


def pick_questions(examples: Sequence[TemplateExample], splits: dict[str, list[TemplateExample]],
                   per_template: int, seed: int, exclude: Iterable[str] = ()) -> list[tuple[TemplateExample, str]]:
    """(example, split) pairs: per template at most `per_template`, held-out splits first, one phrasing per
    filling, never a question in `exclude` (compared lower-cased); in `examples`' order."""
    excluded = {q.strip().lower() for q in exclude}
    split_of = {e.id: name for name in _SPLIT_ORDER for e in splits.get(name, [])}
    rng = random.Random(f"{seed}-pick")
    by_template: dict[str, list[TemplateExample]] = {}
    for example in examples:
        if example.id in split_of and _usable(example.expected) and example.query.strip().lower() not in excluded:
            by_template.setdefault(example.template, []).append(example)
    chosen = set()
    for template, candidates in by_template.items():
        candidates = list(candidates)
        rng.shuffle(candidates)
        candidates.sort(key=lambda e: _SPLIT_ORDER.index(split_of[e.id]))  # stable: shuffled within a split
        fillings = set()
        for example in candidates:
            filling = example.id.rsplit("-", 1)[0]
            if filling in fillings:
                continue
            fillings.add(filling)
            chosen.add(example.id)
            if len(fillings) >= per_template:
                break
    return [(e, split_of[e.id]) for e in examples if e.id in chosen]


# ------------------------------------------------------------------------------------------------ pages


# ------------------------------------------------------------------------------------------------ records

def _question_type(example: TemplateExample, slots: tuple) -> str:
    keys = {k for k, _ in slots}
    if len(example.expected) > 1:
        return "set"
    if any(w in example.template for w in ("count", "average", "size")):
        return "aggregation"
    if example.template in _MULTI_HOP:
        return "multi-hop"
    return "simple_w_condition" if keys & {"date", "month"} else "simple"


def _static_or_dynamic(example: TemplateExample) -> str:
    if example.domain == "finance":
        return "real-time" if example.template.startswith(("info_", "close_yesterday")) else "fast-changing"
    if example.template.endswith(("_last_opponent", "_last_points", "_last_goals", "_next_opponent", "_next_date")):
        return "fast-changing"
    return "static"


def _wrong_value(fact: Fact, others: Sequence[Fact], answers: Sequence[str], rng: random.Random) -> Fact | None:
    """A wrong value for the asked attribute: another subject's, else the number nudged; None if neither."""
    candidates = [o for o in others if not states(o.value, answers) and not states(fact.value, [o.value])]
    if candidates:
        return Fact(fact.template, fact.domain, fact.subject_key, fact.subject, fact.label,
                    rng.choice(candidates).value, ())
    if len(fact.expected) == 1 and isinstance(fact.expected[0], (int, float)) and not isinstance(fact.expected[0],
                                                                                                   bool):
        number = fact.expected[0]
        nudged = number + rng.choice((1, 2, 3)) if isinstance(number, int) else round(number * 1.07, 2)
        return Fact(fact.template, fact.domain, fact.subject_key, fact.subject, fact.label,
                    value_text([nudged]), ())
    return None


def build_record(n: int, example: TemplateExample, split: str, case: str, facts: dict[str, list[Fact]],
                 by_subject: dict[tuple, list[Fact]], other_phrasings: Sequence[str], unrelated: Sequence[Fact],
                 seed: int) -> dict | None:
    """One CRAG record with five pages for `case`, or None when `case` cannot be built for this question."""
    rng = random.Random(f"{seed}-{example.id}-{case}")
    filling = int(example.id.rsplit("-", 2)[1])
    fact = facts[example.template][filling]
    answer, alts = gold_answer(example.expected)
    answers = [answer, *alts]
    qt = example.query_time
    if states(f"{fact.subject} {fact.label}", answers):
        return None  # the answer is in the name itself ("the exact title of inception"): no page can leave it out
    # Near misses: the same attribute of other subjects, and the same subject's other attributes; neither
    # may state the gold (a count of 2 beside another team's 2 would make "absent" answerable).
    same_label = [f for i, f in enumerate(facts[example.template])
                  if i != filling and not states(f.value, answers) and f.subject_key != fact.subject_key
                  and not is_future(f, qt)]
    siblings = [f for f in by_subject.get(fact.subject_key, []) if f.template != example.template
                and not states(f.value, answers) and f.label != fact.label]
    rng.shuffle(same_label)
    rng.shuffle(siblings)
    pages = []
    if case == "stated":
        own = [fact] + siblings[:rng.randint(1, 3)]
        rng.shuffle(own)
        pages.append(record_page(fact.subject, own, example.domain, qt, page_age(fact, qt, 5, 200, rng), rng))
        if other_phrasings and rng.random() < 0.5:
            pages.append(qa_page(rng.choice(other_phrasings), fact, qt, page_age(fact, qt, 5, 400, rng), rng))
        elif same_label and rng.random() < 0.5:
            rows = [fact] + same_label[:rng.randint(2, 4)]
            rng.shuffle(rows)
            pages.append(comparison_page(fact.label, rows, example.domain, qt,
                                              min(page_age(r, qt, 5, 300, rng) for r in rows), rng))
    elif case == "absent":
        if siblings:
            pages.append(record_page(fact.subject, siblings[:rng.randint(2, 4)], example.domain, qt,
                                     page_age(fact, qt, 5, 200, rng), rng))
        if len(siblings) > 4:
            pages.append(record_page(fact.subject, siblings[4:7], example.domain, qt, page_age(fact, qt, 5, 300, rng),
                                     rng))
        if not pages:
            return None  # nothing else is known about this subject: the pages would not be "about the entity"
    else:
        wrong = _wrong_value(fact, same_label, answers, rng)
        if wrong is None:
            return None
        # the wrong value is on the older page; both are written after the day they report (`_max_age`)
        cap = max_page_age(fact, qt)
        if cap < 2:
            return None
        old = rng.randint(min(700, max(2, cap // 2)), cap)
        new = rng.randint(1, min(120, old - 1))
        pages.append(record_page(fact.subject, [wrong] + siblings[:rng.randint(0, 2)], example.domain, qt, old,
                                 rng))
        pages.append(record_page(fact.subject, [fact] + siblings[2:rng.randint(2, 4)], example.domain, qt, new,
                                 rng))
    # Fill to five: near misses first (another subject's record with the same attribute, a comparison table
    # without the asked subject, the subject's other attributes), then one unrelated page.
    while len(pages) < PAGES - 1 and same_label:
        if len(same_label) >= 3 and rng.random() < 0.4:
            rows, same_label = same_label[:3], same_label[3:]
            pages.append(comparison_page(fact.label, rows, example.domain, qt,
                                              min(page_age(r, qt, 5, 600, rng) for r in rows), rng))
        else:
            other = same_label.pop()
            extra = [f for f in by_subject.get(other.subject_key, []) if f.template != example.template
                     and not states(f.value, answers)][:2]
            pages.append(record_page(other.subject, [other] + extra, example.domain, qt,
                                     page_age(other, qt, 5, 600, rng), rng))
    while len(pages) < PAGES:
        stranger = rng.choice(unrelated)
        if states(stranger.value + " " + stranger.subject, answers) or is_future(stranger, qt):
            continue
        pages.append(record_page(stranger.subject, [stranger], stranger.domain, qt,
                                     page_age(stranger, qt, 5, 900, rng), rng))
    rng.shuffle(pages)
    if case == "absent" and any(states(page_text(p), answers) for p in pages):
        return None  # e.g. the asked number is part of the subject's date: the page would "state" it
    if case != "absent" and not any(states(page_text(p), [answer]) for p in pages):
        return None
    return {"interaction_id": f"gate-{n:03d}", "query_time": qt, "domain": example.domain,
            "question_type": _question_type(example, fact.subject_key),
            "static_or_dynamic": _static_or_dynamic(example), "query": example.query, "answer": answer,
            "alt_ans": alts, "split": 0, "popularity": "torso", "search_results": pages, "gate_case": case,
            "template": example.template, "template_split": split}


def gate_questions(kg: FixtureKG, seed: int = 0, per_template: int = 2, exclude: Iterable[str] = (),
                   protected: Iterable[str] | None = None) -> list[dict]:
    """The gate's questions as CRAG records, each with five pages and its `gate_case` (module docstring).

    Args:
        per_template: questions per template at most (about 150 templates with short answers; 2 gives ~290).
        exclude: questions never to ask (those of the sets the gate is reported on); besides, no question that shares
            its entity and gold answer with one of those sets (`training.gate.held_out`), whatever its words.
        protected: entities never held out (default: the in-context pool's, the CPU adapter's split).
    """
    from training.gate.held_out import held_out_questions, question, sharing

    examples = generate(kg, seed=seed)
    splits = split_examples(examples, default_protected() if protected is None else protected, seed=seed)
    # a reported set's question in other words (the same entity and gold answer) is excluded as its own words are
    content = sharing([question("gate_web", {"id": e.id, "query": e.query, "expected": list(e.expected)})
                       for e in examples], held_out_questions())
    exclude = {*exclude, *(e.query for e in examples if e.id in content)}
    picked = pick_questions(examples, splits, per_template, seed, exclude)
    facts = kg_facts(kg)
    by_subject: dict[tuple, list[Fact]] = {}
    for template_facts in facts.values():
        for fact in template_facts:
            if _usable(fact.expected) or len(fact.expected) <= 6:
                by_subject.setdefault(fact.subject_key, []).append(fact)
    phrasings: dict[str, list[str]] = {}
    for example in examples:
        phrasings.setdefault(example.id.rsplit("-", 1)[0], []).append(example.query)
    rng = random.Random(f"{seed}-cases")
    order = list(range(len(picked)))
    rng.shuffle(order)
    stated_n, absent_n = round(len(picked) * CASE_SHARES[0]), round(len(picked) * CASE_SHARES[1])
    case_of = {i: CASES[0] if k < stated_n else CASES[1] if k < stated_n + absent_n else CASES[2]
               for k, i in enumerate(order)}
    records = []
    for i, (example, split) in enumerate(picked):
        unrelated = [f for t, fs in facts.items() for f in fs[:2] if f.domain != example.domain and _usable(
            f.expected)]
        others = [q for q in phrasings[example.id.rsplit("-", 1)[0]] if q != example.query]
        record = None
        for case in dict.fromkeys((case_of[i], "stated")):  # a case that cannot be built falls back to "stated"
            record = build_record(len(records), example, split, case, facts, by_subject, others, unrelated, seed)
            if record is not None:
                break
        if record is not None:
            records.append(record)
    return records


def to_jsonl(records: Iterable[dict]) -> str:
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)


def write_gate_data(records: Sequence[dict], path: str | Path) -> int:
    """`records` written to `path` (replaced) as JSONL; returns how many."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(to_jsonl(records), encoding="utf-8")
    return len(records)


def reported_questions(paths: Iterable[str | Path]) -> set[str]:
    """The questions of the sets the gate is reported on (any JSONL with a `query`), lower-cased."""
    return {query for path in paths for query in read_jsonl(path, lambda row: row["query"].strip().lower())}


def build(seed: int = 0, per_template: int = 2) -> str:
    """The JSONL text of the gate's questions (what `--check` compares with the committed file)."""
    return to_jsonl(gate_questions(FixtureKG.load(), seed=seed, per_template=per_template,
                                   exclude=reported_questions(REPO / p for p in REPORTED)))


def make_gate_web_questions(out: str | Path = REPO / DEFAULT_OUT, seed: int = 0, per_template: int = 2,
                            check: bool = False) -> int:
    """Builds the questions and writes them to `out`, printing the counts by case and domain; with `check`, compares
    them with `out` instead. Returns the exit status: 1 when `check` finds `out` differs, else 0."""
    from training.built_file import write_or_check

    text = build(seed, per_template)
    checked = write_or_check(text, out, "scripts/make_gate_web_questions.py", check)
    if checked is not None:
        return checked
    records = [json.loads(line) for line in text.splitlines()]
    cases = Counter((r["gate_case"], r["domain"]) for r in records)
    print(f"{len(records)} questions, {len(text.encode('utf-8'))} bytes written to {out}")
    for case in ("stated", "absent", "conflict"):
        print(f"  {case}: " + ", ".join(f"{d} {n}" for (c, d), n in sorted(cases.items()) if c == case))
    return 0
