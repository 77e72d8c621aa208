"""Does a prediction give the same answer as one gold answer? Decided without an LLM, or left open.

`match_answer(query, gold, prediction)` returns a `Match`: correct (1), incorrect (0) or undecided (None),
with a one-line reason. It is deliberately conservative: "correct" only when the prediction states the
gold's answer and nothing that competes with it; "incorrect" when the prediction states a different
answer of the gold's kind; undecided otherwise (the caller asks an LLM judge or leaves it unjudged).

Checks, in order (the first that applies decides):
1. empty prediction; same text after normalisation; hedging ("maybe", "i think", "not sure", "either",
   or "x or y" where the question offers no choice: CRAG's V3 rubric scores an unsure answer 0);
2. the gold's kind: yes/no, a date (a bare year only when the question asks for a year or "when"),
   a match score ("3-1"), a number (with unit, currency, percentage, scale word or spelled out), a list
   (order-free, every member, no extra member);
3. anything else is an entity: a comparison question's other option is wrong; the gold inside a
   prediction that adds nothing beyond the question's words (or only a short description) is right; a
   prediction sharing no content word (nor acronym) with a short gold is wrong, as is another person's
   name sharing only part of it; the gold's last name(s) alone are right;
4. a long gold sentence with figures: figures none of which are the gold's are wrong.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from evaluation.normalize import (Date, Number, contains_phrase, find_dates, find_numbers, numbers_text, parse_date,
                                   remove_dates, same_number, same_word, split_list)
from models.text import answer_key, clean, words

STOPWORDS = frozenset(
    "a an the of in on at to for by from with and or is are was were be been it its this that these those "
    "as has have had do does did which who whom what when where how than then there their they he she his her "
    "him them we our you your i me my answer final correct based given information question named called "
    "known also s".split())
HEDGES = re.compile(r"\b(maybe|perhaps|possibly|probably|likely|might|may be|could be|not sure|unsure|uncertain|"
                    r"i think|i believe|i guess|unclear|cannot (?:be )?(?:determined?|confirmed?|say|answer|find)|"
                    r"can't (?:determine|confirm|say|answer|find)|unable to|no information|not enough information|"
                    r"insufficient information|do not know|don't know|not known|it is unknown|either)\b")
NEGATION = re.compile(r"\b(not|no|never|n't|neither|nor|without)\b|n't\b")
RULED_OUT = re.compile(r",\s*(?:and\s+)?not\s+[a-z][a-z .'-]*$")
CONTRAST = re.compile(r"\b(or|but|however|although|though|instead|rather|except|either|whereas)\b")
BOUNDS = re.compile(r"\b(over|more than|greater than|at least|less than|fewer than|under|below|above|up to|"
                    r"at most|nearly|almost|just under|just over)\s*$")
LEAD_IN = frozenset({"the", "answer", "is", "final", "short", "my"})
YES, NO = frozenset({"yes", "yeah", "yep", "true", "correct"}), frozenset({"no", "nope", "false", "incorrect"})
WIN = re.compile(r"(\w+) (?:beat|defeated|won|edged|thrashed|overcame|downed)\b")
LOSS = re.compile(r"\b(?:lost|loss|lose|defeat|beaten)\b")
NOT_A_SIDE = frozenset({"score", "match", "game", "against", "final", "result", "vs", "versus", "team"})
YEAR_QUESTION = re.compile(r"\b(year|when|what date|which date)\b")
LIST_QUESTION = re.compile(r"\b(which|what|who|name|list)\b.*\b\w+s\b|\b(members|countries|all)\b")
SCORE = re.compile(r"(?<![\d.])(\d{1,3})\s*-\s*(\d{1,3})(?!\d|\.\d)")
UNITS = {"m": "m", "meter": "m", "meters": "m", "metre": "m", "metres": "m", "km": "km", "kilometers": "km",
         "kilometres": "km", "ft": "ft", "feet": "ft", "foot": "ft", "mi": "mi", "mile": "mi", "miles": "mi",
         "kg": "kg", "kilograms": "kg", "lb": "lb", "lbs": "lb", "pounds": "lb", "c": "c", "celsius": "c",
         "f": "f", "fahrenheit": "f", "years": "y", "year": "y", "months": "mo", "days": "d", "hours": "h",
         "minutes": "min", "seconds": "s", "usd": "$", "dollars": "$", "eur": "€", "euros": "€", "gbp": "£"}
LANGUAGE_CODES = {"en": "english", "fr": "french", "de": "german", "es": "spanish", "it": "italian",
                  "ja": "japanese", "zh": "chinese", "ko": "korean", "ru": "russian", "pt": "portuguese",
                  "hi": "hindi", "sv": "swedish", "da": "danish", "nl": "dutch", "cn": "chinese"}
MAX_LIST_ITEM_WORDS = 5  # longer "items" are clauses of a sentence, not members of a list
CORPORATE_SUFFIXES = frozenset("group inc incorporated corp corporation co company ltd limited plc llc ag sa se "
                               "nv holdings".split())
MAX_CONTAINING_WORDS = 25  # a longer prediction "containing" the gold is a different, riskier thing
MAX_ENTITY_WORDS = 6  # longer golds are sentences: sharing no word says less about them


@dataclass(frozen=True)
class Match:
    """1: the prediction gives the gold's answer; 0: it gives another; None: undecided."""

    score: int | None
    reason: str


