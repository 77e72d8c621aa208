"""Answers computed from the evidence in code, for the question kinds a model's sentence cannot prove.

The verifier refuses what it cannot check, and three kinds of question cannot be checked by finding the
model's words in the evidence:
- **choice** ("which is taller, A or B?"): the answer is one of the question's own words. Here each option's
  value is found in the evidence (a KG or public fact, a sentence, a table row), the values are compared in code
  (numbers, dates), and the option is the answer only when both values were found. A choice without a
  comparative ("is X owned by A or B?") is answered by the one option the evidence states the relation with.
- **yes/no**: "yes" or "no" only when one evidence sentence states the fact about the entity asked, every word
  of the question in it ("no" when it is negated); otherwise nothing.
- **count** ("how many ..."): the number of distinct things asked about that the evidence lists (a KG or
  public fact's list, or the structured records that match), or a number the evidence states as that count
  ("24 Grand Slam singles titles"), never a year, an ordinal, a price or an id that merely occurs there.

Each check returns a `Computed`: the answer ("" = none), the reason, and the trace (the values, where each came
from, the comparison). The verifier then returns the computed answer, or "i don't know" with the reason.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from models.verify.lexical import normalize, stem
from models.verify.question_form import DIFFERENCE, SUM, options_of
from models.verify.stated_values import SCALE_WORDS, YEAR, dates_in, format_quantity, quantities_in

_STOP = frozenset("the a an of in on at to for by with from and or is are was were be been has have had do does did "
                  "which what who whose whom how many much when where that this it its their his her as than".split())
# comparatives: word -> (kind of value, which option wins)
_COMPARATIVES = {
    **dict.fromkeys(("older", "oldest", "earlier", "earliest", "first", "sooner"), ("date", "min")),
    **dict.fromkeys(("newer", "newest", "later", "latest", "younger", "youngest", "recent"), ("date", "max")),
    **dict.fromkeys(("bigger", "biggest", "larger", "largest", "greater", "greatest", "more", "most", "higher",
                     "highest", "taller", "tallest", "longer", "longest", "heavier", "richer", "wider", "deeper",
                     "faster"), ("number", "max")),
    **dict.fromkeys(("smaller", "smallest", "less", "least", "fewer", "fewest", "lower", "lowest", "shorter",
                     "shortest", "lighter", "cheaper", "slower", "narrower"), ("number", "min")),
}
# words that name the event a date comparison is about, when the question does not ("came out earlier")
_DATE_EVENTS = frozenset("released release premiered premiere born birth founded established formed launched "
                         "opened published debuted aired built completed date came".split())
_GENERIC = frozenset("pictures studios studio inc corp corporation company co ltd llc plc group entertainment "
                     "records films film movie the band team club".split())
_NEGATION = re.compile(r"\b(?:not|never|no|none|neither|nor|didn't|doesn't|isn't|wasn't|aren't|weren't|hasn't|"
                       r"haven't|hadn't|won't|cannot|can't|without)\b", re.IGNORECASE)
_OWNERSHIP = frozenset("owned owns own owner owners subsidiary parent acquired acquisition bought division "
                       "part".split())
_WORD_NUMBERS = {w: i for i, w in enumerate("zero one two three four five six seven eight nine ten eleven twelve "
                                            "thirteen fourteen fifteen sixteen seventeen eighteen nineteen "
                                            "twenty".split())}


@dataclass(frozen=True)
class Computed:
    """An answer computed from the evidence ("" = none could be), why, and what it rests on."""

    answer: str
    reason: str
    trace: dict[str, Any] = field(default_factory=dict)


# ---------------------------------------------------------------------------------------------- units
def _units(evidence: Sequence[str], facts: int) -> list[tuple[int, str]]:
    """(evidence index, text) of every unit a value is read from: a structured fact whole (it is about one
    entity), a table row, a sentence of page text."""
    units = []
    for i, text in enumerate(evidence):
        if i < facts:
            units.append((i, text))
            continue
        for line in (text or "").splitlines():
            if line.count("|") >= 2:
                units.append((i, line))
            else:
                units += [(i, s) for s in re.split(r"(?<=[.!?])\s+(?=[A-Z0-9])", line) if s.strip()]
    return units


def _words(text: str) -> list[str]:
    return normalize(text).split()


def _kin(a: str, b: str) -> bool:
    """One word family: the same stem, or one stem the other's start ("release"/"released", "star"/"starred")."""
    sa, sb = stem(a), stem(b)
    if sa == sb:
        return True
    short, long = sorted((sa, sb), key=len)
    return len(short) >= 4 and long.startswith(short) and len(long) - len(short) <= 2


