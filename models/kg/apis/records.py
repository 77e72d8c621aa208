"""What API functions return: a `Table` of `Row`s, and the relational operators the language applies to it.

Every regularized function, whatever its domain, returns rows (a movie, a cast entry, a daily price, a
game), each with a readable `entity` label ("Inception", "AAPL on 2024-02-27") and a mapping of fields. A
uniform shape lets one executor implement conditions, sort, key selection, slicing, `["len"]` and `AVG`
for all five domains, and lets the verbaliser say "The close of AAPL on 2024-02-27 is 182.63.".

Fields that need their own API call (a song's author, a movie fetched by id for a cast row) live in a
`LazyRecord`: the call happens only when a condition, sort key, selected key or the verbaliser reads the
field, so `get_movie_person_cast(None, "tom hanks", None)["len"]` costs one call, not one per movie.

Keys are resolved forgivingly (`resolve_key`): exact, the function's aliases ("runtime" → "length"),
normalised ("Close" → "close", "release date" → "release_date", "market cap" → "marketCap"),
singular/plural, then a unique containment ("founder" → "founders").
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import datetime
from typing import Any, Callable, Iterator, Mapping, Sequence

from models.kg.language.ast import Condition
from models.kg.language.errors import KGLimitError
from models.kg.language.values import StringEquals, condition_value, satisfies, sort_value, typed
from models.text import kg_match_key


_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")


class LazyRecord(Mapping):
    """A mapping whose keys are known up front and whose lazy values are loaded on first read.

    Args:
        values: fields known without further calls.
        loaders: field -> zero-argument callable returning the field's value (may call the API).
    """

    def __init__(self, values: Mapping[str, Any], loaders: Mapping[str, Callable[[], Any]] | None = None):
        self._values = dict(values)
        self._loaders = {k: v for k, v in (loaders or {}).items() if k not in self._values}

    def __getitem__(self, key: str) -> Any:
        if key not in self._values:
            loader = self._loaders[key]  # KeyError for unknown keys, as a Mapping must
            self._values[key] = loader()
        return self._values[key]

    def __contains__(self, key: object) -> bool:
        # Mapping's default reads the value, i.e. makes the API call; a key test must never do that
        return key in self._values or key in self._loaders

    def __iter__(self) -> Iterator[str]:
        yield from self._values
        yield from (k for k in self._loaders if k not in self._values)

    def __len__(self) -> int:
        return len(set(self._values) | set(self._loaders))


@dataclass(frozen=True)
class Row:
    """One record.

    Attributes:
        fields: the record's fields (a dict, or a `LazyRecord`).
        label: the readable entity, or a function of the fields (read lazily: a cast row's movie title
            needs a call, which `["len"]` never makes).
        ref_key: the field `*` passes to the next line (a title, a name, a ticker); default: the label.
    """

    fields: Mapping[str, Any]
    label: str | Callable[[Mapping[str, Any]], str]
    ref_key: str | None = None

    @property
    def entity(self) -> str:
        return self.label(self.fields) if callable(self.label) else self.label

    @property
    def reference(self) -> Any:
        value = self.fields.get(self.ref_key) if self.ref_key else None
        return value if value not in (None, "") else self.entity


@dataclass(frozen=True)
class Table:
    """Attributes:
        rows: the records, in the API's (or the sort's) order.
        what: a noun phrase for facts about the whole table ("cast members of Inception").
        total: how many rows existed before `max_rows` cut the table (None = all are here).
        notes: facts about how the rows were obtained ("no trading on 2024-02-24; ...").
        aliases: normalised asked key -> field name, for this function's vocabulary.
        equals: field -> string equality used by `eq`/`neq` (aliases of Oscar categories, ...).
        found: False when the entity the call names (a movie, a ticker, an artist) was not found: the table
            is empty for want of an entity, which says nothing about the world.
        stopped: set when `where` or `sorted_by` ran out of call budget or time part-way (the rows read
            so far are kept).
        ambiguous: set when the name fits several entities (films of one title) and nothing told them apart:
            the row shown is a guess, which the KG checks refuse as evidence (`models/kg/checks/fit.py`).
    """

    rows: tuple[Row, ...]
    what: str
    total: int | None = None
    notes: tuple[str, ...] = ()
    aliases: Mapping[str, str] = field(default_factory=dict)
    equals: Mapping[str, StringEquals] = field(default_factory=dict)
    found: bool = True  # the entity the call names was found (an empty table is then evidence of absence)
    stopped: str = ""  # why filtering or sorting stopped early (the call budget or the deadline); "" = it did not
    ambiguous: str = ""  # which same-named entities the row was guessed among; "" = none

    @property
    def size(self) -> int:
        return self.total if self.total is not None else len(self.rows)

    def limit(self, max_rows: int) -> "Table":
        if len(self.rows) <= max_rows:
            return self
        return replace(self, rows=self.rows[:max_rows], total=self.size)

    def where(self, conditions: Sequence[Condition], now: datetime | None) -> "Table":
        """The rows satisfying every condition (typed comparison; a missing field fails).

        When reading a lazy field hits the call budget or the deadline, the rows checked so far are kept,
        `stopped` says why, and a note says how many rows were left unchecked.
        """
        if not conditions:
            return self
        wanted = [(c, condition_value(c.value, now)) for c in conditions]
        kept = []
        for index, row in enumerate(self.rows):
            try:
                holds = all(self._holds(row, c, w) for c, w in wanted)
            except KGLimitError as exc:
                note = (f"Only {index} of the {len(self.rows)} {self.what} could be checked against the "
                        f"conditions before the work budget ran out.")
                return replace(self, rows=tuple(kept), total=None, notes=self.notes + (note,), stopped=str(exc))
            if holds:
                kept.append(row)
        return replace(self, rows=tuple(kept), total=None)

    def _holds(self, row: Row, condition: Condition, wanted: Any) -> bool:
        key = resolve_key(row.fields, condition.key, self.aliases)
        if key is None:
            return False
        raw = row.fields[key]
        return satisfies(condition.op, typed(raw), wanted, self.equals.get(key), raw, condition.value.value)

    def sorted_by(self, key: str, descending: bool) -> "Table":
        """Rows ordered by a typed key; rows without the key go last, in their previous order."""
        keyed, missing = [], []
        stopped, notes = "", self.notes
        for index, row in enumerate(self.rows):
            try:
                name = resolve_key(row.fields, key, self.aliases)
                value = row.fields[name] if name is not None else None
            except KGLimitError as exc:  # the rows read so far are sorted; the rest follow in their order
                stopped = str(exc)
                notes += (f"Only the first {index} of the {len(self.rows)} {self.what} could be sorted before "
                          f"the work budget ran out; the rest follow unsorted.",)
                missing.extend(self.rows[index:])
                break
            if typed(value) in (None, []):
                missing.append(row)
            else:
                keyed.append((sort_value(value), row))
        keyed.sort(key=lambda pair: pair[0], reverse=descending)
        return replace(self, rows=tuple(r for _, r in keyed) + tuple(missing), total=None, notes=notes,
                       stopped=stopped)


def resolve_key(fields: Mapping[str, Any], asked: str, aliases: Mapping[str, str] | None = None) -> str | None:
    """The field a program's key refers to, or None."""
    if asked in fields:
        return asked
    wanted = key_text(asked)
    alias = (aliases or {}).get(wanted)
    if alias is not None and alias in fields:
        return alias
    by_norm = {key_text(k): k for k in fields}
    for variant in (wanted, wanted[:-1] if wanted.endswith("s") else wanted + "s"):
        if variant in by_norm:
            return by_norm[variant]
    contained = [k for n, k in by_norm.items() if wanted and (f" {wanted} " in f" {n} " or f" {n} " in f" {wanted} ")]
    return contained[0] if len(contained) == 1 else None


def key_text(key: str) -> str:
    """A key normalised for matching; camelCase split ("marketCap" = "market cap")."""
    return kg_match_key(_CAMEL.sub(" ", str(key)))

