"""The short answer inside a model's sentence, by what the question asks for.

A 135M model answers "The capital of Australia is Canberra." where CRAG's gold is "canberra"; it restates
the question around the answer. The verifier must check the answer, not the restatement, and the
grader should see the answer. The question's form says which kind of span to take from the sentence:

    question                                        kind     the span of the model's sentence
    "A or B?"                                        choice   the option it names first   (computed: compared)
    is / are / does / did / can / has ...            yes/no   "yes" or "no"               (computed: stated fact)
    what was the score ...                           score    "3-1"
    what / which / in what year                      year     "1975" (a year the question does not name)
    when / what date                                 date     "2010-07-15", "July 16, 2010"; a bare year is
                                                              widened to the full date the evidence gives it
    which countries / name three / list ...          names    "France, Germany and Italy"
    how many ...                                     count    "4"                          (computed: counted)
    how much / price / number of ...                 number   "33", "$0.24", "3.5 million"
    which country / city / where ...                 place    "South Africa" (the country of "Pretoria, South Africa")
    who / which actor, artist, company ...           name     "Bong Joon-ho"
    anything else                                    phrase   what follows the restated question ("... was Hebrew")

Each kind is one row of `KINDS` (`Kind`: which questions ask for it, how its span is found in a sentence, why a
KG value cannot be one, whether a span must stand alone in the evidence, and, for choice, yes/no and count, the
answer computed from the evidence in code, `verify/checkable.py`), with example questions as data.

A question of a kind whose span the sentence lacks ("how many" answered without a number) gets no span:
the verifier refuses it with that reason. Two more refusals are decided here because they need the
sentence, not the span: page headings / link lists ("A | B | A | ...") and counts of something the question
did not ask about ("10 Ballon d'Or awards" for "how many NBA MVP awards").
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from models.verify.checkable import check_arithmetic, check_choice, check_count, check_yes_no
from models.date_words import MONTH_WORD, month_number
from models.verify.lexical import normalize, stem
from models.verify.question_form import (
    asks_arithmetic, asks_choice, asks_count, asks_date, asks_name, asks_names, asks_number, asks_place,
    asks_score, asks_year, asks_yes_no, options_of,
)

_STOP_CAPS = frozenset("the a an in on at of for and or to by with from it its this that these those there "
                       "he she they his her their we our i yes no".split())
_MONTH = MONTH_WORD + r"\.?"
_YEAR = r"(?:1[5-9]\d\d|20\d\d)"
_DATE_FULL = re.compile(
    rf"\b\d{{4}}-\d{{2}}-\d{{2}}\b|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+{_YEAR}\b|"
    rf"\b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.IGNORECASE)
_DATE_MONTH = re.compile(rf"\b{_MONTH}\s+{_YEAR}\b", re.IGNORECASE)
_YEAR_RE = re.compile(rf"\b{_YEAR}\b")
_SCORE = re.compile(r"(?<![\d:.-])\d{1,3}\s*[-\u2013]\s*\d{1,3}(?![\d:.-])")
_NUMBER = re.compile(
    r"(?:[$\u20ac\u00a3]\s?)?(?<![\w.:])\d+(?:,\d{3})*(?:\.\d+)?(?![\w:-])"
    r"(?:\s?%|\s+(?:percent|thousand|million|billion|trillion)\b)?", re.IGNORECASE)
_COPULA = re.compile(r"\b(?:is|was|are|were)\b", re.IGNORECASE)
# A capitalised name: words that start upper-case (initials, hyphens, apostrophes inside), joined by a few
# lower-case particles ("Bank of America", "Leonardo da Vinci").
_NAME = re.compile(r"(?:[A-Z][\w'\u2019.-]*|\d+)(?:\s+(?:(?:of|de|da|del|der|van|von|la|le|and|the|&)\s+)?"
                   r"[A-Z][\w'\u2019.-]*)*")
_QUOTED = re.compile(r"[\"\u201c]([^\"\u201d]{2,80})[\"\u201d]")
_HEADING = re.compile(r"\s[|\u2022\u00bb]\s")


@dataclass(frozen=True)
class Span:
    """What the question asks for and the part of the answer that gives it."""

    kind: str  # choice | yes/no | score | year | date | number | names | place | name | phrase
    text: str  # the span; "" when the answer holds none of that kind
    refusal: str = ""  # why the sentence cannot answer at all (a heading, a count of something else)


def question_kind(question: str) -> str:
    """The kind of answer the question asks for: the first row of `KINDS` that it asks (see the module table)."""
    q = " ".join((question or "").lower().split())
    return next(kind.name for kind in KINDS if kind.asks(q))


def extract(question: str, answer: str, evidence: Sequence[str] = (), facts: int = 0) -> Span:
    """The span of `answer` that answers `question`. A bare year of a "when" question is widened to the full
    date the evidence gives it: the first of its `facts` leading texts (structured public/KG facts) that
    dates that year, else the one date of that year the other texts give; several different ones leave
    no span (the year cannot say which)."""
    kind = question_kind(question)
    text = " ".join((answer or "").split())
    if _HEADING.search(text):
        return Span(kind, "", "looks like a page heading or a list of links, not an answer")
    q_stems = {stem(w) for w in normalize(question).split()}
    if kind == "date":
        return _date(question, text, q_stems, evidence, facts)
    if kind in ("name", "names", "place") and text == text.lower():
        kind_span = _phrase(question, text, q_stems, evidence)  # a lower-cased answer has no capitals to find
        return Span(kind, kind_span if len(kind_span.split()) <= 8 else "")
    span = KIND[kind].find(question, text, q_stems, evidence)
    if kind in ("number", "count") and span:
        why = _counts_something_else(text, span, q_stems)
        if why:
            return Span(kind, span, why)
    return Span(kind, span)


# ---------------------------------------------------------------------------------------------- finders
def _choice(question, text, q_stems, evidence) -> str:
    said = normalize(text)
    best, where = "", len(said) + 1
    for option in options_of(question):
        words = normalize(option)
        at = said.find(words) if words else -1
        if at >= 0 and at < where:
            best, where = option, at
    return best


def _yes_no(question, text, q_stems, evidence) -> str:
    m = re.search(r"\b(yes|no)\b", text.lower())
    return m.group(1) if m else ""


def _score(question, text, q_stems, evidence) -> str:
    m = _SCORE.search(text)
    return re.sub(r"\s*[-\u2013]\s*", "-", m.group(0)) if m else ""


def _year(question, text, q_stems, evidence) -> str:
    for m in _YEAR_RE.finditer(text):
        if m.group(0) not in q_stems:
            return m.group(0)
    return ""


def _date(question, text, q_stems, evidence, facts) -> Span:
    for pattern in (_DATE_FULL, _DATE_MONTH):
        for m in pattern.finditer(text):
            if not set(normalize(m.group(0)).split()) <= q_stems:
                return Span("date", m.group(0))
    year = _year(question, text, q_stems, evidence)
    if not year:
        return Span("date", "")
    structured, other = (_dates_of(year, question, texts) for texts in (evidence[:facts], evidence[facts:]))
    if structured:
        return Span("date", structured[0])
    if len(other) > 1:
        return Span("date", "", f"the evidence gives several dates in {year} ({', '.join(other[:3])}): "
                                f"the answer's bare year cannot say which")
    return Span("date", other[0] if other else year)


def _number(question, text, q_stems, evidence) -> str:
    dates = [m.span() for m in _DATE_FULL.finditer(text)] + [m.span() for m in _DATE_MONTH.finditer(text)]
    for m in _NUMBER.finditer(text):
        if any(a <= m.start() < b for a, b in dates):
            continue
        value = m.group(0).strip()
        digits = normalize(value).split()
        if digits and digits[0] in q_stems and not re.search(r"[$%]|illion|percent", value):
            continue  # a number the question itself names ("in 2023", "top 10")
        return value
    return ""


def _names(question, text, q_stems, evidence) -> str:
    names = _new_names(_tail(text, q_stems), q_stems)
    if not names:
        return ""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def _place(question, text, q_stems, evidence) -> str:
    tail = _tail(text, q_stems)
    after = re.search(r"\b(?:in|from|at|near)\s+([A-Z].*)", tail)
    if after:
        # "in Pretoria, South Africa, on 28 June": the places are the comma chain of names after "in";
        # the country (state, region) is its last link, a city its first
        chain = re.match(rf"{_NAME.pattern}(?:,\s*{_NAME.pattern})*", after.group(1)).group(0)
        names = _new_names(chain, q_stems)
        if names and re.search(r"\b(?:country|countries|nation|state|province|region|continent)\b",
                               question.lower()):
            return names[-1]
        if names:
            return names[0]
    names = _new_names(tail, q_stems)
    return names[0] if names else ""


def _name(question, text, q_stems, evidence) -> str:
    tail = _tail(text, q_stems)
    quoted = _quoted(tail, q_stems)
    if quoted:
        return quoted
    names = _new_names(tail, q_stems)
    return names[0] if names else ""


def _phrase(question, text, q_stems, evidence) -> str:
    tail = _tail(text, q_stems).strip(" .;:")
    quoted = _quoted(tail, q_stems)
    if quoted:
        return quoted
    return tail if tail and not _only_question_words(tail, q_stems) else ""


# ---------------------------------------------------------------------------------------------- what each kind asks
@dataclass(frozen=True)
class Kind:
    """One kind of answer: which questions ask for it, and how an answer of it is found and checked.

    Attributes:
        name: the kind, in traces and scores.
        asks: whether a question (lower case, spaces folded) asks for it; `KINDS` is asked in order.
        find: the span of the model's sentence: (question, sentence, the question's stems, evidence) -> span.
        fits: why a KG value cannot be one ("" = it can): (value, question, the program's parsed calls) -> str.
        alone: whether a span must stand alone in the evidence (not inside "top 10", a longer name, a byline).
        compute: the answer computed from the evidence in code, for kinds a sentence cannot prove:
            (question, evidence, facts, KG value or "") -> `Computed`; None: the model's span is checked.
        cases: questions of this kind (data; tests/verify/test_span.py reads each as this kind).
    """

    name: str
    asks: Callable[[str], bool]
    find: Callable[..., str]
    fits: Callable[[str, str, Sequence[Mapping]], str]
    alone: Callable[[str, Sequence[str]], bool] | None = None
    compute: Callable[..., Any] | None = None
    cases: tuple[str, ...] = ()


def _fits_choice(v, question, calls):
    options = [normalize(o) for o in options_of(question)]
    return "" if normalize(v) in options else f"the KG value {v!r} is not one of the question's options"


def _fits_number(v, question, calls):
    if not _PLAIN_NUMBER.fullmatch(v):
        return f"the KG value {v!r} is not a number"
    return "" if float(re.sub(r"[^\d.\-]", "", v) or 0) != 0 else \
        "a count of zero: more often a program that matched nothing than a true zero"


def _fits_date(v, question, calls):
    return "" if _is_date(v) else f"the KG value {v!r} is not one date"


def _fits_score(v, question, calls):
    return "" if _SCORE.fullmatch(v) else f"the KG value {v!r} is not a score"


def _fits_entity(kind):
    def fits(v, question, calls):
        items = [i.strip() for i in re.split(r",\s*|\s+and\s+", v) if i.strip()]
        if items and all(_PLAIN_NUMBER.fullmatch(i) or _is_date(i) for i in items):
            return f"the KG value {v!r} is a number or date, the question asks for a {kind}"
        key = _answered_key(calls)
        if kind == "place" and key and not _PLACE_KEY.search(key):
            # `get_open("spacex")["founder"]` for "in which country was the founder of spacex born?": one hop short
            return f"the KG value {v!r} is a {key!r}, not a place: the program stopped a hop short"
        return ""
    return fits


def _fits_any(v, question, calls):
    return ""


def _alone_names(span, evidence):
    return all(_name_alone(p, evidence) for p in re.split(r",\s*|\s+and\s+", span) if p.strip())


def _compute_choice(question, evidence, facts, value):
    return check_choice(question, evidence, facts)


def _compute_yes_no(question, evidence, facts, value):
    # a KG value ("Christopher Nolan" for "was it directed by jonathan nolan?") is no "yes" or "no": the answer is
    # what the facts state, as for any other evidence
    return check_yes_no(question, evidence, facts)


def _compute_arithmetic(question, evidence, facts, value):
    return check_arithmetic(question, evidence, facts)


def _compute_count(question, evidence, facts, value):
    if value and _PLAIN_NUMBER.fullmatch(value):
        return None  # the program's own number (a score, a stat): checked as a KG value
    return check_count(question, evidence, facts, listed=value)




# ---------------------------------------------------------------------------------------------- helpers
def _tail(text: str, q_stems: set[str]) -> str:
    """The part after a restated question: "The capital of Australia is Canberra" -> "Canberra" (when the
    words before the last copula are mostly the question's); else the whole text."""
    matches = list(_COPULA.finditer(text))
    for m in reversed(matches):
        head = [w for w in normalize(text[: m.start()]).split() if w not in _STOP_CAPS]
        if head and sum(stem(w) in q_stems for w in head) / len(head) >= 0.5:
            return text[m.end():].strip()
    return text


def _new_names(text: str, q_stems: set[str]) -> list[str]:
    """Capitalised names in `text` that are not made only of the question's words or stop words."""
    names = []
    for m in _NAME.finditer(text):
        name = m.group(0).strip(" .,'")
        words = name.split()
        while words and words[0].lower() in _STOP_CAPS:
            words = words[1:]
        name = " ".join(words).strip(" .,")
        if name and not name.isdigit() and not _only_question_words(name, q_stems) and name not in names:
            names.append(name)
    return names


def _quoted(text: str, q_stems: set[str]) -> str:
    """The first quoted title in `text` that is not made only of the question's words ("" if none)."""
    return next((q for q in _QUOTED.findall(text) if not _only_question_words(q, q_stems)), "")


def _only_question_words(text: str, q_stems: set[str]) -> bool:
    words = [w for w in normalize(text).split() if w not in _STOP_CAPS]
    return all(stem(w) in q_stems for w in words)


def _counts_something_else(text: str, number: str, q_stems: set[str]) -> str:
    """ "10 Ballon d'Or awards" for "how many NBA MVP awards": a capitalised word right after the number that
    the question does not name means the sentence counts something else."""
    at = text.find(number)
    following = text[at + len(number):].split()[:3] if at >= 0 else []
    for word in following:
        if word[:1].isupper() and word.lower().strip(".,;:") not in _STOP_CAPS and \
                not all(stem(w) in q_stems for w in normalize(word).split()):
            return f"the answer counts something the question does not ask about ({' '.join(following)})"
        if not word[:1].isalpha():
            break
    return ""


def _dates_of(year: str, question: str, texts: Sequence[str]) -> list[str]:
    """The different full dates in `year` (as first written, in evidence order) of the sentences that also
    name one of the question's words (compared by their first five letters)."""
    q_words = {w[:5] for w in normalize(question).split() if len(w) > 3 and w not in _STOP_CAPS}
    found: dict[str, str] = {}
    for text in texts:
        for sentence in re.split(r"(?<=[.!?])\s+|\n+", text or ""):
            if not q_words & {w[:5] for w in normalize(sentence).split()}:
                continue
            for m in _DATE_FULL.finditer(sentence):
                if year in m.group(0):
                    found.setdefault(_day(m.group(0)), m.group(0))
    return list(found.values())


def _day(date: str) -> str:
    """A date's day as "YYYY-MM-DD" (so "July 15, 2010" and "2010-07-15" are one date)."""
    iso = re.search(r"\d{4}-\d{2}-\d{2}", date)
    if iso:
        return iso.group(0)
    words = re.findall(r"[a-z]+|\d+", date.lower())
    year = next((w for w in words if len(w) == 4 and w.isdigit()), "")
    month = next((month_number(w) for w in words if month_number(w)), 0)
    day = next((w for w in words if w.isdigit() and len(w) <= 2), "0")
    return f"{year}-{month:02d}-{int(day):02d}"



# ---------------------------------------------------------------------------------------------- checks
_FOLD = str.maketrans({"\u2010": "-", "\u2011": "-", "\u2013": "-", "\u2019": "'"})


def stands_alone(span: Span, evidence: Sequence[str]) -> bool:
    """Whether the span occurs in the evidence as a whole answer, not only inside something longer: a number
    not part of "top-10" or "10th", a name not the first words of a longer name ("Hebrew" of "Hebrew Bible")
    and not an author's byline ("By David Caballero Published ...")."""
    if re.fullmatch(r"[$\u20ac\u00a3]?\s?\d[\d,.]*\s?%?", span.text.strip()):
        return _number_alone(span.text, evidence)
    alone = KIND[span.kind].alone
    return alone(span.text, evidence) if alone is not None else True


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", (text or "").translate(_FOLD)).encode("ascii", "ignore").decode("ascii")


def _number_alone(text: str, evidence: Sequence[str]) -> bool:
    m = re.search(r"\d+(?:,\d{3})*(?:\.\d+)?", text)
    if not m:
        return True
    number = re.escape(m.group(0).replace(",", ""))
    # not a rank ("top 10", "top-10", "No. 3", "#1") nor part of a word ("10th")
    pattern = re.compile(rf"(?<![A-Za-z]-)(?<![\w.#])(?<!top )(?<!no\. ){number}(?![\w]|\.\d|-[A-Za-z])",
                         re.IGNORECASE)
    return any(pattern.search(re.sub(r"(?<=\d),(?=\d{3}\b)", "", _ascii(t))) for t in evidence)


def _name_alone(name: str, evidence: Sequence[str]) -> bool:
    words = re.findall(r"[A-Za-z0-9']+", _ascii(name))
    if not words:
        return True
    pattern = re.compile(r"(?<![\w'])" + r"[\s\-.]+".join(map(re.escape, words)) + r"(?![\w'])", re.IGNORECASE)
    for text in evidence:
        text = _ascii(text)
        for m in pattern.finditer(text):
            before, after = text[max(0, m.start() - 4):m.start()], text[m.end():m.end() + 40]
            if before.endswith("By ") or re.match(r"\s*(?:Published|Updated|Posted)\b", after):
                continue  # a byline names the page's author, not an answer
            if re.match(r" [A-Z][a-z]", after) and words[-1][:1].isupper():
                continue  # the start of a longer name
            return True
    return False


def as_asked(kind: str, value: str) -> str:
    """A KG value in the form the question asks for: the year of a date for "what year"."""
    v = (value or "").strip()
    if kind == "year" and _DATE_FULL.fullmatch(v):
        return _YEAR_RE.search(v).group(0)
    return v


_PLAIN_NUMBER = re.compile(r"-?[$]?\d+(?:,\d{3})*(?:\.\d+)?%?")


def _is_date(text: str) -> bool:
    return bool(_DATE_FULL.fullmatch(text) or _YEAR_RE.fullmatch(text))


def value_fits(kind: str, value: str, question: str, calls: Sequence[Mapping] = ()) -> str:
    """Why a KG value cannot answer a question of `kind` ("" when it can): a date for "A or B?", a list of
    dates for "when", numbers for "which companies", a zero count (more often a program that matched nothing
    than a true zero), or a value the program itself names (`get_person("heath ledger")["name"]`: the model
    guessed the entity, the KG only spelled it). `calls` is the program as parsed, from the KG evidence
    (`describe_calls`: each statement's function, arguments and selected keys)."""
    v = (value or "").strip()
    literals = {normalize(a) for a in _string_arguments(calls)}
    if normalize(v) and normalize(v) in literals:
        return f"the KG value {v!r} is the program's own argument: the model named it, the KG did not find it"
    return KIND[kind].fits(v, question, calls)


# attributes whose values are places: a KG value answers "which country / where" only from one of them
_PLACE_KEY = re.compile(r"place|countr|city|capital|locat|venue|nationality|headquarter|border|region|state|"
                        r"continent|address|hometown|origin", re.IGNORECASE)


def _string_arguments(calls: Sequence[Mapping]) -> list[str]:
    """Every text the program passed as an argument (in lists and conditions too)."""
    def texts(value):
        if isinstance(value, str):
            return [value] if value != "*" else []
        if isinstance(value, Mapping):
            return texts(value.get("value"))
        if isinstance(value, (list, tuple)):
            return [t for item in value for t in texts(item)]
        return []
    return [t for call in calls for argument in call.get("arguments", ()) for t in texts(argument)]


def _answered_key(calls: Sequence[Mapping]) -> str:
    """The attribute the program's last statement selects (`["len"]` aside); "" when it selects none."""
    keys = [k for k in (calls[-1].get("select", ()) if calls else ()) if k.lower() != "len"]
    return keys[-1] if keys else ""


# ------------------------------------------------------------------------------- the kinds, in the order they are asked
KINDS: tuple[Kind, ...] = (
    Kind("choice", asks_choice, _choice, _fits_choice, compute=_compute_choice,
         cases=("which is older, the eiffel tower or big ben?", "is pixar owned by disney or sony?")),
    Kind("yes/no", asks_yes_no, _yes_no, _fits_any, compute=_compute_yes_no,
         cases=("did the beatles release abbey road?", "is paris the capital of france?")),
    Kind("sum or difference", asks_arithmetic, _number, _fits_number, _number_alone, compute=_compute_arithmetic,
         cases=("what is the difference between the heights of the eiffel tower and big ben?",
                "what is the combined market cap of msft and aapl?")),
    Kind("score", asks_score, _score, _fits_score, cases=("what was the score of the 2014 world cup final?",)),
    Kind("year", asks_year, _year, _fits_date, cases=("in what year was the song bohemian rhapsody released?",)),
    # a date's span is found by `extract` itself: a bare year is widened to the full date the evidence gives it
    Kind("date", asks_date, _year, _fits_date, cases=("when was the movie inception released?",)),
    Kind("names", asks_names, _names, _fits_entity("names"), _alone_names,
         cases=("which countries border switzerland?", "name three films by greta gerwig")),
    Kind("count", asks_count, _number, _fits_number, _number_alone, compute=_compute_count,
         cases=("how many members are in the band coldplay?", "how many moons does jupiter have?")),
    Kind("number", asks_number, _number, _fits_number, _number_alone,
         cases=("how much dividend per share did microsoft pay in february 2024?", "what is the price of aapl?")),
    Kind("place", asks_place, _place, _fits_entity("place"), _name_alone,
         cases=("where was barack obama born?", "in which country is the eiffel tower?")),
    Kind("name", asks_name, _name, _fits_entity("name"), _name_alone, cases=("who directed the movie parasite?",)),
    Kind("phrase", lambda q: True, _phrase, _fits_any, _name_alone, cases=("what is the other language of x?",)),
)
KIND = {kind.name: kind for kind in KINDS}
