"""Cross-source evidence selection (the OmniRetrieval paper, section 2.4): every engaged source's evidence for one
question ranked into one context, and the exact values of the sources weighed against each other.

An item's score is its relevance to the question (the MiniLM cosine of question and item; without an embedder,
the source's own score) times its source's reliability (`omni.evidence.reliability`), plus `agreement_bonus`
when it states another source's exact value. The context is the `context_k` best items, each engaged source
keeping its best `min_per_source`; with `provenance` each item's text is led by where it came from ("[kg]",
"[web]"; with `page_dates` also the page's date, "[web 2024-03-01]"), so the answer step reads it.

Exact values (a KG program's value, a checked SQL cell) that differ are a conflict, settled by rules in this
order, each visible in the trace: (1) agreement: the value more of the other sources' items state wins;
(2) preference: the source listed first in `omni.evidence.prefer` wins. The value kept answers without the
model, as in db3's cascade; when it is not verified, the answer step reads the whole context.
"""
from __future__ import annotations

import logging
import re
from datetime import datetime
from email.utils import parsedate_to_datetime
from dataclasses import dataclass, field, replace
from typing import Mapping, Sequence

import numpy as np

from models.answering.verify_step import TRACED_CHARS  # items traced whole, as attempts' chunks are
from models.omni.config import EvidenceSelectionConfig
from models.text import value_phrase as normalized
from models.types import Chunk

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Exact:
    """One source's exact value and how many of the other sources' items state it."""

    source: str
    value: str
    support: int


@dataclass(frozen=True)
class Consolidated:
    """A question's evidence after selection.

    Attributes:
        items: the one context, best first (provenance-led texts when `provenance` is on).
        exact: every engaged source's exact value, in the profile's order.
        chosen: the exact value the rules keep, or None (no exact value: the model reads `items`).
        trace: the scores, the rule that decided a conflict, what was kept (plain JSON data).
    """

    items: tuple[Chunk, ...] = ()
    exact: tuple[Exact, ...] = ()
    chosen: Exact | None = None
    trace: Mapping = field(default_factory=dict)


def states_value(text: str, value: str) -> bool:
    """Whether `text` states `value` as a whole phrase (case, punctuation and spacing aside)."""
    value = normalized(value).strip(".,")
    whole = rf"(?<![\w.])(?<!\d,){re.escape(value)}(?!\w|[.,]\d)"  # not inside "14", "4.5" or "1,000"
    return bool(value) and re.search(whole, normalized(text)) is not None


