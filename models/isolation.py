"""Per-item failure isolation for batched calls: one bad item never costs its neighbours.

Components call their model once for a whole batch (a GPU wants full batches). When that call raises,
`per_item` retries every item alone, so the items that work keep their results and only the failing one
gets a neutral fallback (an empty completion, a zero vector, the "open" domain). Every failure is logged.
"""
from __future__ import annotations

import logging
from typing import Callable, Sequence, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
R = TypeVar("R")


def per_item(run: Callable[[Sequence[T]], Sequence[R]], items: Sequence[T], fallback: Callable[[T], R],
             what: str = "batch") -> list[R]:
    """`run(items)`, or, when it raises or answers the wrong number of results, `run([item])` per item.

    Args:
        run: the batched call; must return one result per item, in order.
        items: the batch.
        fallback: the neutral result of an item whose own call fails too.
        what: names the call in log lines.

    Returns:
        One result per item, in order; never raises for a failing item.
    """
    items = list(items)
    if not items:
        return []
    try:
        results = list(run(items))
        if len(results) == len(items):
            return results
        log.warning("%s: %d results for %d items; retrying each item alone", what, len(results), len(items))
    except Exception as exc:  # noqa: BLE001 - isolate, then retry item by item
        if len(items) == 1:
            log.warning("%s failed for its only item (%s); using the fallback", what, exc)
            return [fallback(items[0])]
        log.warning("%s failed for a batch of %d (%s); retrying each item alone", what, len(items), exc)
    out = []
    for index, item in enumerate(items):
        try:
            result = list(run([item]))
            if len(result) != 1:
                raise ValueError(f"{len(result)} results for one item")
            out.append(result[0])
        except Exception:  # noqa: BLE001 - this item alone fails: neutral result, neighbours keep theirs
            log.warning("%s failed for item %d; using the fallback", what, index, exc_info=True)
            out.append(fallback(item))
    return out
