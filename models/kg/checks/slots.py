"""Arguments checked before a program runs: each value in a slot of its type, and the question's own values.

The parser already checks kinds (a string, a number, conditions); what it cannot know is what a string means.
Here, per call and against the function's signature:
- date: a date slot (`date`, `time`, `end_time`) or a condition on a date key holds one of the days the question
  names (`dates.py`); a wrong or broken one ("28, 2024") is written as the question's date when the question
  names one, and a range is narrowed to the day when the question asks about one day;
- slot: a date in an entity slot and a name in the date slot are swapped back; a date or a year inside an entity
  name ("the academy award for best actress in 2012") means the program put the question's values in the wrong
  slot: refused; a year condition (an Oscar ceremony, a release year) holds the year the question names;
- place: an entity argument naming only the city or only the state of the question's "City, State" is the whole
  place again.
A repair changes the program and says so; a refusal means the program is no evidence. The question's values
decide, never the model's.
"""
from __future__ import annotations

import re
from dataclasses import replace
from datetime import datetime

from models.kg.checks.check import REFUSED, REPAIRED, Check
from models.kg.checks.dates import QuestionDate, same_span
from models.kg.checks.places import QualifiedPlace, half_of
from models.kg.language.ast import Call, Condition, ListArg, Literal, Program
from models.kg.language.errors import KGValueError
from models.kg.language.signature import ArgKind, Signature
from models.kg.language.timeexpr import resolve_time
from models.text import kg_match_key

DATE_PARAMS = frozenset({"date", "time", "end_time"})
_DATE_KEYS = frozenset({"date", "time", "day", "game date", "release date", "ex date", "ex dividend date"})
_YEAR_KEYS = frozenset({"year", "year ceremony", "ceremony year", "release year"})
_RANGE_WORDS = re.compile(r"\b(?:between|from|since|through|until|till|over|during|range|period|week|weeks|"
                          r"month|months|days|so far)\b")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_ABSOLUTE_DATE = re.compile(r"\d{4}-\d{1,2}(?:-\d{1,2})?\Z|\d{1,2}/\d{1,2}/\d{4}\Z")


