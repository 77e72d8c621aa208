"""Does the mock API serve the data's entities? A model-free probe that `make adapters` runs before labelling.

`kg_answer` is labelled on the contexts the KG pathway builds for each CRAG question; on a KG that does not hold
the questions' entities (the bundled fixture KG, `data/kg_fixture/`, against CRAG's dev questions) every context
is empty, the label rules skip every question and the adapter has no training record, hours later. The probe
asks the KG's own name searches about the first `PROBE_QUESTIONS` questions of the domains that have one (open,
movie, music, finance; sports has no name search and is not probed):
- the query is the question's content words (lower-cased words less `STOP_WORDS` and `LINK_WORDS`), sent to
  `open_search_entity_by_name`; `movie_get_movie_info` and `movie_get_person_info`;
  `music_search_artist_entity_by_name` and `music_search_song_entity_by_name`; `finance_get_company_name`;
- a question is *served* when one returned name is named by the question: the name's words, less stop words and
  company suffixes (`NAME_FILLER`), are all words of the question and hold 4 characters or more together (so
  "Up" or "The Who" cannot match every question); a finance question is also served when one of its short
  words (2-5 letters, at most `MAX_TICKERS`) is a ticker the KG has a market capitalisation for.
The KG serves the data when at least `MIN_SERVED_SHARE` of the probed questions are served. The share is a
heuristic floor, not a measurement of the KG: a name search ranks by shared words, so a few questions find a
name of a small KG by chance (tests/training/test_kg_probe.py measures the fixture KG against the dev file where
it is present, and the bundled sample, written for the fixture, against it).

Only counts leave the probe: no question and no entity name is printed.
"""
from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Iterable

from evaluation.experiments.context_recall import LINK_WORDS, STOP_WORDS

PROBE_QUESTIONS = 30
MIN_SERVED_SHARE = 0.25
MAX_TICKERS = 3
PROBED_DOMAINS = ("open", "movie", "music", "finance")
NAME_FILLER = STOP_WORDS | LINK_WORDS | frozenset(
    "inc incorporated corp corporation co company ltd limited plc llc lp group holdings holding sa ag nv se "
    "class common stock shares".split())
# The name searches of each probed domain (MockAPIClient methods) and the record field that holds the name.
SEARCHES = {
    "open": (("open_search_entity_by_name", None),),
    "movie": (("movie_get_movie_info", "title"), ("movie_get_person_info", "name")),
    "music": (("music_search_artist_entity_by_name", None), ("music_search_song_entity_by_name", None)),
    "finance": (("finance_get_company_name", None),),
}
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> list[str]:
    return _WORD.findall(str(text).lower())


def content_words(question: str) -> list[str]:
    """The question's words less stop and linking words, in order, each once: the probe's search query."""
    return list(dict.fromkeys(w for w in words(question) if w not in STOP_WORDS and w not in LINK_WORDS))


def named_by(name: str, question_words: set[str]) -> bool:
    """Whether the question names `name`: its words less `NAME_FILLER` are all the question's, 4+ characters."""
    own = [w for w in words(name) if w not in NAME_FILLER]
    return sum(map(len, own)) >= 4 and all(w in question_words for w in own)


def _names(result, key: str | None) -> list[str]:
    if not isinstance(result, list):
        return []
    if key is None:
        return [x for x in result if isinstance(x, str)]
    return [x[key] for x in result if isinstance(x, dict) and isinstance(x.get(key), str)]


def _ask(client, method: str, *args):
    """One call; None when the server rejects it (it answered: a 4xx/5xx). Unreachable: the error propagates."""
    from models.kg.client import KGClientError

    try:
        return getattr(client, method)(*args)
    except KGClientError as error:
        if error.status is None:
            raise
        return None


def serves(question: str, domain: str, client) -> bool:
    """Whether the KG behind `client` returns a name that `question` (of a probed `domain`) names."""
    query = content_words(question)
    own = set(words(question))
    for method, key in SEARCHES[domain]:
        if any(named_by(name, own) for name in _names(_ask(client, method, " ".join(query)), key)):
            return True
    if domain == "finance":
        tickers = [w for w in query if w.isalpha() and 2 <= len(w) <= 5][:MAX_TICKERS]
        return any(_ask(client, "finance_get_market_capitalization", t.upper()) is not None for t in tickers)
    return False


@dataclass
class KGProbe:
    """What the probe found: per probed domain (served, probed); `kg` says which KG (for the messages)."""

    kg: str
    domains: dict[str, list[int]] = field(default_factory=dict)
    not_probed: int = 0  # questions read of other domains (sports) or without a content word

    @property
    def probed(self) -> int:
        return sum(n for _, n in self.domains.values())

    @property
    def served(self) -> int:
        return sum(s for s, _ in self.domains.values())

    @property
    def conclusive(self) -> bool:
        return self.probed > 0

    @property
    def ok(self) -> bool:
        """The KG serves the data (or the probe could not tell: nothing probed)."""
        return not self.conclusive or self.served >= math.ceil(MIN_SERVED_SHARE * self.probed)

    def text(self) -> str:
        if not self.conclusive:
            return (f"{self.kg}: not probed, none of the {self.not_probed} questions read is of a domain with a "
                    f"name search ({', '.join(PROBED_DOMAINS)})")
        parts = ", ".join(f"{d} {s}/{n}" for d, (s, n) in self.domains.items())
        verdict = "serves" if self.ok else "does not serve"
        return (f"{self.kg} {verdict} the data's entities: {self.served} of {self.probed} probed questions name an "
                f"entity its name searches return ({parts}; at least {MIN_SERVED_SHARE:.0%} needed)")

    def as_dict(self) -> dict:
        return {"kg": self.kg, "served": self.served, "probed": self.probed, "ok": self.ok,
                "domains": {d: {"served": s, "probed": n} for d, (s, n) in self.domains.items()},
                "not_probed": self.not_probed}


def probe_kg(examples: Iterable[dict], client, kg: str, limit: int = PROBE_QUESTIONS,
             read_at_most: int = 1000) -> KGProbe:
    """Probes the first `limit` questions of `examples` in `PROBED_DOMAINS` (reading at most `read_at_most`).

    Raises:
        KGClientError: the mock API cannot be reached (a rejected call counts as "not found" instead).
    """
    probe = KGProbe(kg)
    for read, example in enumerate(examples):
        if probe.probed >= limit or read >= read_at_most:
            break
        domain = str(example.get("domain") or "").lower()
        if domain not in SEARCHES or not content_words(example.get("query") or ""):
            probe.not_probed += 1
            continue
        counts = probe.domains.setdefault(domain, [0, 0])
        counts[1] += 1
        counts[0] += serves(example["query"], domain, client)
    return probe
