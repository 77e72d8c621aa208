"""Labelled questions for the static/dynamic predictor.

Any CRAG-format `.jsonl`/`.jsonl.bz2` file (or folder of them) whose rows carry `query` and
`static_or_dynamic` works. CRAG's four values fold into ElectricSheep's two: `static` stays static;
`slow-changing`, `fast-changing` and `real-time` are dynamic (the boundaries between the three are blurred,
§4.2). Rows without a known label are skipped and counted.
"""
from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Sequence

from models.jsonl import numbered_rows
from models.routing.classifier import RouterTrainingError
from models.routing.classifier import _expand as expand_sources

log = logging.getLogger(__name__)

LABELS = ("static", "dynamic")
_FOLD = {"static": "static", "dynamic": "dynamic", "slow-changing": "dynamic", "fast-changing": "dynamic",
         "real-time": "dynamic"}


class AttributeDataError(ValueError):
    """Missing files, malformed lines, or no usable row."""


def binary_label(value) -> str | None:
    """"static" / "dynamic" for a CRAG `static_or_dynamic` value, None for anything else."""
    return _FOLD.get(str(value or "").strip().lower())


def _files(sources: Sequence[str | os.PathLike]) -> list[Path]:
    try:
        return expand_sources(sources)
    except RouterTrainingError as exc:
        raise AttributeDataError(str(exc).replace("router training data", "attribute training data")) from exc


def load_attribute_labels(sources: Sequence[str | os.PathLike]) -> tuple[list[str], list[str]]:
    """Parallel lists of question texts and binary labels, duplicates (same text) kept once.

    Raises:
        AttributeDataError: a source is missing, a line is not JSON, or no row is usable.
    """
    texts, labels, seen, skipped = [], [], set(), 0
    for path in _files(sources):
        for _, row in numbered_rows(path, error=AttributeDataError):
            query = row.get("query") if isinstance(row, dict) else None
            label = binary_label(row.get("static_or_dynamic")) if isinstance(row, dict) else None
            if not isinstance(query, str) or not query.strip() or label is None:
                skipped += 1
                continue
            if query.strip().lower() in seen:
                continue
            seen.add(query.strip().lower())
            texts.append(query.strip())
            labels.append(label)
    if skipped:
        log.warning("attribute data: skipped %d rows without a query or a static_or_dynamic label", skipped)
    if not texts:
        raise AttributeDataError(f"no labelled questions (fields 'query', 'static_or_dynamic') in {list(sources)}")
    return texts, labels