def _states_all(unit_words: Sequence[str], wanted: Sequence[str]) -> bool:
    return all(any(_kin(w, u) for u in unit_words) for w in wanted)


def _mentions(unit: str, phrase_words: Sequence[str]) -> bool:
    """Whether `unit` names the phrase: its distinctive words all there, as words or (5+ letters) inside a
    longer name ("mobil" in "ExxonMobil"); a phrase of generic words only must be there whole."""
    words = _words(unit)
    joined = " ".join(words)
    distinctive = [w for w in phrase_words if w not in _GENERIC] or list(phrase_words)
    if not distinctive:
        return False
    if len(distinctive) > 1:  # a name of several words stands together ("home depot", not "home" ... "depot")
        return f" {' '.join(distinctive)} " in f" {joined} "
    w = distinctive[0]
    return w in words or (len(w) >= 5 and any(w in token and token != w for token in words))


_NAMESAKE = re.compile(r"\b([A-Z][a-z]+)\s+(?:[A-Z]\.\s*)+([A-Z][a-z]+)\b")


def namesake(unit: str, question_words: Sequence[str]) -> str:
    """A name in `unit` made of two of the question's words with an initial between them ("Michael B. Jordan"
    for "michael jordan"): another person of the same name; "" when there is none."""
    asked = set(question_words)
    for m in _NAMESAKE.finditer(unit):
        if m.group(1).lower() in asked and m.group(2).lower() in asked:
            return m.group(0)
    return ""


def _value_after(unit: str, option_words: Sequence[str], values: list) -> list:
    """In page text, the values written after the option's mention (a value before it is about something
    else: "Tokyo Tower is 333 m tall, taller than the Eiffel Tower")."""
    lower = " ".join(_words(unit))
    phrase = " ".join(w for w in option_words if w != "the")
    at = lower.find(phrase)
    if at < 0:  # not written whole: its most distinctive (longest) word
        at = lower.find(max((w for w in option_words if w not in _GENERIC), key=len, default=phrase))
    return [v for v in values if at >= 0 and lower.find(normalize(v[1]), at) >= 0]


# ---------------------------------------------------------------------------------------------- choice
def check_choice(question: str, evidence: Sequence[str], facts: int = 0) -> Computed:
    """The option the evidence makes the answer: by comparing both options' values, or (no comparative) by the
    one option the evidence states the question's relation with."""
    options = options_of(question)
    if len(options) != 2:
        return Computed("", "the question's two options could not be read", {"options": options})
    q_words = _words(question)
    comparative = next((w for w in q_words if w in _COMPARATIVES), "")
    if comparative:
        return _compare(question, options, comparative, evidence, facts)
    return _stated_relation(question, options, evidence, facts)


def _attribute_words(question: str, options: list[str], comparative: str) -> set[str]:
    """The words naming what is compared ("top speed"): the question's own, less the options, the comparative
    and the kind of thing asked about ("which river is longer": a river is not an attribute)."""
    words = _words(question)
    kind_noun = words[1] if len(words) > 1 and words[0] in ("which", "what") else ""
    option_words = {w for o in options for w in _words(o)}
    return {stem(w) for w in words if w not in _STOP and w not in option_words and w != comparative
            and w != kind_noun and w not in _GENERIC and w not in ("one", "came", "out", "has", "have")}


def _compare(question, options, comparative, evidence, facts) -> Computed:
    value_kind, pick = _COMPARATIVES[comparative]
    found = _values_of(options, value_kind, _attribute_words(question, options, comparative), evidence, facts)
    trace = {"comparative": comparative, "compares": value_kind, "picks": pick,
             "options": {o: {k: v for k, v in found[o].items() if k != "_v"} if o in found else None
                         for o in options}}
    missing = [o for o in options if o not in found]
    if missing:
        return Computed("", f"no {value_kind} for {' and '.join(repr(o) for o in missing)} in the evidence: the "
                            f"options cannot be compared", trace)
    a, b = (found[o]["_v"] for o in options)
    if a == b:
        return Computed("", f"both options have {found[options[0]]['value']}: neither is {comparative}", trace)
    winner = options[0] if (a < b) == (pick == "min") else options[1]
    other = options[1] if winner == options[0] else options[0]
    trace["comparison"] = f"{winner}: {found[winner]['value']} vs {other}: {found[other]['value']} -> {comparative}"
    return Computed(winner, f"compared in code: {trace['comparison']}", trace)