UNDECIDED = Match(None, "undecided")


def match_answer(query: str, gold: str, prediction: str) -> Match:
    """The verdict for one (question, gold answer, prediction); see the module docstring."""
    gold = LANGUAGE_CODES.get(answer_key(gold), gold)  # the movie KG's original_language is a code
    if not words(prediction):
        return Match(0, "empty prediction")
    if answer_key(prediction) == answer_key(gold):
        return Match(1, "same answer after normalisation")
    hedge = HEDGES.search(clean(prediction))
    if hedge:
        return Match(0, f"hedged answer ({hedge.group(0)!r})")
    if "or" in words(prediction) and "or" not in words(query):
        return Match(0, "names alternatives ('or') where one answer is asked")
    for check in (_yes_no, _date, _match_score, _number, _list, _comparison, _entity, _sentence_numbers):
        verdict = check(query, gold, prediction)
        if verdict is not None:
            return verdict
    return UNDECIDED


# ---------------------------------------------------------------------------------------------- yes / no
def _polarity(text: str) -> bool | None:
    """True for an answer that opens with yes ("Yes, ...", "The answer is yes."), False for no, else None."""
    tokens = words(text)
    while tokens and tokens[0] in LEAD_IN:
        tokens = tokens[1:]
    if not tokens:
        return None
    return True if tokens[0] in YES else False if tokens[0] in NO else None


def _yes_no(query: str, gold: str, prediction: str) -> Match | None:
    expected = _polarity(gold) if len(words(gold)) == 1 else None
    if expected is None:
        return None
    said = _polarity(prediction)
    if said is None and NEGATION.search(clean(prediction)):
        said = False  # "it is not", "apple did not stop paying": a negative answer without a leading no
    if said is None and _restates(query, prediction):
        said = True  # "the danube flows through more countries than the rhine": the question, affirmed
    if said is None:
        return UNDECIDED
    return Match(1, "same yes/no") if said == expected else Match(0, "opposite yes/no")


YES_NO_OPENERS = frozenset("is are was were does do did has have had can could will would".split())


def _restates(query: str, prediction: str) -> bool:
    """Whether the prediction is the yes/no question said as a statement: its content words are the question's
    (a word may differ by an ending: "flows" / "flow"), in the question's order, with no negation or contrast."""
    asked, said = words(query), words(prediction)
    if not asked or asked[0] not in YES_NO_OPENERS or NEGATION.search(clean(prediction)) or \
            CONTRAST.search(clean(prediction)):
        return False
    asked = [w for w in asked[1:] if w not in STOPWORDS]
    said = [w for w in said if w not in STOPWORDS]
    position = 0
    for word in said:
        match = next((i for i in range(position, len(asked)) if same_word(word, asked[i])), None)
        if match is None:
            return False
        position = match + 1
    return len(said) >= max(2, len(asked) - 1)  # at most one word of the question left out


