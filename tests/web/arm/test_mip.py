"""The structure MIP: optimal on small instances (checked against brute force), bounded on adversarial ones, and
a valid answer (k distinct objects, links among them) whatever HiGHS does."""
import itertools
import time

import numpy as np
import pytest

from models.web.arm import mip
from models.web.arm.mip import candidate_pairs, select


def brute_force(relevance, compatibility, k):
    """max over k-subsets of sum R + the k - 1 largest positive C among the subset's pairs."""
    best = -np.inf
    for subset in itertools.combinations(range(len(relevance)), k):
        links = sorted((compatibility[a, b] for a, b in itertools.combinations(subset, 2)), reverse=True)
        best = max(best, relevance[list(subset)].sum() + sum(c for c in links[:k - 1] if c > 0))
    return best


def symmetric(rng, m):
    c = rng.random((m, m))
    c = (c + c.T) / 2
    np.fill_diagonal(c, 0)
    return c


def valid(selection, m, k):
    chosen = set(selection.chosen)
    assert len(selection.chosen) == len(chosen) == min(k, m)
    assert all(0 <= i < m for i in chosen)
    assert all(a in chosen and b in chosen for a, b in selection.links)
    assert len(selection.links) <= max(0, k - 1)


@pytest.mark.parametrize("seed", range(8))
def test_the_optimum_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    m, k = 9, int(rng.integers(2, 5))
    relevance, compatibility = rng.random(m), symmetric(rng, m)
    selection = select(relevance, compatibility, k, time_limit=5.0, pairs_per_object=m)
    valid(selection, m, k)
    assert selection.status == "optimal"
    assert selection.objective == pytest.approx(brute_force(relevance, compatibility, k), abs=1e-6)
    chosen = selection.chosen
    assert list(chosen) == sorted(chosen, key=lambda i: -relevance[i])  # best relevance first


def test_compatibility_pulls_in_a_connected_object_over_a_more_relevant_loner():
    relevance = np.array([1.0, 0.9, 0.5, 0.6])
    compatibility = np.zeros((4, 4))
    compatibility[0, 2] = compatibility[2, 0] = compatibility[1, 2] = compatibility[2, 1] = 0.8
    selection = select(relevance, compatibility, 3)
    assert set(selection.chosen) == {0, 1, 2} and set(selection.links) == {(0, 2), (1, 2)}


def test_k_at_least_m_chooses_everything_and_k_zero_nothing():
    relevance = np.array([0.2, 0.9, 0.5])
    assert select(relevance, np.zeros((3, 3)), 5).chosen == [1, 2, 0]
    assert select(relevance, np.zeros((3, 3)), 5).status == "all"
    assert select(relevance, np.zeros((3, 3)), 0).chosen == []
    assert select(np.zeros(0), np.zeros((0, 0)), 3).chosen == []


def test_ten_thousand_objects_stay_within_the_time_limit():
    rng = np.random.default_rng(0)
    m, limit = 10_000, 1.0
    relevance = rng.random(m)
    start = time.perf_counter()
    selection = select(relevance, lambda pool: symmetric(np.random.default_rng(1), len(pool)), 5, time_limit=limit)
    assert time.perf_counter() - start < limit + 1.0  # building the bounded program is milliseconds
    valid(selection, m, 5)
    assert not selection.fallback
    top = set(np.argsort(-relevance)[:60].tolist())
    assert set(selection.chosen) <= top  # only the max_objects most relevant enter


def test_all_equal_scores_and_bad_numbers_still_give_k_objects():
    m = 200
    equal = select(np.ones(m), np.ones((m, m)), 7, time_limit=1.0, max_objects=m)
    valid(equal, m, 7)
    weird = np.array([np.nan, np.inf, -np.inf, 0.5, 0.1])
    valid(select(weird, np.full((5, 5), np.nan), 2), 5, 2)


def test_a_solver_failure_or_no_solution_in_time_falls_back_to_the_ranking(monkeypatch):
    relevance = np.array([0.1, 0.9, 0.5, 0.7])
    compatibility = symmetric(np.random.default_rng(0), 4)

    def boom(*args, **kwargs):
        raise RuntimeError("highs")

    monkeypatch.setattr(mip, "milp", boom)
    failed = select(relevance, compatibility, 2)
    assert failed.chosen == [1, 3] and failed.fallback and "solver error" in failed.status

    class TimedOut:
        status, x, fun, message = 1, None, None, "Time limit reached"

    monkeypatch.setattr(mip, "milp", lambda *a, **k: TimedOut())
    timed_out = select(relevance, compatibility, 2)
    assert timed_out.chosen == [1, 3] and timed_out.status == "fallback: time limit"

    class Infeasible:  # an answer that breaks the constraints is never used
        status, fun, message = 0, -1.0, "optimal"
        x = np.ones(4 + 6)

    monkeypatch.setattr(mip, "milp", lambda *a, **k: Infeasible())
    assert select(relevance, compatibility, 2, pairs_per_object=3).fallback


def test_candidate_pairs_keep_each_objects_best_partners():
    c = np.array([[0, 0.9, 0.1, 0], [0.9, 0, 0.2, 0], [0.1, 0.2, 0, 0], [0, 0, 0, 0]], dtype=float)
    pairs = candidate_pairs(c, np.arange(4), 1)
    assert {tuple(p) for p in pairs} == {(0, 1), (1, 2)}  # object 3 has no positive partner
    assert len(candidate_pairs(c, np.arange(1), 3)) == 0
