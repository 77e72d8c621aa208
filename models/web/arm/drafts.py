"""Multiple alignment drafts (ARM §3.2.2, "Constructing multiple alignment drafts").

The base set (the most relevant objects) may miss what a list answer or a bridge needs, so it is expanded in
several ways and the MIP is solved on each: expansion step 0 is the base set itself, step l adds, for every
object added at step l - 1, its `per_step` most compatible objects of the pool not already in. Each expanded set
gives one draft: the MIP's k objects and their links.

A draft is shown to the verifier as ARM injects it: each object as "[id] page title", then only its `rows` units
(sentences or table rows) most similar to the question, then one line per link ("... in [a] connects with ...
in [b]"). Ids are 1-based positions in the draft, which is what the verifier's grammar allows.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from models.web.arm.mip import Selection, select
from models.web.arm.structure import Compatibility


def expand(base: Sequence[int], compatibility: np.ndarray, steps: int, per_step: int) -> list[int]:
    """`base` and, for `steps` rounds, each newly added object's `per_step` most compatible partners (positive
    compatibility only), in the order added."""
    members = list(dict.fromkeys(int(i) for i in base))
    frontier = list(members)
    for _ in range(steps):
        added: list[int] = []
        for i in frontier:
            taken = 0
            for j in np.argsort(-compatibility[i], kind="stable"):
                if taken == per_step or compatibility[i, j] <= 0:
                    break
                if int(j) not in members and int(j) not in added:
                    added.append(int(j))
                    taken += 1
        if not added:
            break
        members += added
        frontier = added
    return members


@dataclass
class Draft:
    """One expansion of the base set and the MIP's choice on it (indices into the pool)."""

    step: int
    candidates: list[int]
    selection: Selection

    @property
    def objects(self) -> list[int]:
        return self.selection.chosen

    def serialise(self, compatibility: Compatibility, titles: Sequence[str], question_vector: np.ndarray,
                  rows: int) -> str:
        """The draft as the verifier reads it (see the module docstring); `question_vector` is unit-norm."""
        lines = []
        for position, i in enumerate(self.objects, 1):
            units = compatibility.units[i]
            similarity = compatibility.vectors[compatibility.unit_indices(i)] @ question_vector
            keep = sorted(np.argsort(-similarity, kind="stable")[:rows].tolist())
            head = f" | columns: {' | '.join(units.headers)}" if units.is_table else ""
            lines.append(f"[{position}] {titles[i] or 'page'}{head}")
            lines.extend(f"  {units.texts[k][:300]}" for k in keep)
        ids = {i: position for position, i in enumerate(self.objects, 1)}
        for a, b in self.selection.links:
            lines.append(compatibility.link(a, b).describe(f"[{ids[a]}]", f"[{ids[b]}]"))
        return "\n".join(lines)

    def trace(self) -> dict:
        return {"step": self.step, "candidates": len(self.candidates), **self.selection.trace()}


def make_drafts(relevance: np.ndarray, compatibility: Compatibility, base_size: int, steps: Sequence[int],
                per_step: int, k: int, time_limit: float, compatibility_weight: float = 1.0) -> list[Draft]:
    """One draft per expansion step in `steps`: the MIP (relevance + weight x compatibility) on base + expansion."""
    base = np.argsort(-relevance, kind="stable")[:base_size].tolist()
    matrix = compatibility_weight * compatibility.matrix
    drafts = []
    for step in steps:
        candidates = expand(base, matrix, step, per_step)
        local = select(relevance[candidates], matrix[np.ix_(candidates, candidates)], k, time_limit=time_limit)
        chosen = [candidates[i] for i in local.chosen]
        links = [(candidates[a], candidates[b]) for a, b in local.links]
        drafts.append(Draft(step, candidates, Selection(chosen, links, local.status, local.seconds, local.objective)))
    return drafts
