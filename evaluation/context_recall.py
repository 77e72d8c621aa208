"""Answer-in-context recall: does the evidence an answer was made from hold the gold answer at all?

Several gold answers are sentences, and some short ones are meaningless as substrings ("yes", "en", "nan").
Each question therefore gets *key strings*: for the known dev questions the entities of the gold answer
(`KEYS`), each its own key; otherwise one key whose spellings are the gold answer and its alternatives (found if
any spelling is), keeping spellings of at most four words that are not yes/no/nan/refusals. A key is found when
one of its spellings is stated as a whole phrase (case, punctuation and spacing aside: "4" is not found in "14"
or "4.5") in the text. Used by scripts/bench_web.py (the web context) and scripts/compare_modes.py (the context
and exact values every answer attempt read, from a run's traces).
"""
from __future__ import annotations

from typing import Iterable, Mapping

from models.omni.consolidate import states_value

# Entities of the gold answers of ../shared/crag/dev_data.jsonl.bz2 (by interaction_id prefix).
KEYS = {
    "55b219e5": ["salesforce"],
    "6a9a6e0f": ["jennifer aniston", "kim kardashian", "selena gomez"],
    "1645bfaf": ["hess midstream", "xerox", "at&t"],
    "db078969": ["i-878", "3,696"],
    "d535abd8": ["carol forman"],
    "1d2e8c37": ["universal pictures"],
}
Key = tuple[str, ...]  # the spellings of one fact; found if any spelling is
NOT_KEYS = frozenset({"yes", "no", "nan", "en", "invalid question", "i don't know"})


def answer_keys(example: Mapping, min_chars: int = 1) -> list[Key]:
    """The question's keys (see the module docstring); [] when no spelling can be looked for. `min_chars`: the
    shortest spelling kept (bench_web.py keeps 3, as substring matching needs)."""
    known = KEYS.get(str(example.get("interaction_id", ""))[:8])
    if known:
        return [(k,) for k in known]
    spellings = [example.get("answer", "")] + list(example.get("alt_ans") or example.get("gold_alternatives") or [])
    spellings = [s.strip().lower() for s in spellings if isinstance(s, str)]
    key = tuple(dict.fromkeys(s for s in spellings if len(s.split()) <= 4 and len(s) >= min_chars
                              and s not in NOT_KEYS))
    return [key] if key else []


def found(keys: Iterable[Key], texts: Iterable[str]) -> int:
    """How many keys one of `texts` states."""
    texts = [t for t in texts if t]
    return sum(any(states_value(text, spelling) for spelling in key for text in texts) for key in keys)