def _values_of(options, value_kind: str, attribute: set[str], evidence, facts) -> dict[str, dict]:
    """Each entity's value of `value_kind` ("date" | "number") in the evidence: from the first unit (structured
    facts first) that names it and not the other, holds one of the `attribute` words (a date: or an event word),
    and, in page text, writes the value after the name. {entity: {value, parsed, from, evidence, _v}}."""
    option_words = [_words(o) for o in options]
    skip = [w for ws in option_words for w in ws if w.isdigit()]
    found: dict[str, dict] = {}
    for index, unit in _units(evidence, facts):
        unit_stems = {stem(w) for w in _words(unit)}
        if value_kind == "date" and not (attribute & unit_stems or _DATE_EVENTS & set(_words(unit))):
            continue
        if value_kind == "number" and attribute and not attribute & unit_stems:
            continue
        named = [o for o, ws in zip(options, option_words) if _mentions(unit, ws)]
        if len(named) != 1 or named[0] in found:
            continue  # a unit naming both options (or neither) cannot say whose value it gives
        values = dates_in(unit) if value_kind == "date" else quantities_in(unit, skip)
        if index >= facts:  # page text: only a value written after the option's mention is the option's
            values = _value_after(unit, option_words[options.index(named[0])], values)
        if values:
            value, written = values[0]
            found[named[0]] = {"value": written, "parsed": str(value), "from": unit.strip()[:300],
                               "evidence": index, "_v": value}
        if len(found) == len(options):
            break
    return found


def _stated_relation(question, options, evidence, facts) -> Computed:
    option_words = [_words(o) for o in options]
    subject = [w for w in _words(question) if w not in _STOP and w not in {x for ws in option_words for x in ws}]
    relation = [w for w in subject if w in _OWNERSHIP or stem(w) in {stem(o) for o in _OWNERSHIP}]
    subject = [w for w in subject if w not in relation]
    family = _OWNERSHIP if relation else {stem(w) for w in subject}
    stated: dict[str, str] = {}
    for index, unit in _units(evidence, facts):
        words = set(_words(unit))
        if not subject or sum(w in words for w in subject) * 2 < len(subject) or _NEGATION.search(unit):
            continue
        if relation and not family & words:
            continue
        named = [o for o, ws in zip(options, option_words) if _mentions(unit, ws)]
        if len(named) == 1:
            stated.setdefault(named[0], unit.strip()[:300])
    trace = {"relation": relation, "subject": subject, "stated": stated}
    if len(stated) == 1:
        [(option, sentence)] = stated.items()
        return Computed(option, f"the evidence states it of {option!r} only: {sentence[:160]}", trace)
    if not stated:
        return Computed("", "no evidence sentence states the relation with either option", trace)
    return Computed("", "the evidence states the relation with both options", trace)


# ---------------------------------------------------------------------------------------------- sum, difference
def check_arithmetic(question: str, evidence: Sequence[str], facts: int = 0) -> Computed:
    """A sum or difference the question asks for, computed from both values found in the evidence, or nothing."""
    q = " ".join((question or "").lower().split())
    difference, total = DIFFERENCE.search(q), SUM.search(q)
    if difference:
        a, b = difference.group("a") or difference.group("c"), difference.group("b") or difference.group("d")
        attribute_text, operation = difference.group("attr1") or difference.group("attr2") or "", "difference"
    elif total:
        a, b, attribute_text, operation = total.group("a"), total.group("b"), total.group("attr"), "sum"
    else:
        return Computed("", "not a sum or difference of two things", {})
    entities = [e.strip(" '") for e in (a, b)]
    attribute = {stem(w) for w in _words(attribute_text or q) if w not in _STOP and w not in _GENERIC
                 and w not in {x for e in entities for x in _words(e)} and w not in _COMPARATIVES
                 and w not in ("difference", "combined", "total", "sum", "much")}
    found = _values_of(entities, "number", attribute, evidence, facts)
    trace = {"operation": operation, "of": {e: {k: v for k, v in found[e].items() if k != "_v"} if e in found
                                             else None for e in entities}}
    missing = [e for e in entities if e not in found]
    if missing:
        return Computed("", f"no value for {' and '.join(repr(e) for e in missing)} in the evidence: the {operation} "
                            f"cannot be computed", trace)
    x, y = (found[e]["_v"] for e in entities)
    result = abs(x - y) if operation == "difference" else x + y
    trace["computation"] = f"{found[entities[0]]['value']} {'-' if operation == 'difference' else '+'} " \
                           f"{found[entities[1]]['value']} = {format_quantity(result)}"
    return Computed(format_quantity(result), f"computed in code: {trace['computation']}", trace)


