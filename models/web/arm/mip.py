"""Structure alignment as a mixed-integer program (ARM §3.2.2), solved by HiGHS (`scipy.optimize.milp`).

    maximise   sum_i R_i b_i + sum_{i<j} C_ij c_ij
    subject to sum_i b_i = k,   sum_{i<j} c_ij <= k - 1,   c_ij <= b_i,   c_ij <= b_j,   b, c binary

b_i: object i is chosen; c_ij: the pair (i, j) is linked. The link budget k - 1 (a tree's worth; the paper's
2(k - 1) counts ordered pairs) rewards a chosen set that hangs together rather than k unrelated best objects.

Size is bounded before HiGHS sees the problem: only the `max_objects` most relevant objects enter, and each keeps
its `pairs_per_object` most compatible partners among them (a pair enters if either side keeps it), so 10,000
objects cost what `max_objects` do. HiGHS runs under `time_limit` seconds; when it proves no optimum in time,
its best feasible answer is used if it has one, otherwise the ranking (the k most relevant) is the answer and
`fallback` says so. Every answer is checked (k distinct objects, links only between chosen ones) before use.
"""
from __future__ import annotations

import logging
import time
from dataclasses import dataclass, field

import numpy as np
from scipy import sparse
from scipy.optimize import Bounds, LinearConstraint, milp

log = logging.getLogger(__name__)


@dataclass
class Selection:
    """The MIP's answer: `chosen` object indices (best relevance first) and `links` (i, j) among them."""

    chosen: list[int]
    links: list[tuple[int, int]] = field(default_factory=list)
    status: str = "optimal"  # optimal | time limit | all (k >= M) | fallback: ... | empty
    seconds: float = 0.0
    objective: float = 0.0

    @property
    def fallback(self) -> bool:
        return self.status.startswith("fallback")

    def trace(self) -> dict:
        return {"chosen": list(self.chosen), "links": [list(p) for p in self.links], "status": self.status,
                "solve_ms": round(1000 * self.seconds, 1), "objective": round(self.objective, 4)}


def candidate_pairs(compatibility: np.ndarray, objects: np.ndarray, per_object: int) -> np.ndarray:
    """(P, 2) pairs i < j among `objects` with positive compatibility: each object's `per_object` best partners."""
    if len(objects) < 2 or per_object <= 0:
        return np.zeros((0, 2), dtype=np.int64)
    sub = compatibility[np.ix_(objects, objects)]
    np.fill_diagonal(sub, -np.inf)
    keep = min(per_object, len(objects) - 1)
    best = np.argpartition(-sub, keep - 1, axis=1)[:, :keep]
    pairs = {(min(a, b), max(a, b)) for a, row in enumerate(best) for b in row if sub[a, b] > 0}
    pairs = np.array(sorted(pairs), dtype=np.int64).reshape(-1, 2)
    return objects[pairs] if len(pairs) else pairs


def _ranking(relevance: np.ndarray, k: int) -> list[int]:
    return np.argsort(-relevance, kind="stable")[:k].tolist()


def select(relevance: np.ndarray, compatibility, k: int, time_limit: float = 1.0, max_objects: int = 60,
           pairs_per_object: int = 8, clock=time.perf_counter) -> Selection:
    """The k objects that maximise relevance plus the compatibility of their k - 1 best links.

    Args:
        relevance: R_i, one per object.
        compatibility: C (M x M, symmetric), or a function (objects) -> C restricted to those objects, for pools
            too large to hold M x M.
        k: objects to choose; k >= M chooses them all.
        time_limit: seconds HiGHS may take.
        max_objects: only this many of the most relevant objects enter the program.
        pairs_per_object: the partners each object may link to.
    """
    start = clock()
    relevance = np.nan_to_num(np.asarray(relevance, dtype=np.float64), nan=0.0, posinf=1.0, neginf=0.0)
    m = len(relevance)
    if m == 0 or k <= 0:
        return Selection([], status="empty")
    if k >= m:
        return Selection(_ranking(relevance, m), status="all", seconds=clock() - start)
    pool = np.sort(np.argsort(-relevance, kind="stable")[:max(k, max_objects)])
    full = compatibility(pool) if callable(compatibility) else np.asarray(compatibility)[np.ix_(pool, pool)]
    local = np.nan_to_num(np.asarray(full, dtype=np.float64), nan=0.0)
    pairs = candidate_pairs(local, np.arange(len(pool)), pairs_per_object)
    n, p = len(pool), len(pairs)
    cost = -np.concatenate([relevance[pool], local[pairs[:, 0], pairs[:, 1]] if p else []])
    rows = np.arange(p)
    linked = sparse.coo_matrix((np.concatenate([-np.ones(2 * p), np.ones(2 * p)]),
                                (np.concatenate([rows, p + rows, rows, p + rows]),
                                 np.concatenate([pairs[:, 0], pairs[:, 1], n + rows, n + rows]))),
                               shape=(2 * p, n + p))
    constraints = [LinearConstraint(np.concatenate([np.ones(n), np.zeros(p)])[None, :], k, k)]
    if p:
        constraints += [LinearConstraint(np.concatenate([np.zeros(n), np.ones(p)])[None, :], 0, k - 1),
                        LinearConstraint(linked.tocsr(), -np.inf, 0)]
    remaining = max(0.01, time_limit - (clock() - start))
    try:
        result = milp(cost, integrality=np.ones(n + p), bounds=Bounds(0, 1), constraints=constraints,
                      options={"time_limit": remaining, "disp": False})
    except Exception:  # noqa: BLE001 - the ranking is always a valid answer
        log.warning("structure MIP failed; using the ranking", exc_info=True)
        return Selection(_ranking(relevance, k), status="fallback: solver error", seconds=clock() - start)
    x = None if result.x is None else np.round(result.x).astype(int)
    if x is None or x[:n].sum() != k or (p and np.any(x[n:] > np.minimum(x[pairs[:, 0]], x[pairs[:, 1]]))):
        status = "fallback: time limit" if result.status == 1 else f"fallback: {result.message[:60]}"
        return Selection(_ranking(relevance, k), status=status, seconds=clock() - start)
    chosen = sorted(pool[np.flatnonzero(x[:n])].tolist(), key=lambda i: (-relevance[i], i))
    links = [(int(pool[a]), int(pool[b])) for (a, b), on in zip(pairs, x[n:]) if on]
    return Selection(chosen, links, "optimal" if result.status == 0 else "time limit", clock() - start,
                     float(-result.fun) if result.fun is not None else 0.0)
