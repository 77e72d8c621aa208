"""Per-item failure isolation for batched calls: one bad item never costs its neighbours.

Components call their model once for a whole batch (a GPU wants full batches). When that call raises,
`per_item` retries every item alone, so the items that work keep their results and only the failing one
gets a neutral fallback (an empty completion, a zero vector, the "open" domain). Every failure is logged.

The retries are the slow path (a batch of 16 becomes 16 calls), so they ask the caller's deadline before each
item: once it has passed, the remaining items get their fallback without running, and the caller's answer
for them is "i don't know" instead of a batch that overruns the grader's limit. Why an item got its fallback
(its own call failed, or the deadline left no time to retry it) travels with the results (`reasons`), so the
pipeline can put it in that answer's trace.
"""
from __future__ import annotations

import logging
from typing import Callable, Iterable, Mapping, Sequence, TypeVar

from models.deadline import Deadline

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


class ItemResults(list):
    """One result per item, in order (a plain list to every caller), and `reasons`: item index -> why that
    item holds its fallback instead of a result. Empty when every item ran. An LLM backend also keeps
    `completions`: item index -> every completion of that request with its log-probabilities, where the request
    asked for several or for log-probabilities (`models.llm.generator.completions_of` reads them). `retryable`: the
    items among `reasons` whose fallback came from a fault outside the item (a server that went away or timed
    out), so that asking again later may answer them, where a refused request or a passed deadline would not."""

    def __init__(self, results=(), reasons: Mapping[int, str] | None = None, completions: Mapping | None = None,
                 retryable: Iterable[int] = ()):
        super().__init__(results)
        self.reasons: dict[int, str] = dict(reasons or {})
        self.completions: dict[int, tuple] = dict(completions or {})
        self.retryable: frozenset[int] = frozenset(retryable) & frozenset(self.reasons)

    def error_of(self, index: int) -> dict:
        """{"error": why item `index` holds its fallback} for a trace entry, or {} when it ran."""
        return {"error": self.reasons[index]} if index in self.reasons else {}


def fallback_reasons(results: Sequence) -> dict[int, str]:
    """The `reasons` of `per_item`'s results (or of any list built from them); {} for a plain list."""
    return dict(getattr(results, "reasons", {}))


def retryable_items(results: Sequence) -> frozenset[int]:
    """The `retryable` items of an `ItemResults`; none for a plain list."""
    return frozenset(getattr(results, "retryable", ()))


def per_item(run: Callable[[Sequence[T]], Sequence[R]], items: Sequence[T], fallback: Callable[[T], R],
             what: str = "batch", *, deadline: Deadline | None = None) -> ItemResults:
    """`run(items)`, or, when it raises or answers the wrong number of results, `run([item])` per item.

    Args:
        run: the batched call; must return one result per item, in order.
        items: the batch.
        fallback: the neutral result of an item whose own call fails too, or that is not retried in time.
        what: names the call in log lines and reasons.
        deadline: asked before each retry (the batched call itself is the caller's to start or not): once it
            has passed, the items not yet retried get their fallback without running. None: retry them all.

    Returns:
        One result per item, in order, with `reasons` for the items that hold their fallback; never raises for
        a failing item.
    """
    items = list(items)
    if not items:
        return ItemResults()
    try:
        results = list(run(items))
        if len(results) == len(items):
            return ItemResults(results)
        cause = f"{len(results)} results for {len(items)} items"
        log.warning("%s: %s; retrying each item alone", what, cause)
    except Exception as exc:  # noqa: BLE001 - isolate, then retry item by item
        cause = f"{type(exc).__name__}: {exc}"
        if len(items) == 1:
            log.warning("%s failed for its only item (%s); using the fallback", what, exc)
            return ItemResults([fallback(items[0])], {0: f"{what} failed: {cause}"})
        log.warning("%s failed for a batch of %d (%s); retrying each item alone", what, len(items), exc)
    out, reasons = [], {}
    for index, item in enumerate(items):
        if deadline is not None and deadline.expired():
            log.warning("%s: deadline reached while retrying item by item; %d items not run", what,
                        len(items) - index)
            for rest in range(index, len(items)):
                out.append(fallback(items[rest]))
                reasons[rest] = (f"{what} not run: the batch call failed ({cause}) and the deadline passed "
                                 "before this item's own retry")
            break
        try:
            result = list(run([item]))
            if len(result) != 1:
                raise ValueError(f"{len(result)} results for one item")
            out.append(result[0])
        except Exception as exc:  # noqa: BLE001 - this item alone fails: neutral result, neighbours keep theirs
            log.warning("%s failed for item %d; using the fallback", what, index, exc_info=True)
            out.append(fallback(item))
            reasons[index] = f"{what} failed: {type(exc).__name__}: {exc}"
    return ItemResults(out, reasons)
