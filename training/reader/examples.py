"""The answer reader's training examples: (question, candidate answer, evidence passage, right or wrong).

    examples = build(read_jsonl("data/gate/gate_questions.jsonl", dict), runs=["outputs/gate-fit/cpu/gate_web"])
    Path("data/reader/reader_examples.jsonl").write_text(rows_text(examples))

Where they come from, all from the answer gate's own fit sets (`evaluation.sets.fit_sets(GATE)`):
- `traced`: the candidates of traced runs of the fit sets (`make gate` collects them into outputs/gate-fit/), each
  labelled by the package's deterministic judge against the gold answer, with the chunks the trace saved as its
  evidence; the reader reads the pathways the profile names (`verifier.reader_pathways`);
- `stated`: the fit set of web questions (data/gate/) states its gold answer in its own pages: the gold form the
  pages write, with the pages as evidence, is a right candidate (no model needed, so the data rebuilds from a
  fresh clone);
- `absent`: its questions whose pages state no answer: a value of the gold's kind read off the pages is wrong;
- the TinyLettuce errors made from every right candidate (training/reader/errors.py), one per candidate, the recipe
  drawn by the seeded generator: another entity of the same kind from the same evidence, a changed number or date,
  the answer moved to a question it does not answer, the stating sentence made to say the opposite.

No question any reported set asks (`evaluation.sets.reported_sets`; the same entity and fact in any words, by the
held-out rule `training/gate/held_out.py`) is used. Examples of one question stay on one side of the split
(`held_out`: about a fifth of the questions, by a hash of the question's id), so the held-out loss and F1 are
measured on questions the reader never read.
"""
from __future__ import annotations

import hashlib
import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Iterable, Mapping, Sequence

from models.text import answer_key
from models.verify.reader import passage
from training.reader import errors

HELD_OUT_SHARE = 20  # percent of the questions held out of training
WEB_QUESTIONS = "data/gate/gate_questions.jsonl"
OUTPUT = "data/reader/reader_examples.jsonl"
RECIPES = ("other_entity", "changed_value", "moved_answer", "opposite_sentence")


@dataclass(frozen=True)
class ReaderExample:
    group: str  # the question's id: a question's examples stay on one side of the split
    origin: str  # traced | stated | absent | one of RECIPES
    query: str
    answer: str
    passage: str
    label: int  # 1 right, 0 wrong
    split: str  # train | held_out


@dataclass(frozen=True)
class Base:
    """A candidate before its passage is cut: the question, the answer, every evidence text, the label."""

    group: str
    origin: str
    query: str
    answer: str
    evidence: tuple[str, ...]
    label: int


def split_of(group: str) -> str:
    return "held_out" if int(hashlib.sha256(group.encode("utf-8")).hexdigest()[:8], 16) % 100 < HELD_OUT_SHARE \
        else "train"


def page_texts(row: Mapping) -> tuple[str, ...]:
    """A CRAG row's pages as the web pathway reads them: each page's main text and its tables."""
    from models.web.extraction import extract_page

    texts = []
    for page in row.get("search_results") or ():
        extracted = extract_page(page.get("page_result") or "", page.get("page_name") or "", backend="selectolax")
        texts.extend(t for t in (extracted.text, *extracted.tables) if t.strip())
    return tuple(texts)


def stated_form(row: Mapping, evidence: Sequence[str]) -> str | None:
    """The gold answer as the pages write it (the answer or an alternative whose words they hold), else None."""
    held = f" {answer_key(' '.join(evidence))} "
    for gold in (row.get("answer"), *(row.get("alt_ans") or ())):
        key = answer_key(str(gold or ""))
        if key and f" {key} " in held:
            return str(gold)
    return None


def web_question_bases(rows: Iterable[Mapping], rng: random.Random) -> list[Base]:
    """Right candidates stated by the web questions' own pages, and wrong ones read off pages that state none."""
    bases = []
    for row in rows:
        evidence, group = page_texts(row), f"web:{row['interaction_id']}"
        if row.get("gate_case") == "absent":
            wrong = errors.other_entity(row["query"], str(row.get("answer", "")), evidence, rng)
            if wrong:
                bases.append(Base(group, "absent", row["query"], wrong, evidence, 0))
            continue
        form = stated_form(row, evidence)
        if form:
            bases.append(Base(group, "stated", row["query"], form, evidence, 1))
    return bases


def traced_bases(run_dirs: Iterable[str | Path], pathways: Sequence[str]) -> list[Base]:
    """Every candidate of `pathways` the gate could keep in the runs' traces, labelled by the judge."""
    from evaluation.run_dir import RunDir
    from models.verify.gate import candidate_answer
    from training.gate.fit import judged

    bases = []
    for run_dir in run_dirs:
        for record in RunDir(run_dir).records():
            for attempt in (record.get("trace") or {}).get("attempts", []):
                answer = candidate_answer((attempt.get("verifier") or {}).get("scores") or {})
                if answer is None or attempt.get("pathway") not in pathways:
                    continue
                evidence = tuple(c.get("text", "") for c in attempt.get("chunks") or ())
                label = judged(record.get("query", ""), record.get("gold", ""), record.get("alt_ans") or [], answer)
                bases.append(Base(f"{Path(run_dir).name}:{record.get('interaction_id')}", "traced",
                                  record.get("query", ""), answer, evidence, label))
    return bases


