"""No tracked file holds a question or gold answer of the real CRAG dev file: the package ships none of
CRAG's data (README), so the dev questions stay an honest held-out check.

The dev file is read at test time from $CRAG_DATA (never copied into the repository); the test prints only
counts and file names, never the matched text. Skipped, with its reason, where the file is absent: CRAG's data
is not shipped, by design. What counts as holding one (text compared lower-cased, every run of non-alphanumerics
as one space, whole words only):
- a question, whole;
- a gold answer or alternative, whole, when it is two words or more, or one word of eight characters or more
  ("yes", "en", "nan" are everyday words, not copies);
- four consecutive words of a sentence-long gold answer, two of them words of substance (not stop or linking
  words, not the question's), that its question does not have (a partial copy; "one of the most" is not one);
- a fact key of a gold answer (`evaluation.experiments.context_recall.answer_keys`) of ten characters or more, or one
  holding a digit and four characters or more (an entity or figure copied on its own);
- an interaction id, whole or by the eight-character prefix tests used to key on.
"""
from __future__ import annotations

import re
import subprocess
from collections import Counter

import pytest

from evaluation.experiments.context_recall import LINK_WORDS, STOP_WORDS, answer_keys
from evaluation.data import load_examples
from models import crag_data
from models.paths import REPO_ROOT
from tests.packaged import crag_file



def _norm(text: str) -> str:
    return " " + " ".join(re.sub(r"[^a-z0-9]+", " ", text.lower()).split()) + " "


def dev_needles(examples) -> list[tuple[str, str]]:
    """(kind, normalised text) pairs that a tracked file must not contain; see the module docstring."""
    needles = []
    for example in examples:
        question, answer = _norm(example["query"]), _norm(example["answer"])
        needles.append(("question", question))
        for gold in [answer] + [_norm(a) for a in example.get("alt_ans") or [] if isinstance(a, str)]:
            if len(gold.split()) >= 2 or len(gold.strip()) >= 8:
                needles.append(("gold answer", gold))
        words = answer.split()
        plain = STOP_WORDS | LINK_WORDS | set(question.split())
        for four in zip(*(words[i:] for i in range(4))):
            shingle = " " + " ".join(four) + " "
            if sum(word not in plain for word in four) >= 2 and shingle not in question:
                needles.append(("part of a gold answer", shingle))
        for (key, *_) in answer_keys(example):
            if len(key) >= 10 or any(c.isdigit() for c in key) and len(key) >= 4:
                needles.append(("gold fact", _norm(key)))
        iid = example["interaction_id"].lower()
        needles += [("interaction id", _norm(iid)), ("interaction id", _norm(iid[:8]))]
    return [(kind, text) for kind, text in dict.fromkeys(needles) if text.strip()]


def leaks(needles, texts: dict[str, str]) -> dict[str, Counter]:
    """file -> Counter(kind) of the needles each text holds."""
    found = {}
    for name, text in texts.items():
        text = _norm(text)
        kinds = Counter(kind for kind, needle in needles if needle in text)
        if kinds:
            found[name] = kinds
    return found


@pytest.fixture(scope="module")
def needles():
    return dev_needles(list(load_examples(crag_file(crag_data.DEV_FILE))))


def tracked_texts() -> dict[str, str]:
    names = subprocess.run(["git", "ls-files", "-z"], cwd=REPO_ROOT, capture_output=True, check=True).stdout
    texts = {}
    for name in filter(None, names.decode().split("\0")):
        path = REPO_ROOT / name
        if path.is_file():
            texts[name] = path.read_bytes().decode("utf-8", errors="ignore")
    return texts


def test_no_tracked_file_holds_a_dev_question_or_gold_answer(needles):
    found = leaks(needles, tracked_texts())
    report = "; ".join(f"{name}: " + ", ".join(f"{n} {kind}" for kind, n in sorted(kinds.items()))
                       for name, kinds in sorted(found.items()))
    assert not found, f"{len(found)} tracked files hold CRAG dev text (counts only): {report}"


def test_the_check_finds_a_copied_question_answer_and_id(needles):
    """The check itself works: each kind planted in a text is found (printed as counts only)."""
    questions = [n for kind, n in needles if kind == "question"]
    golds = [n for kind, n in needles if kind == "gold answer"]
    ids = [n for kind, n in needles if kind == "interaction id"]
    planted = {"q.py": f"# {questions[0].strip().upper()}?", "a.json": f'{{"gold": "{golds[-1].strip()}"}}',
               "i.txt": f"key {ids[1].strip()}-xxxx", "clean.md": "a question written for this package"}
    found = leaks(needles, planted)
    assert sorted(found) == ["a.json", "i.txt", "q.py"]
    assert found["q.py"]["question"] == 1 and found["i.txt"]["interaction id"] == 1