class EvidenceSelector:
    """Args:
        config: `omni.evidence`.
        embedder: the shared `Embedder`, or None (items keep their source's own scores).
    """

    def __init__(self, config: EvidenceSelectionConfig, embedder=None):
        self.config, self.embedder = config, embedder

    def select(self, question: str, evidence: Mapping, engaged: Sequence[str], page_dates: Mapping[str, str] = {}
               ) -> Consolidated:
        """`evidence`: source name -> `Evidence` for the engaged sources (in the profile's order); `page_dates`:
        URL -> the page's last-modified date, for the web items' provenance."""
        c = self.config
        asked = [name for name in engaged if name in evidence]
        items = [(name, chunk) for name in asked for chunk in evidence[name].items if chunk.text.strip()]
        exact = [(name, evidence[name].direct) for name in asked if evidence[name].direct]
        relevance = self._relevance(question, [chunk for _, chunk in items], [name for name, _ in items])
        scored = []
        for (name, chunk), rel in zip(items, relevance):
            agrees = [src for src, value in exact if src != name and states_value(chunk.text, value)]
            score = c.reliability.get(name, 1.0) * rel + (c.agreement_bonus if agrees else 0.0)
            scored.append((score, name, chunk, agrees))
        kept = _keep(scored, c.context_k, c.min_per_source)
        dates = page_dates if c.page_dates else {}
        context = tuple(replace(chunk, text=_led(name, chunk, dates) if c.provenance else chunk.text,
                                score=round(score, 4)) for score, name, chunk, _ in kept)
        # a value's support: the other sources' items that state it, already found for the agreement bonus
        values = tuple(Exact(name, value, sum(name in agrees for *_, agrees in scored)) for name, value in exact)
        chosen, rule = self._settle(values)
        trace = {"items": [{"source": name, "score": round(score, 4), "agrees_with": agrees,
                            "kept": any(chunk is k[2] for k in kept), "text": chunk.text[:TRACED_CHARS]}
                           for score, name, chunk, agrees in sorted(scored, key=lambda s: -s[0])],
                 "exact": [{"source": e.source, "value": e.value, "support": e.support} for e in values],
                 "conflict": rule, "chosen": chosen.source if chosen else None}
        return Consolidated(context, values, chosen, trace)

    def _relevance(self, question: str, chunks: Sequence[Chunk], names: Sequence[str]) -> list[float]:
        """Each item's relevance: the MiniLM cosine to the question, re-dealt within its source so that the
        source's own order stands (the web's reranker ranked its chunks better than one cosine does; the
        cosines decide only how the sources' lists interleave). Without an embedder: the sources' own scores."""
        if not chunks:
            return []
        own = [float(c.score) for c in chunks]
        if self.embedder is None:
            return own
        try:
            vectors = np.asarray(self.embedder.encode([question, *(c.text for c in chunks)], is_query=True))
            cosines = [float(v) for v in vectors[1:] @ vectors[0]]
        except Exception:  # noqa: BLE001 - a failed embedding ranks by the sources' own scores
            log.warning("evidence selection could not embed %d items", len(chunks), exc_info=True)
            return own
        out = list(cosines)
        for name in dict.fromkeys(names):
            at = [i for i, n in enumerate(names) if n == name]
            for i, value in zip(at, sorted((cosines[i] for i in at), reverse=True)):
                out[i] = value
        return out

    def _settle(self, values: Sequence[Exact]) -> tuple[Exact | None, str]:
        """The exact value to keep and the rule that chose it ("" when there was nothing to choose)."""
        if not values:
            return None, ""
        distinct = {normalized(e.value) for e in values}
        if len(distinct) == 1:
            return values[0] if len(values) == 1 else self._preferred(values), \
                "" if len(values) == 1 else "the sources agree"
        best = max(e.support for e in values)
        leaders = [e for e in values if e.support == best]
        if len(leaders) == 1:
            return leaders[0], f"agreement: {leaders[0].source}'s value is stated by {best} other item(s)"
        chosen = self._preferred(leaders)
        return chosen, f"preference: {chosen.source} first in omni.evidence.prefer ({best} other item(s) each)"

    def _preferred(self, values: Sequence[Exact]) -> Exact:
        order = list(self.config.prefer)
        return min(values, key=lambda e: order.index(e.source) if e.source in order else len(order))


def _keep(scored: list, k: int, per_source: int) -> list:
    """The `k` best, after each source's best `per_source` (so one source's many items cannot hide another's)."""
    order = sorted(range(len(scored)), key=lambda i: -scored[i][0])
    guaranteed, counts = [], {}
    for i in order:
        name = scored[i][1]
        if counts.get(name, 0) < per_source:
            guaranteed.append(i)
            counts[name] = counts.get(name, 0) + 1
    rest = [i for i in order if i not in guaranteed]
    kept = set(guaranteed + rest[:max(0, k - len(guaranteed))])
    return [scored[i] for i in order if i in kept]


def _led(name: str, chunk: Chunk, page_dates: Mapping[str, str]) -> str:
    """The item's text led by its provenance: "[kg] ...", "[web 2024-03-01] ..." (the page's date, when known)."""
    date = page_date(page_dates.get(chunk.source, "")) if name == "web" else ""
    return f"[{name}{' ' + date if date else ''}] {chunk.text}"


def page_date(text: str) -> str:
    """A page's last-modified time as YYYY-MM-DD ("" when unreadable): CRAG pages give ISO times or RFC 2822
    ones ("Sun, 04 Feb 2024 10:00:00 GMT")."""
    text = (text or "").strip()
    if not text:
        return ""
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00")).date().isoformat()
    except ValueError:
        pass
    try:
        return parsedate_to_datetime(text).date().isoformat()
    except (TypeError, ValueError, IndexError):
        return ""