# ---------------------------------------------------------------------------------------------- dates
def _date(query: str, gold: str, prediction: str) -> Match | None:
    expected = parse_date(gold)
    if expected is None or (expected.month is None and not YEAR_QUESTION.search(clean(query))):
        return None
    asked = set(find_dates(query))
    stated = [d for d in find_dates(prediction) if d not in asked or d == expected]
    if not stated:
        return Match(0, "no date in the prediction")
    same = [d for d in stated if _same_date(expected, d)]
    others = [d for d in stated if not _same_date(expected, d) and not _coarser_same(expected, d)]
    if same and not others:
        return Match(1, f"same date ({_show(expected)})")
    if _same_date(expected, stated[0]) and not CONTRAST.search(clean(prediction)):
        return Match(1, f"the gold date ({_show(expected)}) first, other dates as detail")
    if same:
        return Match(None, f"the gold date and other dates ({', '.join(map(_show, others))})")
    if others:
        return Match(0, f"a different date ({_show(others[0])}, gold {_show(expected)})")
    return Match(0, f"less precise than the gold date {_show(expected)}")


def _same_date(expected: Date, stated: Date) -> bool:
    """Equal at the gold's precision: a gold year matches any date in that year; a full date needs the day."""
    return stated.year == expected.year and (expected.month is None or stated.month == expected.month) and \
        (expected.day is None or stated.day == expected.day)


def _coarser_same(expected: Date, stated: Date) -> bool:
    return stated.year == expected.year and (stated.month is None or stated.month == expected.month) and \
        stated.day is None


def _show(date: Date) -> str:
    return "-".join(f"{part:02d}" for part in (date.year, date.month, date.day) if part is not None)


# ---------------------------------------------------------------------------------------------- scores
def _match_score(query: str, gold: str, prediction: str) -> Match | None:
    """A match score gold ("3-1", "arsenal won 3-1"): the same score, and the same winner when one is named
    (the gold's, else the side the question names first)."""
    expected = SCORE.search(clean(gold))
    if expected is None or len(words(SCORE.sub(" ", clean(gold)))) > 3:
        return None
    goals = (int(expected.group(1)), int(expected.group(2)))
    stated = [(int(a), int(b)) for a, b in SCORE.findall(remove_dates(clean(prediction)))]
    if not stated:
        return UNDECIDED
    if all(s == goals for s in stated):
        winner_agrees = _winner_agrees(query, gold, prediction, goals[0] > goals[1]) if goals[0] != goals[1] \
            else True
        if winner_agrees is False:
            return Match(0, f"the score {goals[0]}-{goals[1]} with the other side winning")
        if winner_agrees is None:
            return Match(None, "the gold score, but whose win is unclear")
        return Match(1, f"same score {goals[0]}-{goals[1]}")
    if any(s == goals for s in stated) or (goals[1], goals[0]) in stated:
        return Match(None, "the gold score among others, or reversed")
    return Match(0, f"a different score ({stated[0][0]}-{stated[0][1]})")


def _winner_agrees(query: str, gold: str, prediction: str, first_side_won: bool) -> bool | None:
    """Whether a prediction that says who won agrees with the gold: with the winner the gold names, else
    with the score read from the side the question names first ("arsenal's match against liverpool": 3-1
    means arsenal won). True when it names no winner; None when its winner is not a side the question names."""
    said = " ".join(words(prediction))
    found = WIN.search(said)
    if found is None:
        return None if LOSS.search(said) else True
    winner = found.group(1)
    gold_winner = WIN.search(" ".join(words(gold)))
    if gold_winner is not None:
        return winner == gold_winner.group(1)
    sides = [w for w in words(query) if w not in STOPWORDS and w not in NOT_A_SIDE]
    if winner not in sides:
        return None
    return (winner == sides[0]) == first_side_won