def reported_questions():
    """Every question of every bundled reported set, in the held-out rule's form."""
    from training.gate.held_out import BUNDLED_REPORTED, read_set

    return [q for name in BUNDLED_REPORTED for q in read_set(name)]


def without_reported(bases: Sequence[Base], golds: Mapping[str, Mapping]) -> list[Base]:
    """`bases` less every question a reported set asks (`golds`: group -> the question's row, with its gold)."""
    from training.gate.held_out import questions, sharing

    rows = [{"interaction_id": group, "query": row["query"], "answer": row.get("answer", ""),
             "alt_ans": row.get("alt_ans") or []} for group, row in sorted(golds.items())]
    shared = sharing(questions("reader", rows), reported_questions())
    return [b for b in bases if b.group not in shared]


def synthetic_errors(rights: Sequence[Base], rng: random.Random) -> list[Base]:
    """One TinyLettuce error per right candidate, its recipe drawn among those that apply to it."""
    queries, answers = [b.query for b in rights], [b.answer for b in rights]
    made = []
    for index, base in enumerate(rights):
        options = []
        for recipe in RECIPES:
            if recipe == "other_entity":
                wrong = errors.other_entity(base.query, base.answer, base.evidence, rng)
                options.append((recipe, base.query, wrong, base.evidence) if wrong else None)
            elif recipe == "changed_value":
                wrong = errors.changed_value(base.answer, rng)
                options.append((recipe, base.query, wrong, base.evidence) if wrong else None)
            elif recipe == "moved_answer":
                other = errors.moved_answer(index, queries, answers, rng)
                options.append((recipe, other, base.answer, base.evidence) if other else None)
            else:
                opposite = errors.opposite_sentence(base.answer, base.evidence)
                options.append((recipe, base.query, base.answer, opposite) if opposite else None)
        options = [o for o in options if o is not None]
        if options:
            recipe, query, answer, evidence = rng.choice(options)
            made.append(Base(base.group, recipe, query, answer, evidence, 0))
    return made


def build(web_rows: Sequence[Mapping], runs: Sequence[str | Path] = (), pathways: Sequence[str] | None = None,
          seed: int = 0) -> list[ReaderExample]:
    """Every example, in a stable order (by question, then origin, answer and passage); traced candidates of
    `pathways` (default: those the reader reads, `verifier.reader_pathways`)."""
    from models.verify.config import VerifierConfig

    pathways = VerifierConfig().reader_pathways if pathways is None else pathways
    rng = random.Random(seed)
    golds = {f"web:{row['interaction_id']}": row for row in web_rows}
    bases = web_question_bases(web_rows, rng)
    if runs:
        traced = traced_bases(runs, pathways)
        golds.update(_traced_golds(runs))
        bases += traced
    bases = without_reported(bases, golds)
    bases += synthetic_errors([b for b in bases if b.label == 1], rng)
    examples = {ReaderExample(b.group, b.origin, b.query, b.answer, passage(b.query, b.answer, b.evidence), b.label,
                              split_of(b.group)) for b in bases}
    return sorted(examples, key=lambda e: (e.group, e.origin, e.answer, e.passage, e.query))


def _traced_golds(runs: Sequence[str | Path]) -> dict[str, Mapping]:
    from evaluation.run_dir import RunDir

    return {f"{Path(run).name}:{r.get('interaction_id')}": {"query": r.get("query", ""), "answer": r.get("gold", ""),
                                                           "alt_ans": r.get("alt_ans") or []}
            for run in runs for r in RunDir(run).records()}


def rows_text(examples: Iterable[ReaderExample]) -> str:
    """The examples as JSONL (sorted keys, no timestamps: the same examples give the same bytes)."""
    return "".join(json.dumps(asdict(e), ensure_ascii=False, sort_keys=True) + "\n" for e in examples)


def read_examples(path: str | Path) -> list[ReaderExample]:
    from models.jsonl import read_jsonl

    return read_jsonl(path, lambda row: ReaderExample(**row), what="reader examples")


def make_reader_data(out: str | Path, runs: Sequence[str | Path] = (), seed: int = 0, check: bool = False) -> int:
    """Builds the examples from the web questions (and `runs`' traces) and writes them to `out`, printing the counts
    by origin and split; with `check`, compares them with `out` instead. Returns 1 when `check` finds `out`
    differs, else 0."""
    from collections import Counter

    from models.jsonl import read_jsonl
    from models.paths import REPO_ROOT
    from training.built_file import write_or_check

    examples = build(read_jsonl(REPO_ROOT / WEB_QUESTIONS, lambda row: row), runs, seed=seed)
    text = rows_text(examples)
    checked = write_or_check(text, out, "scripts/make_reader_data.py", check)
    if checked is not None:
        return checked
    counts = Counter((e.origin, e.split, e.label) for e in examples)
    print(f"{len(examples)} examples ({sum(e.label for e in examples)} right), {len(text.encode('utf-8'))} bytes "
          f"written to {out}")
    for origin in ("traced", "stated", "absent", *RECIPES):
        shown = ", ".join(f"{split} {'right' if label else 'wrong'} {n}"
                          for (o, split, label), n in sorted(counts.items()) if o == origin)
        if shown:
            print(f"  {origin}: {shown}")
    return 0