# ---------------------------------------------------------------------------------------------- yes/no
_YES_NO_FILLER = frozenset("ever any some still also really actually yes no currently".split())


def check_yes_no(question: str, evidence: Sequence[str], facts: int = 0) -> Computed:
    """ "yes" when a sentence states the fact (every content word of the question in it), "no" when that
    sentence negates it; nothing when no sentence states it or two disagree."""
    content = [w for w in _words(question) if w not in _STOP and w not in _YES_NO_FILLER]
    if options_of(question) or len(content) < 2:
        return Computed("", "not a yes/no question about one fact", {"content": content})
    verdicts: dict[str, str] = {}
    for index, unit in _units(evidence, facts):
        if _states_all(_words(unit), content) and not namesake(unit, content):
            verdicts.setdefault("no" if _NEGATION.search(unit) else "yes", unit.strip()[:300])
    trace = {"content": content, "sentences": verdicts}
    if len(verdicts) == 1:
        [(answer, sentence)] = verdicts.items()
        return Computed(answer, f"the evidence states it{' negated' if answer == 'no' else ''}: {sentence[:160]}",
                        trace)
    if verdicts:
        return Computed("", "the evidence states it and its negation", trace)
    return Computed("", "no evidence sentence states the fact asked about (every word of the question)", trace)


# ---------------------------------------------------------------------------------------------- count
_COUNT_Q = re.compile(r"\bhow many\s+(.+?)\s+(?:do|does|did|is|are|was|were|has|have|had|will|can|could|in|on|at|"
                      r"of|for|were|won|did)\b|\bhow many\s+(\w+)", re.IGNORECASE)


def _counted_noun(question: str) -> list[str]:
    m = _COUNT_Q.search(" ".join((question or "").lower().split()))
    phrase = (m.group(1) or m.group(2)) if m else ""
    return [w for w in _words(phrase) if w not in _STOP]


def check_count(question: str, evidence: Sequence[str], facts: int = 0, listed: str = "") -> Computed:
    """The count the question asks for: the items of a listed value (`listed`, a KG value), of a structured fact
    listing the counted thing, the structured records that match, or a count stated with the counted noun."""
    noun = _counted_noun(question)
    head = stem(noun[-1]) if noun else ""
    entity = [w for w in _words(question) if w not in _STOP and w not in noun and w not in ("win", "won", "wins")]
    trace: dict[str, Any] = {"counts": noun, "about": entity}
    if listed:
        items = _list_items(listed)
        trace.update(listed=listed, items=items)
        if items and all(re.fullmatch(r"[$\u20ac\u00a3]?-?[\d,.]+%?", i) for i in items):
            # "6, 2" for "how many goals ...": quantities, whose number of items is no count of anything asked
            return Computed("", f"the KG value {listed!r} lists quantities, not the things to count", trace)
        if len(items) > 1:
            return Computed(str(len(items)), f"counted in code: {len(items)} items listed", trace)
    for index, unit in _units(evidence[:facts], facts):
        m = re.search(r"\bThe (\w[\w ]*?) of (.+?) (?:is|are) (.+?)\.?$", unit.strip())
        if m and head and stem(m.group(1).split()[-1]) == head and _names_entity(m.group(2), entity):
            items = _list_items(m.group(3))
            trace.update(listed=m.group(0)[:300], items=items, evidence=index)
            return Computed(str(len(items)), f"counted in code: {len(items)} {noun[-1]} listed", trace)
    records = _matching_records(question, entity, evidence[:facts])
    if records:
        trace.update(records=[r[:200] for r in records])
        return Computed(str(len(records)), f"counted in code: {len(records)} matching records", trace)
    stated = _stated_counts(noun, entity, evidence, facts, _words(question))
    trace["stated"] = stated
    numbers = {s["count"] for s in stated}
    if len(numbers) == 1:
        return Computed(stated[0]["count"], f"stated as the count: {stated[0]['from'][:160]}", trace)
    if numbers:
        return Computed("", f"the evidence states different counts ({', '.join(sorted(numbers))})", trace)
    return Computed("", f"no count of {' '.join(noun) or 'it'} in the evidence (a number that merely occurs there, "
                        "a year, an ordinal or a price, is not one)", trace)