# ---------------------------------------------------------------------------------------------- numbers
def _number(query: str, gold: str, prediction: str) -> Match | None:
    gold_numbers = find_numbers(gold)
    if len(gold_numbers) != 1 or len([w for w in words(gold) if not re.fullmatch(r"[\d.]+", w)]) > 3:
        return None
    expected = gold_numbers[0]
    asked = {n.value for n in find_numbers(query, keep_dates=True)}
    text = clean(prediction)
    stated = [n for n in find_numbers(prediction) if n.value not in asked or same_number(expected, n)]
    if not stated:
        if "," in remove_dates(text) or " and " in text:
            return UNDECIDED  # maybe an enumeration that counts the answer ("a, b, c and d" for 4)
        return Match(0, "no number in the prediction")
    gold_unit = _unit_after(gold, expected)
    verdicts = [(n, same_number(expected, n)) for n in stated]
    matches = [n for n, same in verdicts if same]
    if any(_unit_after(prediction, n) not in (None, gold_unit) and gold_unit for n, _ in verdicts):
        return Match(None, "a different unit from the gold's")
    if matches and all(same for _, same in verdicts):
        bound = BOUNDS.search(numbers_text(prediction)[:matches[0].start])
        if bound:
            return Match(0, f"a bound ({bound.group(1)!r}) instead of the exact figure")
        return Match(1, f"same number ({_show_number(expected)})")
    if verdicts[0][1] and not CONTRAST.search(text):
        return Match(1, f"the gold number ({_show_number(expected)}) first, other figures as detail")
    if matches or any(same is None for _, same in verdicts):
        return Match(None, "the gold number among others, or too coarse to tell")
    members = split_list(remove_dates(text))
    if len(members) > 1 and all(re.fullmatch(r"[\d.,]+", m) for m in members) and "how many" in clean(query):
        return Match(None, "an enumeration for a count")  # "19, 21, 25 and 30" are four album titles
    return Match(0, f"a different number ({_show_number(stated[0])}, gold {_show_number(expected)})")


def _unit_after(text: str, number: Number) -> str | None:
    follow = re.match(r"\s*([a-z$€£]+)", numbers_text(text)[number.end:])
    return UNITS.get(follow.group(1)) if follow else None


def _show_number(number: Number) -> str:
    return f"{number.value:g}{'%' if number.percent else ''}"


# ---------------------------------------------------------------------------------------------- lists
def _list(query: str, gold: str, prediction: str) -> Match | None:
    items = split_list(gold)
    if len(items) < 2 or any(len(item.split()) > MAX_LIST_ITEM_WORDS for item in items) or \
            ("," not in gold and not LIST_QUESTION.search(clean(query))):
        return None
    present = [item for item in items if contains_phrase(prediction, item)]
    if not present:
        return None  # maybe aliases: the entity rule decides on shared words
    if len(present) < len(items):
        missing = [item for item in items if item not in present]
        return Match(0, f"missing list member(s): {', '.join(missing)}")
    extra = _extra_member(prediction, items)
    if extra:
        return Match(0, f"an extra list member ({extra!r})")
    return Match(1, f"all {len(items)} list members, no extra one")


def _extra_member(prediction: str, items: list[str]) -> str | None:
    """Another enumerated item between, before or after the gold's members, if any."""
    text = clean(prediction)
    spans = sorted(_find(text, item) for item in items)
    first, last = spans[0][0], spans[-1][1]
    between = text[first:last]
    for item in items:
        between = re.sub(_item_pattern(item), " ", between)
    leftover = [p.strip(" .") for p in re.split(r"\s*(?:,|;|\band\b|&|\bor\b)\s*", between) if p.strip(" .")]
    if leftover:
        return leftover[0]
    after = re.match(r"\s*(?:,\s*(?:and\s+)?|\s+and\s+|\s*&\s*)([a-z][a-z' -]*)", text[last:])
    if after and after.group(1).split()[0] not in STOPWORDS:
        return after.group(1).strip()
    before = re.search(r"([a-z][a-z' -]*?)\s*,\s*$", text[:first])
    return before.group(1).strip() if before else None


def _item_pattern(item: str) -> str:
    return r"\b(?:the\s+)?" + r"[\W_]+".join(map(re.escape, words(item))) + r"\b"


def _find(text: str, item: str) -> tuple[int, int]:
    found = re.search(_item_pattern(item), text)
    return found.span() if found else (0, 0)


