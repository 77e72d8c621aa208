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
from models.verify.lexical import normalize, stem
from models.verify.question_form import (
    asks_arithmetic, asks_choice, asks_count, asks_date, asks_name, asks_names, asks_number, asks_place,
    asks_score, asks_year, asks_yes_no, options_of,
)
from models.verify.span_finders import (DATE_FULL, HEADING, SCORE, YEAR_RE, Span, counts_something_else, find_choice,
                                         find_date, find_name, find_names, find_number, find_phrase, find_place,
                                         find_score, find_year, find_yes_no)


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
    if HEADING.search(text):
        return Span(kind, "", "looks like a page heading or a list of links, not an answer")
    q_stems = {stem(w) for w in normalize(question).split()}
    if kind == "date":
        return find_date(question, text, q_stems, evidence, facts)
    if kind in ("name", "names", "place") and text == text.lower():
        kind_span = find_phrase(question, text, q_stems, evidence)  # a lower-cased answer has no capitals to find
        return Span(kind, kind_span if len(kind_span.split()) <= 8 else "")
    span = KIND[kind].find(question, text, q_stems, evidence)
    if kind in ("number", "count") and span:
        why = counts_something_else(text, span, q_stems)
        if why:
            return Span(kind, span, why)
    return Span(kind, span)


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
    return "" if SCORE.fullmatch(v) else f"the KG value {v!r} is not a score"


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
    if kind == "year" and DATE_FULL.fullmatch(v):
        return YEAR_RE.search(v).group(0)
    return v


_PLAIN_NUMBER = re.compile(r"-?[$]?\d+(?:,\d{3})*(?:\.\d+)?%?")


def _is_date(text: str) -> bool:
    return bool(DATE_FULL.fullmatch(text) or YEAR_RE.fullmatch(text))


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
    Kind("choice", asks_choice, find_choice, _fits_choice, compute=_compute_choice,
         cases=("which is older, the eiffel tower or big ben?", "is pixar owned by disney or sony?")),
    Kind("yes/no", asks_yes_no, find_yes_no, _fits_any, compute=_compute_yes_no,
         cases=("did the beatles release abbey road?", "is paris the capital of france?")),
    Kind("sum or difference", asks_arithmetic, find_number, _fits_number, _number_alone, compute=_compute_arithmetic,
         cases=("what is the difference between the heights of the eiffel tower and big ben?",
                "what is the combined market cap of msft and aapl?")),
    Kind("score", asks_score, find_score, _fits_score, cases=("what was the score of the 2014 world cup final?",)),
    Kind("year", asks_year, find_year, _fits_date, cases=("in what year was the song bohemian rhapsody released?",)),
    # a date's span is found by `extract` itself: a bare year is widened to the full date the evidence gives it
    Kind("date", asks_date, find_year, _fits_date, cases=("when was the movie inception released?",)),
    Kind("names", asks_names, find_names, _fits_entity("names"), _alone_names,
         cases=("which countries border switzerland?", "name three films by greta gerwig")),
    Kind("count", asks_count, find_number, _fits_number, _number_alone, compute=_compute_count,
         cases=("how many members are in the band coldplay?", "how many moons does jupiter have?")),
    Kind("number", asks_number, find_number, _fits_number, _number_alone,
         cases=("how much dividend per share did microsoft pay in february 2024?", "what is the price of aapl?")),
    Kind("place", asks_place, find_place, _fits_entity("place"), _name_alone,
         cases=("where was barack obama born?", "in which country is the eiffel tower?")),
    Kind("name", asks_name, find_name, _fits_entity("name"), _name_alone, cases=("who directed the movie parasite?",)),
    Kind("phrase", lambda q: True, find_phrase, _fits_any, _name_alone, cases=("what is the other language of x?",)),
)
KIND = {kind.name: kind for kind in KINDS}
