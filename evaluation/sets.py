"""Every evaluation set of the package, declared once: its name, file, task, size, and what it is held out from
or in-sample for.

    from evaluation.sets import SETS, reported_sets, fit_sets
    SETS["kg_unseen"].suite().arguments()      # ['--task', '2', '--data', 'data/acceptance/kg_unseen.jsonl', ...]
    SETS["checkable"].held_out_from            # () : fitted on by the gate, and the KG adapter read its facts

A set is a data file read as one task (a `Suite`: with the grader's tokenizer, or another KG's sources, where it
needs them). The package fits or trains two things on its own data (`FITTED`): the calibrated answer gate
(`gate`, on the sets whose `fit_for` names it) and the KG adapter (`api_generation`, on templates generated from
the bundled KG). A reported set is `in_sample_for` what shares its questions (docs/results.md marks its figures
in-sample), and `held_out_from` the rest; `training/gate/held_out.py` checks each claim by content, question by
question. Every consumer reads this table: the current-results table (`evaluation.experiments.current_results`),
the grid's suites (`evaluation.experiments.grid`), the gate's fit sets (`training.gate.fit`), the held-out check
(`tests/verify/test_held_out.py`) and the table of sets in docs/results.md (`sets_table`). Adding a set is one
entry here.
"""
from __future__ import annotations

from dataclasses import dataclass

from evaluation.data import DEFAULT_DATA_PATH
from models import crag_data

GATE, KG_ADAPTER = "gate", "api_generation"
FITTED = (GATE, KG_ADAPTER)  # what the package fits or trains on its own data
# The tasks each one answers in: the gate checks every answer; Task 1 has no KG, so the KG adapter never runs there
# and a Task-1 set is neither held out from it nor in-sample for it.
RUNS_IN = {GATE: (1, 2, 3), KG_ADAPTER: (2, 3)}


@dataclass(frozen=True)
class Suite:
    """A data file read as one task: what `local_evaluation.py` is given to read a set."""

    data: str
    task: int
    tokenizer: str | None = None
    kg_source: str | None = None  # local_evaluation --kg-source: another KG's fixture-format sources

    def arguments(self, explicit: bool = False) -> list[str]:
        """The `local_evaluation.py` arguments that read this suite: those that differ from its defaults, or with
        `explicit` the task and the data always (a run's log then says what it read)."""
        args = []
        if explicit or self.task != 1:
            args += ["--task", str(self.task)]
        if explicit or self.data != DEFAULT_DATA_PATH:
            args += ["--data", self.data]
        if self.tokenizer:
            args += ["--tokenizer", self.tokenizer]
        if self.kg_source:
            args += ["--kg-source", self.kg_source]
        return args


@dataclass(frozen=True)
class EvalSet:
    name: str
    label: str  # the row heading of the results table
    data: str  # repo-relative, `$CRAG_DATA/<name>` (CRAG's own file), or a file its command generates (`generated`)
    task: int
    size: int  # questions in the file (tests/evaluation/test_sets.py counts them)
    about: str  # what it holds, for the table of sets
    tokenizer: str | None = None
    kg_source: str | None = None
    reported: bool = True  # a row of the current-results table
    fit_for: tuple[str, ...] = ()  # fitted or trained on it
    in_sample_for: tuple[str, ...] = ()  # reported, and shares questions with what these were fitted on
    generated: bool = False  # written by `make gate` into its collection folder before it is read

    def suite(self) -> Suite:
        return Suite(self.data, self.task, self.tokenizer, self.kg_source)

    @property
    def held_out_from(self) -> tuple[str, ...]:
        """What was fitted without any question of this set (checked by content: training/gate/held_out.py)."""
        return tuple(f for f in FITTED if self.task in RUNS_IN[f] and f not in self.in_sample_for + self.fit_for)

    @property
    def crag_file(self) -> bool:
        return crag_data.crag_name(self.data) is not None