# ---------------------------------------------------------------------------------------------- entities
def _content(text: str) -> set[str]:
    return {w for w in words(text) if w not in STOPWORDS}


def _acronym(text: str) -> str:
    return "".join(w[0] for w in words(text) if w not in STOPWORDS)


def _options(query: str) -> list[str]:
    """The two options of a comparison question ("which is taller, the eiffel tower or the statue of
    liberty?"), or none."""
    pieces = re.split(r",|:|\bbetween\b", clean(query))
    parts = re.split(r"\s+or\s+", pieces[-1].strip(" ?."))
    if len(parts) != 2 or not all(words(p) for p in parts):
        return []
    if len(pieces) == 1:  # "is pixar owned by warner bros or walt disney?": as long as the second
        parts[0] = " ".join(words(parts[0])[-len(words(parts[1])):])
    return [answer_key(p) for p in parts]


def _comparison(query: str, gold: str, prediction: str) -> Match | None:
    options = _options(query)
    if answer_key(gold) not in options:
        return None
    other = options[1 - options.index(answer_key(gold))]
    has_gold, has_other = contains_phrase(prediction, gold), contains_phrase(prediction, other)
    text = " ".join(words(prediction))
    if has_gold and has_other and _ruled_out(other, text) and not _ruled_out(answer_key(gold), text):
        return Match(1, f"the gold option, ruling out {other!r}")
    if NEGATION.search(clean(prediction)):
        return Match(None, "a negation in a comparison answer")
    if has_gold and has_other:
        head, _, _ = text.partition(" than ")
        if " than " in f" {text} " and (answer_key(gold) in head) != (other in head):
            winner_is_gold = answer_key(gold) in head
            return Match(int(winner_is_gold), "the option before 'than' is " + ("the gold" if winner_is_gold
                                                                                 else f"{other!r}"))
        return Match(None, "names both options")
    if has_other:
        return Match(0, f"names the other option ({other!r})")
    said, gold_words, other_words = _content(prediction), _content(gold), _content(other)
    if said and said <= gold_words - other_words and len(words(prediction)) <= 4:
        return Match(1, "a short form of the gold option")  # "disney" for "walt disney"
    return None


def _ruled_out(option: str, text: str) -> bool:
    return re.search(rf"\bnot (?:the )?{re.escape(option)}\b", text) is not None


def _entity(query: str, gold: str, prediction: str) -> Match | None:
    text = clean(prediction)
    if contains_phrase(prediction, gold):
        return _containing(query, gold, prediction, text)
    gold_words, said = _content(gold), _content(prediction)
    if not gold_words or len(gold_words) > MAX_ENTITY_WORDS or any(w.isdigit() for w in gold_words):
        return None
    if not gold_words & said:
        acronym = _acronym(gold)
        abbreviated = len(acronym) > 1 and any(len(t) > 1 and (t.startswith(acronym) or acronym.startswith(t))
                                               for t in said)  # "uk", "usa" for "united states"
        if max(map(len, gold_words)) > 2 and not abbreviated:
            return Match(0, "shares no word with the gold answer")
        return None
    return _partial_name(query, gold, prediction)


def _partial_name(query: str, gold: str, prediction: str) -> Match | None:
    """A short prediction sharing some words with a short gold name: its last words ("Dujardin", "Da Vinci",
    "W. Shakespeare") are the gold; another name that only shares a first word ("Jean Reno") is not."""
    gold_tokens, said = answer_key(gold).split(), answer_key(prediction).split()
    if len(said) > MAX_ENTITY_WORDS or NEGATION.search(clean(prediction)):
        return None
    initials = [t for t in said[:-1] if len(t) == 1]
    named = [t for t in said if t not in initials]
    if named and named == gold_tokens[-len(named):] and all(
            any(g.startswith(i) for g in gold_tokens[:-len(named)]) for i in initials) and len(named[-1]) > 3:
        return Match(1, "the gold's last name(s)")
    foreign = [t for t in said if t not in gold_tokens and t not in _content(query) and t not in STOPWORDS]
    if gold_tokens[-1] not in said and foreign:
        return Match(0, f"another name ({' '.join(said)!r}) sharing only part of the gold")
    if len(said) == len(gold_tokens) > 1 and said[-1] == gold_tokens[-1] and any(
            not (s.startswith(g) or g.startswith(s)) for s, g in zip(said[:-1], gold_tokens[:-1])):
        return Match(0, f"another person with the gold's last name ({' '.join(said)!r})")
    return None