def _list_items(text: str) -> list[str]:
    items = [i.strip(" .") for i in re.split(r",\s*(?:and\s+)?|\s+and\s+", text or "") if i.strip(" .")]
    return list(dict.fromkeys(items))


def _names_entity(text: str, entity: Sequence[str]) -> bool:
    """At least half the entity's words are in `text`, and it does not name a namesake instead."""
    words = {stem(w) for w in _words(text)}
    return bool(entity) and sum(stem(w) in words for w in entity) * 2 >= len(entity) and not namesake(text, entity)


_VALUE_STATEMENT = re.compile(r"The [\w ]+? of .+? (?:is|are) [^;]+\.?$")


def _matching_records(question: str, entity: Sequence[str], records: Sequence[str]) -> list[str]:
    """The structured records holding every word the question pins the count with (the entity, "72nd", ...);
    for a question about wins, only the records of a win ("(won)"), never "(did not win)"."""
    if not entity or not records:
        return []
    wins = bool(re.search(r"\b(?:win|won|wins)\b", question.lower()))
    out = []
    for record in records:
        if _VALUE_STATEMENT.match(record.strip()):
            continue  # "The GF of Arsenal vs Brentford ... is 2.": one attribute's value, not a record of the counted
        words = {stem(w) for w in _words(record)}
        if not all(stem(w) in words for w in entity):
            continue
        if wins and (not re.search(r"\bwon\b|\bwinner\b", record, re.IGNORECASE) or
                     re.search(r"did not win|\bnominated\b(?!.*\bwon\b)", record, re.IGNORECASE)):
            continue
        out.append(record)
    return list(dict.fromkeys(out))


_COUNTERS = frozenset("times time years days people things ones occasions".split())
_VERB_HINTS = frozenset("won win wins beat lost lose played play scored score ran run visited visit hosted host "
                        "married appeared appear released release".split())


def _stated_counts(noun: Sequence[str], entity: Sequence[str], evidence: Sequence[str], facts: int,
                   question_words: Sequence[str] = ()) -> list[dict]:
    """Counts the evidence states with the counted noun ("24 Grand Slam men's singles titles", "four members") in a
    text that names the entity; never a year, an ordinal ("72nd"), a rank ("top 10") or a price."""
    if not noun:
        return []
    # every word of the counted thing follows the number ("24 Grand Slam men's singles titles"; "8 Ballon d'Or
    # awards" is no count of "nba mvp awards"); "how many people live ..." -> the phrase is "people live": its
    # first word is enough when the rest is the question's verb
    needed = [w for w in noun if w not in _GENERIC]
    generic = noun[-1] in _COUNTERS
    verbs = [w for w in question_words if w in _VERB_HINTS or (w.endswith("ed") and len(w) > 4)] if generic else []
    out = []
    for index, text in enumerate(evidence):
        if not _names_entity(text, entity):
            continue
        words = re.findall(r"[$\u20ac\u00a3#]?[\w'.,-]+", text)
        for i, word in enumerate(words):
            count = _as_count(word)
            if count is None or (i and words[i - 1].lower() in ("top", "no.", "#", "number")):
                continue
            after = [w.strip(".,;:").lower() for w in words[i + 1:i + 6]]
            if after and after[0] in SCALE_WORDS and len(after[0]) > 2:  # "14 million people": the count is 14 million
                count, after = f"{count} {after[0]}", after[1:]
            if not (all(any(_kin(n, w) for w in after) for n in needed) or
                    (len(needed) > 1 and any(_kin(needed[0], w) for w in after[:2]))):
                continue
            if verbs and not any(_kin(v, w.strip(".,;:").lower()) for v in verbs for w in words[max(0, i - 8):i]):
                continue  # "missed the cut four times" is no count of the times he won
            out.append({"count": count, "from": " ".join(words[max(0, i - 8):i + 8]), "evidence": index})
    return out


def _as_count(word: str) -> str | None:
    """A count as written ("24", "1,200", "four" -> "4"); None for a year ("2000"), an ordinal ("72nd"), a price
    ("$3"), a decimal or anything else."""
    w = word.strip(".,;:()").lower()
    if w in _WORD_NUMBERS:
        return str(_WORD_NUMBERS[w])
    if re.fullmatch(r"\d{1,3}(?:,\d{3})+|\d+", w) and not YEAR.fullmatch(w):
        return w
    return None