SAMPLE_FILE = DEFAULT_DATA_PATH
SETS: dict[str, EvalSet] = {s.name: s for s in (
    EvalSet("sample", "bundled sample", SAMPLE_FILE, 1, 20,
            "questions written for this package in CRAG's format, 5 pages each"),
    EvalSet("dev", "real CRAG dev questions: the starter kit's `example_data/dev_data.jsonl.bz2`", crag_data.DEV_DATA,
            1, 10, "CRAG's real dev questions with their 5 real pages (not shipped: `$CRAG_DATA`)",
            tokenizer=crag_data.GRADER_TOKENIZER),
    EvalSet("task2", "Task-2 sample", SAMPLE_FILE, 2, 20, "the bundled sample with the bundled mock KG API",
            in_sample_for=(KG_ADAPTER,)),
    EvalSet("task3", "Task-3 sample", "data/sample/crag_sample_task3.jsonl", 3, 6, "questions with 50 pages each",
            in_sample_for=(KG_ADAPTER,)),
    EvalSet("kg_wordings", "KG wordings", "data/acceptance/kg_wordings.jsonl", 2, 43,
            "Task-2 questions in wordings the KG question generator never saw",
            fit_for=(GATE,), in_sample_for=(GATE, KG_ADAPTER)),
    EvalSet("kg_unseen", "unseen KG", "data/acceptance/kg_unseen.jsonl", 2, 62,
            "questions over a second KG whose entities the bundled one never names", kg_source="data/kg_acceptance"),
    EvalSet("checkable", "checkable answers", "data/acceptance/checkable.jsonl", 2, 30,
            "choice, yes/no and aggregation questions, 12 of them traps",
            fit_for=(GATE,), in_sample_for=(GATE, KG_ADAPTER)),
    EvalSet("public_sql", "public data in SQL", "data/acceptance/public_sql.jsonl", 1, 37,
            "counts, comparisons and aggregates over the public-data tables", fit_for=(GATE,), in_sample_for=(GATE,)),
    EvalSet("gate_kg", "gate: KG questions", "gate_kg_questions.jsonl", 2, 429,
            "KG template questions over the bundled KG, unseen wordings first (training/gate/kg_questions.py)",
            reported=False, fit_for=(GATE,), generated=True),
    EvalSet("gate_web", "gate: web questions", "data/gate/gate_questions.jsonl", 1, 270,
            "answers read from pages rendered from the bundled KG: stated, absent, conflicting",
            reported=False, fit_for=(GATE,)),
)}


def reported_sets() -> dict[str, EvalSet]:
    """The sets of the current-results table, in its order."""
    return {name: s for name, s in SETS.items() if s.reported}


def fit_sets(fitted: str) -> dict[str, EvalSet]:
    """The sets `fitted` (`GATE`) is fitted on: its own sets first, then the reported ones (the order `make gate`
    collects and fits them in)."""
    chosen = [s for s in SETS.values() if fitted in s.fit_for]
    return {s.name: s for s in sorted(chosen, key=lambda s: s.reported)}


def held_out_sets(fitted: str) -> dict[str, EvalSet]:
    """The reported sets `fitted` has never seen a question of: where its effect is measured out of sample."""
    return {name: s for name, s in reported_sets().items() if fitted in s.held_out_from}


def sets_table() -> str:
    """The Markdown table of every set, as docs/results.md shows it (between `<!-- sets:start -->` and
    `<!-- sets:end -->`; `scripts/current_results.py --render-only` writes it)."""
    def names(values: tuple[str, ...]) -> str:
        return ", ".join(f"`{v}`" for v in values) or "nothing"

    lines = ["| set | file | task | questions | what it holds | fitted on by | held out from | in-sample for |",
             "|---|---|---|---|---|---|---|---|"]
    for s in SETS.values():
        where = f"`{s.data}` (made by `make gate`)" if s.generated else f"`{s.data}`"
        lines.append(f"| `{s.name}`{'' if s.reported else ' (not reported)'} | {where} | {s.task} | {s.size} | "
                     f"{s.about} | {names(s.fit_for)} | {names(s.held_out_from) if s.reported else '–'} | "
                     f"{names(s.in_sample_for) if s.reported else '–'} |")
    return "\n".join(lines)