def _sentence_numbers(query: str, gold: str, prediction: str) -> Match | None:
    """A long gold sentence that states figures: a prediction whose figures are none of them is wrong; one
    that states all of them in the gold's own words ("route 9 in ohio, 1,204 feet") is right, unless one of
    the two is negated and the other is not (a count for a gold that says "never won ... reached three finals")."""
    expected = find_numbers(gold, keep_dates=True)
    asked = {n.value for n in find_numbers(query, keep_dates=True)}
    stated = [n for n in find_numbers(prediction, keep_dates=True) if n.value not in asked]
    if not expected or not stated:
        return None
    denies = bool(NEGATION.search(clean(gold))) != bool(NEGATION.search(clean(prediction)))  # "never won ..."
    if _content(prediction) <= _content(gold) | _content(query) and not CONTRAST.search(clean(prediction)) and \
            not denies and \
            all(any(same_number(g, n) for n in stated) for g in expected if g.value not in asked):
        return Match(1, "the gold's figures in the gold's own words")
    if any(same_number(gold_number, n) is not False for gold_number in expected for n in stated):
        return None
    return Match(0, f"states {_show_number(stated[0])}, a figure the gold does not have")


def _containing(query: str, gold: str, prediction: str, text: str) -> Match:
    ruled_out = RULED_OUT.search(text)
    if ruled_out and contains_phrase(text[:ruled_out.start()], gold):
        text = prediction = text[:ruled_out.start()]  # "canberra, not sydney": the answer is before the comma
    if len(words(prediction)) > MAX_CONTAINING_WORDS:
        return Match(None, "the gold inside a long prediction")
    if NEGATION.search(text) or CONTRAST.search(text):
        return Match(None, "the gold with a negation or an alternative")
    members = re.split(r",?\s+(?:and|&|plus|as well as|along with|together with|alongside)\s+", text.strip(" ."))
    if len(members) == 2 and " and " not in clean(gold) and all(len(m.split()) <= 4 for m in members):
        other = members[1] if contains_phrase(members[0], gold) else members[0]
        return Match(0, f"names another answer beside the gold ({other!r})")
    if _appositive(gold, text):
        return Match(1, "the gold answer first, then a short description")
    extra = _content(prediction) - _content(gold) - _content(query)
    if extra and extra <= CORPORATE_SUFFIXES and _after_gold(gold, text) is not None:
        return Match(1, "the gold company with a corporate suffix")  # "bmw group" for "bmw"
    if extra:
        return Match(None, f"the gold with other content ({', '.join(sorted(extra)[:4])})")
    return Match(1, "the gold answer, restating only the question")


def _after_gold(gold: str, text: str) -> str | None:
    """What follows the gold when the answer opens with it ("the" aside), else None."""
    found = re.match(r"(?:the\s+)?" + r"[\W_]+".join(map(re.escape, answer_key(gold).split())) + r"\b(.*)$", text)
    return None if found is None else found.group(1)


def _appositive(gold: str, text: str) -> bool:
    """"Ottawa, Ontario", "Oracle (ORCL)", "Kilimanjaro in Tanzania": the answer opens with the gold, and
    what follows is a short description in brackets, after a comma or a short "in <place>", without figures
    (a wrong year in brackets is a wrong answer)."""
    rest = _after_gold(gold, text)
    if rest is None:
        return False
    rest = rest.strip(" .")
    if re.search(r"\d", rest) or NEGATION.search(rest) or CONTRAST.search(rest):
        return False
    return bool(re.match(r"[(,]", rest)) and len(words(rest)) <= 6 or \
        bool(re.fullmatch(r"in [a-z][a-z .'-]*", rest)) and len(words(rest)) <= 3  # "kilimanjaro in tanzania"
