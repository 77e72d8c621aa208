"""Answer-in-context recall: does the evidence an answer was made from hold the gold answer at all?

Several gold answers are sentences, and some short ones are meaningless as substrings ("yes", "en", "nan").
Each question therefore gets *key strings*, derived from its gold answer at run time by one stated rule
(`answer_keys`), or read from an annotation file that lives beside the data (`load_key_annotations`; the
package ships no CRAG gold answers, so it ships no keys for them either):
- A short gold answer (at most four words): one key whose spellings are the gold answer and its alternatives
  of at most four words (found if any spelling is), dropping yes/no/nan/refusals.
- A sentence: one key per fact the sentence adds to the question. The sentence is cut into pieces at
  punctuation (a comma inside a number such as "1,204" is not a cut) and at linking words ("and", "or",
  "with", "by", "in", "of", ...); in each piece the stop words and the words the question already has (same
  word, or one is a prefix of the other: "yields" / "yield") are dropped, and each remaining run of
  consecutive words is a key when it has two or more words, holds a digit, or is all that is left of its
  piece (a one-word list item such as a company name) and is not a verb form in -ed / -ing. A false-premise
  question's sentence denies the question and gives no keys.
A key is found when one of its spellings is stated as a whole phrase (case, punctuation and spacing aside:
"4" is not found in "14" or "4.5") in the text. Used by the web benchmarks (`evaluation/bench/recall.py`: the web
context) and the mode comparison (`evaluation/experiments/modes.py`: the context and exact values every answer attempt read,
from a run's traces).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Iterable, Mapping

from evaluation.normalize import same_word
from models.jsonl import read_jsonl
from models.omni.consolidate import states_value

Key = tuple[str, ...]  # the spellings of one fact; found if any spelling is
NOT_KEYS = frozenset({"yes", "no", "nan", "en", "invalid question", "i don't know"})


# Words that carry no fact of their own: articles, auxiliaries, pronouns, hedges and quantity words.
STOP_WORDS = frozenset(
    "a an the is are was were be been being has have had do does did it its this that these those there their "
    "they he she his her him them we our you your i me my who whom which what when where how than then as at to "
    "on some each only about over under more most less least very also just such other one ones both all any "
    "not no never despite though although".split())
# Linking words that end one fact and start the next ("route 9 in ohio", "acme, globex, and initech").
LINK_WORDS = frozenset("and or with by in of from for".split())
# Clause punctuation; a comma between digits ("1,204") or a point inside a number is part of the number.
_CUTS = re.compile(r"(?<!\d)[,.](?!\d)|,(?=\s)|[;:()\[\]!?\"]|\.$")
_WORD = re.compile(r"[a-z0-9][a-z0-9&'.%$,-]*[a-z0-9%]|[a-z0-9]")


def _known(word: str, question_words: set[str]) -> bool:
    """Whether the question already says `word` (`same_word`: "yields" for "yield")."""
    return any(same_word(word, q) for q in question_words)


def sentence_keys(answer: str, question: str = "") -> list[Key]:
    """The facts a sentence-long gold answer adds to its question, one key each (the rule in the module doc)."""
    question_words = set(_WORD.findall(question.lower()))
    keys: list[Key] = []
    for piece in _CUTS.split(answer.lower()):
        runs, run = [], []
        for word in _WORD.findall(piece) + [""]:
            if word and word not in LINK_WORDS and word not in STOP_WORDS and not _known(word, question_words):
                run.append(word)
                continue
            if run:
                runs.append(" ".join(run))
            run = []
            if word in LINK_WORDS:  # a linking word starts a new piece
                keys += _kept(runs)
                runs = []
        keys += _kept(runs)
    return list(dict.fromkeys(keys))


def _kept(runs: list[str]) -> list[Key]:
    return [(run,) for run in runs if " " in run or any(c.isdigit() for c in run)
            or len(runs) == 1 and not run.endswith(("ed", "ing"))]  # a lone "directed" is no fact


def answer_keys(example: Mapping, min_chars: int = 1) -> list[Key]:
    """The question's keys (see the module docstring); [] when no spelling can be looked for. `min_chars`: the
    shortest spelling kept (bench_web.py keeps 3, as substring matching needs). An example with `answer_keys`
    (a list of strings, from an annotation file) uses those instead of the rule."""
    annotated = example.get("answer_keys")
    if annotated:
        return [(str(k).strip().lower(),) for k in annotated if len(str(k).strip()) >= min_chars]
    answer = example.get("answer", "")
    answer = answer.strip().lower() if isinstance(answer, str) else ""
    if len(answer.split()) > 4:
        if example.get("question_type") == "false_premise":
            return []  # the sentence denies the question; nothing in it is a fact to look for
        return [key for key in sentence_keys(answer, str(example.get("query", "")))
                if len(key[0]) >= min_chars and key[0] not in NOT_KEYS]
    spellings = [answer] + list(example.get("alt_ans") or example.get("gold_alternatives") or [])
    spellings = [s.strip().lower() for s in spellings if isinstance(s, str)]
    key = tuple(dict.fromkeys(s for s in spellings if len(s.split()) <= 4 and len(s) >= min_chars
                              and s not in NOT_KEYS))
    return [key] if key else []


def load_key_annotations(path: str | Path) -> dict[str, list[str]]:
    """interaction_id -> key strings, from a JSONL file of {"interaction_id": ..., "answer_keys": [...]} rows
    kept beside the data (never in the repository).

    Raises:
        ValueError: a line that is not such a row, with its line number.
    """
    return dict(read_jsonl(path, _key_row, what="not an answer-keys row"))


def _key_row(row) -> tuple[str, list[str]]:
    iid, strings = str(row["interaction_id"]), row["answer_keys"]
    if not isinstance(strings, list) or not all(isinstance(k, str) and k.strip() for k in strings):
        raise TypeError("answer_keys is not a list of non-empty strings")
    return iid, strings


def found(keys: Iterable[Key], texts: Iterable[str]) -> int:
    """How many keys one of `texts` states."""
    texts = [t for t in texts if t]
    return sum(any(states_value(text, spelling) for spelling in key for text in texts) for key in keys)
