"""Places written with their qualifier ("paris, texas", "portland, oregon"): one entity, not the state.

A search for "texas" finds Texas; a search for "paris" finds Paris, France. The question means the city of that
state, so a program argument naming only one half is written whole again (`slots.py`), and an entity that a
program found for such a question is refused when it is the qualifier itself (`fit.py`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from models.text import kg_match_key

QUALIFIERS = tuple(sorted("""alabama alaska arizona arkansas california colorado connecticut delaware florida georgia
hawaii idaho illinois indiana iowa kansas kentucky louisiana maine maryland massachusetts michigan minnesota
mississippi missouri montana nebraska nevada ohio oklahoma oregon pennsylvania tennessee texas utah vermont
virginia washington wisconsin wyoming""".split() + ["new hampshire", "new jersey", "new mexico", "new york",
                                                     "north carolina", "north dakota", "rhode island",
                                                     "south carolina", "south dakota", "west virginia",
                                                     "district of columbia", "d.c.", "dc", "ontario", "quebec",
                                                     "british columbia", "alberta"], key=len, reverse=True))
# words that end a city's name when read backwards from the comma ("how many people live in | portland, oregon")
_BEFORE_NAME = frozenset("""a an the in of at for from to near is was are were does did do live lives living located
located situated what which where who how many much people population county city town state capital mayor
about and or on by born call calls called named visit visiting""".split())
# anchored at the comma, and the name before it read backwards: linear in the question's length (a pattern that
# matched the name forwards was quadratic in it)
_QUALIFIED = re.compile(r",\s*(" + "|".join(re.escape(q) for q in QUALIFIERS) + r")\b")
_LETTERS = frozenset("abcdefghijklmnopqrstuvwxyz")
_NAME_CHARS = _LETTERS | frozenset(".'- ")


@dataclass(frozen=True)
class QualifiedPlace:
    city: str
    qualifier: str

    @property
    def whole(self) -> str:
        return f"{self.city}, {self.qualifier}"


def qualified_places(question: str) -> tuple[QualifiedPlace, ...]:
    """The "City, State" names of a question ("paris, texas"), the city read back to the first function word."""
    text, out, taken = question.lower(), [], 0
    for match in _QUALIFIED.finditer(text):
        start = match.start()
        while start > taken and text[start - 1] in _NAME_CHARS:
            start -= 1
        while start < match.start() and text[start] not in _LETTERS:  # a name starts with a letter
            start += 1
        if start >= match.start():
            continue
        taken = match.end()
        words = text[start:match.start()].split()
        city: list[str] = []
        for word in reversed(words):
            if word in _BEFORE_NAME:
                break
            city.insert(0, word)
        if city:
            out.append(QualifiedPlace(" ".join(city[-4:]), match.group(1)))
    return tuple(out)


def half_of(argument: str, places: tuple[QualifiedPlace, ...]) -> QualifiedPlace | None:
    """The place whose city or qualifier alone `argument` names ("texas", "paris"), or None."""
    written = kg_match_key(argument)
    for place in places:
        if written in (kg_match_key(place.city), kg_match_key(place.qualifier)):
            return place
    return None


def is_qualifier(entity: str, places: tuple[QualifiedPlace, ...]) -> QualifiedPlace | None:
    """The place whose qualifier `entity` (a found entity's name) is, or None."""
    name = kg_match_key(entity)
    return next((p for p in places if name == kg_match_key(p.qualifier)), None)