class ArgumentChecks:
    """Args: the question, its dates (`question_dates`), its "City, State" places and the query time."""

    def __init__(self, question: str, dates: tuple[QuestionDate, ...], places: tuple[QualifiedPlace, ...],
                 now: datetime | None):
        self.question, self.dates, self.places, self.now = question.lower(), dates, places, now
        written_dates = " ".join(d.written.lower() for d in dates)
        self.years = sorted({int(y) for y in _YEAR.findall(self.question)} -
                            {int(y) for y in _YEAR.findall(written_dates)})
        self.one_day = len(dates) == 1 and dates[0].span.single_day is not None and \
            not _RANGE_WORDS.search(self.question)

    def check(self, program: Program, signatures: dict[str, Signature]) -> tuple[Program, list[Check]]:
        """The program with its repairs, and every repair or refusal (a refusal: the program is no evidence)."""
        checks: list[Check] = []
        statements = []
        for statement in program.statements:
            head = statement.head
            if isinstance(head, Call) and head.name in signatures:
                head = self._call(head, signatures[head.name], checks)
            statements.append(replace(statement, head=head) if head is not statement.head else statement)
        return replace(program, statements=tuple(statements)), checks

    # ------------------------------------------------------------------ per call
    def _call(self, call: Call, signature: Signature, checks: list[Check]) -> Call:
        args = list(call.args)
        params = [p.name for p in signature.params][:len(args)]
        dated = [i for i, name in enumerate(params) if name in DATE_PARAMS]
        named = [i for i, (name, p) in enumerate(zip(params, signature.params))
                 if name not in DATE_PARAMS and ArgKind.STRING in p.kinds and ArgKind.CONDITIONS not in p.kinds]
        self._swap(call.name, args, params, dated, named, checks)
        for i in named:
            if _text(args[i]) is not None:
                args[i] = self._entity(call.name, params[i], args[i], checks)
        self._date_slots(call.name, args, params, dated, signature, checks)
        for i, arg in enumerate(args):
            if isinstance(arg, (Condition, ListArg)):
                args[i] = self._conditions(call.name, arg, checks)
        if params and params[0] == "year" and args:  # get_grammy_year(year)
            args[0] = self._year_value(call.name, "year", args[0], checks)
        return call if args == list(call.args) else replace(call, args=tuple(args))

    def _swap(self, name, args, params, dated, named, checks) -> None:
        """A date written in an entity slot while the date slot holds a name: the two are swapped back."""
        for d in dated:
            for n in named:
                entity, when = _text(args[n]), _text(args[d])
                if entity is not None and when is not None and self._is_date(entity) and not self._is_time(when):
                    args[n], args[d] = args[d], args[n]
                    checks.append(Check("slot", REPAIRED, f"{name}(): {entity!r} is a date and {when!r} a name; "
                                                          f"{params[n]} and {params[d]} swapped"))

    def _entity(self, name: str, param: str, arg: Literal, checks: list[Check]) -> Literal:
        value = str(arg.value)
        if self._is_date(value):
            checks.append(Check("slot", REFUSED, f"{name}(): the date {value!r} is in the {param} slot"))
            return arg
        dated = [d.iso for d in self.dates if d.iso in value or d.written.lower() in value.lower()]
        if dated:
            checks.append(Check("slot", REFUSED, f"{name}(): the question's {dated[0]!r} is inside the {param} "
                                                 f"argument {value!r}: it belongs in its own slot"))
            return arg
        years = [y for y in self.years if re.search(rf"\b{y}\b", value) and kg_match_key(value) != str(y)]
        if years:  # "the 2021 dune": the year is a cue the API reads from the question, not part of the name
            bare = " ".join(re.sub(rf"^(?:the\s+)?{years[0]}\s+|\s+(?:in\s+|of\s+)?{years[0]}$|\({years[0]}\)", " ",
                                   value.strip(), flags=re.IGNORECASE).split())
            if not bare or str(years[0]) in bare:
                checks.append(Check("slot", REFUSED, f"{name}(): the question's year {years[0]} is inside the {param} "
                                                     f"argument {value!r}: it belongs in its own slot"))
                return arg
            checks.append(Check("slot", REPAIRED, f"{name}(): the year {years[0]} taken out of the {param} argument "
                                                  f"{value!r}: the question's year picks among same-named entities"))
            arg = replace(arg, value=bare)
            value = bare
        place = half_of(value, self.places)
        if place is not None:
            checks.append(Check("place", REPAIRED, f"{name}(): {value!r} is half of the question's "
                                                   f"{place.whole!r}; the whole place is looked up"))
            return replace(arg, value=place.whole)
        return arg

    def _date_slots(self, name, args, params, dated, signature, checks) -> None:
        filled = [i for i in dated if _text(args[i]) is not None]
        if not filled:
            return
        values = [str(args[i].value) for i in filled]
        broken = [v for v in values if not self._is_time(v)]
        if not self.dates:
            if broken:
                checks.append(Check("date", REFUSED, f"{name}(): {broken[0]!r} is no date, and the question names "
                                                     f"none to put there"))
            return
        matching = [v for v in values if any(same_span(v, d, self.now) for d in self.dates)]
        if len(matching) == len(values) and not (self.one_day and len(values) > 1):
            return
        if self.one_day or len(self.dates) == 1:
            wanted = self.dates[0]
            args[filled[0]] = Literal("string", wanted.iso)
            for i in filled[1:]:  # a range when the question asks about one day: the day alone
                args[i] = Literal("none", None)
            while len(args) > signature.min_args and _is_none(args[-1]):  # an optional end left out, not None
                args.pop()
            checks.append(Check("date", REPAIRED, f"{name}(): {', '.join(map(repr, values))} for the question's "
                                                  f"{wanted.written!r}: {wanted.iso!r}"))
            return
        if len(filled) == len(self.dates):
            ordered = sorted(self.dates, key=lambda d: d.span.start)
            for i, wanted in zip(filled, ordered):
                args[i] = Literal("string", wanted.iso)
            checks.append(Check("date", REPAIRED, f"{name}(): {values} for the question's "
                                                  f"{[d.iso for d in ordered]}"))
            return
        checks.append(Check("date", REFUSED, f"{name}(): {', '.join(map(repr, values))} is none of the question's "
                                             f"dates ({', '.join(d.iso for d in self.dates)})"))

    def _conditions(self, name: str, arg, checks: list[Check]):
        if isinstance(arg, ListArg):
            items = tuple(self._conditions(name, item, checks) if isinstance(item, Condition) else item
                          for item in arg.items)
            items = self._swap_year_category(name, items, checks)
            return arg if items == arg.items else replace(arg, items=items)
        key = kg_match_key(arg.key)
        if key in _YEAR_KEYS:
            value = self._year_value(name, f"{arg.key} condition", arg.value, checks)
            return arg if value is arg.value else replace(arg, value=value)
        if key in _DATE_KEYS and arg.op == "eq" and self.dates and arg.value.kind == "string":
            written = str(arg.value.value)
            if not any(same_span(written, d, self.now) for d in self.dates):
                if len(self.dates) == 1:
                    checks.append(Check("date", REPAIRED, f"{name}(): {arg.key} {written!r} for the question's "
                                                          f"{self.dates[0].written!r}: {self.dates[0].iso!r}"))
                    return replace(arg, value=Literal("string", self.dates[0].iso))
                checks.append(Check("date", REFUSED, f"{name}(): {arg.key} {written!r} is none of the question's "
                                                     f"dates"))
        return arg

    def _swap_year_category(self, name, items, checks):
        """eq(year, "best actress") and eq(category, 2011): the two values change places."""
        years = [i for i, c in enumerate(items) if isinstance(c, Condition) and kg_match_key(c.key) in _YEAR_KEYS]
        others = [i for i, c in enumerate(items) if isinstance(c, Condition) and kg_match_key(c.key) == "category"]
        if len(years) == 1 and len(others) == 1:
            y, c = items[years[0]], items[others[0]]
            if not _is_year(y.value.value) and _is_year(c.value.value):
                items = list(items)
                items[years[0]], items[others[0]] = replace(y, value=c.value), replace(c, value=y.value)
                checks.append(Check("slot", REPAIRED, f"{name}(): the year and the category were in each other's "
                                                      f"conditions"))
                return tuple(items)
        return items

    def _year_value(self, name: str, slot: str, value, checks: list[Check]):
        if not isinstance(value, Literal) or value.kind not in ("number", "string"):
            return value
        written = str(value.value).strip()
        year = int(float(written)) if _is_year(written) else None
        if year is None:
            if self._is_time(written):
                return value  # "last year", "2024-02": a time expression, resolved by the API
            checks.append(Check("slot", REFUSED, f"{name}(): the {slot} holds {written!r}, which is no year"))
            return value
        if not self.years or year in self.years:
            return value
        if len(self.years) == 1:
            checks.append(Check("slot", REPAIRED, f"{name}(): the {slot} {year} for the question's {self.years[0]}"))
            return Literal("number", self.years[0], raw=str(self.years[0]))
        checks.append(Check("slot", REFUSED, f"{name}(): the {slot} {year} is none of the question's years "
                                             f"{self.years}"))
        return value

    # ------------------------------------------------------------------ what a string means
    def _is_time(self, text: str) -> bool:
        try:
            resolve_time(text, self.now)
        except KGValueError:
            return False
        return True

    def _is_date(self, text: str) -> bool:
        """An absolute date or month, or a date the question wrote (not a bare year: "1917" is a film)."""
        lowered = text.strip().lower()
        return bool(_ABSOLUTE_DATE.match(lowered)) or any(lowered in (d.written.lower(), d.iso) for d in self.dates)


def _text(arg) -> str | None:
    return str(arg.value) if isinstance(arg, Literal) and arg.kind == "string" else None


def _is_none(arg) -> bool:
    return isinstance(arg, Literal) and arg.kind == "none"


def _is_year(value) -> bool:
    try:
        number = float(str(value).strip())
    except ValueError:
        return False
    return number.is_integer() and 1900 <= number <= 2100
