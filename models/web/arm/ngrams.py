"""What a question's pages hold, as word n-grams (ARM §3.1): the vocabulary the aligned keywords must come from.

Words are lower-cased runs of letters and digits, with inner `& ' . -` kept ("p&g", "o'neal", "sr-71",
"3.5"), so an n-gram is a phrase a reader would recognise in the page. The index holds every 1..`max_n`-gram of
every object (n-grams do not cross a line: a table row or a text line is a unit), and for each n-gram the
objects holding it.

`related(keyword)` is the CPU profile's candidate set for the constrained rewrite: the n-grams sharing a word
stem (its first `stem_chars` letters) with the keyword, so a 135M model chooses among "photograph", "photos",
"photograph editing apps" for "photographs" rather than among every phrase of five pages. Candidates are
`informative`: no stop word at either end, no leading number unless the keyword has one. Every candidate is an
n-gram of the index either way, which is what the constraint guarantees.
"""
from __future__ import annotations

import re
from collections import Counter
from typing import Iterable, Sequence

from models.llm.constraints import has_prefix

# Function words and the question's own frame ("name three ...", "how many ..."): they split keywords.
STOP_WORDS = frozenset("""
a an and are as at be been being but by can could did do does for from had has have he her his how i if in into
is it its me my no not of on or our she should so such that the their them then there these they this those to
up us was we were what when where which while who whom whose why will with would you your
all any ever give list many more most much name one some tell three two
""".split())
WORD = re.compile(r"[a-z0-9](?:[a-z0-9&'.-]*[a-z0-9])?")


def words(text: str) -> list[str]:
    """The words of `text`, lower-cased (see the module docstring)."""
    return WORD.findall((text or "").lower())


def ngrams_of(text: str, max_n: int) -> Iterable[str]:
    """Every 1..`max_n`-gram of each line of `text`, in order (repeats included)."""
    for line in (text or "").split("\n"):
        tokens = words(line)
        for n in range(1, max_n + 1):
            for i in range(len(tokens) - n + 1):
                yield " ".join(tokens[i:i + n])


def informative(gram: str, numbers: bool = False) -> bool:
    """An n-gram worth rewriting a keyword as: it neither starts nor ends with a stop word, and (unless
    `numbers`) does not start with a number ("10 companies", "1.3 yield" are list numbering and table cells)."""
    tokens = gram.split(" ")
    if tokens[0] in STOP_WORDS or tokens[-1] in STOP_WORDS:
        return False
    return numbers or not tokens[0][0].isdigit()


def stem(word: str, chars: int) -> str:
    """A crude stem: the first `chars` characters (enough to join photograph/photographs, margin/margins)."""
    return word[:chars]


class NgramIndex:
    """The n-grams of a question's objects (ARM's n-gram collection), with their frequencies.

    Args:
        texts: the serialised objects.
        max_n: the longest n-gram (ARM: 3).
        stem_chars: stem length of `related`.
    """

    def __init__(self, texts: Sequence[str], max_n: int = 3, stem_chars: int = 5):
        if max_n < 1:
            raise ValueError(f"max_n must be >= 1, got {max_n}")
        self.max_n, self.stem_chars = max_n, stem_chars
        self.counts: Counter[str] = Counter()
        for text in texts:
            self.counts.update(set(ngrams_of(text, max_n)))  # document frequency
        self.sorted = sorted(self.counts)
        self._frequent: dict[int, list[str]] = {}  # limit -> most_frequent(limit): the same for every keyword
        self._by_stem: dict[str, set[str]] = {}
        for gram in self.sorted:
            for word in gram.split(" "):
                self._by_stem.setdefault(stem(word, stem_chars), set()).add(gram)

    def __len__(self) -> int:
        return len(self.sorted)

    def __contains__(self, gram: str) -> bool:
        return gram in self.counts

    def has_prefix(self, prefix: str) -> bool:
        """True when some n-gram starts with `prefix`."""
        return has_prefix(self.sorted, prefix)

    def related(self, keyword: str, limit: int) -> list[str]:
        """The n-grams sharing a word stem with `keyword`: those sharing the most stems first, then the more
        frequent, then alphabetical; at most `limit`."""
        tokens = words(keyword)
        stems = {stem(w, self.stem_chars) for w in tokens}
        numbers = any(w[0].isdigit() for w in tokens)
        shared: Counter[str] = Counter()
        for s in stems:
            shared.update(g for g in self._by_stem.get(s, ()) if informative(g, numbers))
        ranked = sorted(shared, key=lambda g: (-shared[g], -self.counts[g], g))
        return ranked[:limit]

    def most_frequent(self, limit: int) -> list[str]:
        """The `limit` informative n-grams held by the most objects."""
        if limit not in self._frequent:
            ranked = sorted((g for g in self.sorted if informative(g)), key=lambda g: (-self.counts[g], g))
            self._frequent[limit] = ranked[:limit]
        return self._frequent[limit]
