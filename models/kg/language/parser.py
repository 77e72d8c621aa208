"""Recursive-descent parser for the regularized API language (db3 §3, completed).

    program    := sep* [line (sep+ line)*] sep* eof            sep = line break | ';'
    line       := "None" | statement
    statement  := (("ALL" | "AVG") [","])* head selector*
    head       := "sort" "(" sort_conds "," ["-"|"+"] key ")" | NAME "(" [arg ("," arg)*] ")"
    arg        := STRING | ["-"] NUMBER | "None" | "true" | "false" | "*" | condition | "[" [item ("," item)*] "]"
    item       := condition | STRING
    condition  := ("eq" | "neq" | "ge" | "le") "(" key "," value ")"
    value      := STRING | ["-"] NUMBER | NAME                  a bare word is a string; true/false/None typed
    selector   := "[" key "]" | "[" ":" NUMBER "]"              ["len"] = count of the items
    key        := NAME | STRING

Design decisions:
- Hand-written, not a parser generator: the grammar is tiny and not recursive beyond one list level (so no
  recursion limit can be hit), errors name exactly the expected token, and the same code runs in *prefix
  mode* for constrained decoding, where running out of input is not an error but `IncompleteProgram`.
- Lenient where an LLM is harmlessly sloppy (either quote style, keywords in any case, bare words as
  condition values and keys, `;` or line breaks, blank lines), strict everywhere else. The grammar used
  for vLLM generates only the canonical subset (`ast.format_program`).
- db3's own surface syntax parses, normalised to the canonical form, so programs written the paper's way
  (and adapters trained on its data) still run: a condition after the condition list joins the list
  (`f(None, None, [c1, c2], c3)` = `f(None, None, [c1, c2, c3])`), a repeated or comma-separated modifier
  (`ALL, ALL f(...)`) is one modifier, `ALL` before a function that does not search (a join, which
  returns every row anyway) is dropped, and a bare year where only conditions may stand is
  `eq(year, <year>)` (`get_movie_person_crew("batman", "Jack", 1997)`).
- With `functions` (the domain's signatures) the parser also type-checks each argument as it is read, so
  a prefix checker rejects `get_movie(12` at the `12`, not at the end. Statement rules that need no
  signature (sort/`*` need a previous line, at most one `*`, `["len"]` last, AVG needs a key) are always
  checked. Model output is only ever tokenized and walked: never `eval`/`exec`.
"""
from __future__ import annotations

from typing import Iterable, Mapping

from models.kg.language.ast import (CONDITION_OPS, Call, Condition, Length, ListArg, Literal, Program, SelectKey,
                                    Slice, Sort, Star, Statement)
from models.kg.language.errors import KGSyntaxError, KGTypeError
from models.kg.language.lexer import Token, tokenize
from models.kg.language.signature import ArgKind, Param, Signature, argument_kind

_NONE_WORDS = ("none", "null")
_BOOL_WORDS = {"true": True, "false": False}
_ARGUMENT_WORDS = _NONE_WORDS + tuple(_BOOL_WORDS) + CONDITION_OPS
_ARGUMENT_WORD_KINDS = {**dict.fromkeys(_NONE_WORDS, ArgKind.NONE), **dict.fromkeys(_BOOL_WORDS, ArgKind.BOOL),
                        **dict.fromkeys(CONDITION_OPS, ArgKind.CONDITIONS)}
_SORT_CONDITION_WORDS = _NONE_WORDS + CONDITION_OPS
_MODIFIERS = ("all", "avg")


class IncompleteProgram(Exception):
    """Prefix mode only: the text ends where more input could still make a valid program."""


def parse(text: str, functions: Mapping[str, Signature] | None = None) -> Program:
    """Parses (and, given `functions`, type-checks) a whole program.

    Args:
        text: the program text.
        functions: the signatures of the domain's functions; None = syntax only, any function name.

    Returns:
        The `Program` (no statements for an empty or "None" program).

    Raises:
        KGSyntaxError, KGArityError, KGTypeError: with the position of the offending token.
    """
    return _Parser(text, functions, prefix=False).program()


def parse_prefix(text: str, functions: Mapping[str, Signature] | None = None) -> Program:
    """Like `parse`, but raises `IncompleteProgram` where the text is a valid beginning of a program."""
    return _Parser(text, functions, prefix=True).program()


class _Parser:
    def __init__(self, text: str, functions: Mapping[str, Signature] | None, prefix: bool):
        self.text = text
        self.functions = functions
        self.prefix = prefix
        self.tokens = tokenize(text, partial=prefix)
        self.index = 0

    # ------------------------------------------------------------------ token helpers
    def _peek(self) -> Token:
        return self.tokens[self.index]

    def _advance(self) -> Token:
        token = self.tokens[self.index]
        self.index += 1
        return token

    def _expect(self, token_type: str, description: str) -> Token:
        token = self._peek()
        if token.type == token_type:
            return self._advance()
        raise self._unexpected(token, description)

    def _unexpected(self, token: Token, description: str) -> Exception:
        if token.type == "eof" and self.prefix:
            return IncompleteProgram()
        return KGSyntaxError(f"expected {description} but found {token.describe()}", self.text, token.start)

    def _word(self, token: Token, candidates: Iterable[str]) -> str:
        """The lower-cased name; a name cut off by the end of a prefix must begin some candidate."""
        word = token.value.lower()
        if token.partial:
            if any(c.startswith(word) for c in candidates):
                raise IncompleteProgram()
        return word

    # ------------------------------------------------------------------ program and statements
    def program(self) -> Program:
        statements: list[Statement] = []
        self._skip_separators()
        while self._peek().type != "eof":
            statement = self._statement(has_previous=bool(statements))
            if statement is not None:
                statements.append(statement)
            token = self._peek()
            if token.type == "sep":
                self._skip_separators()
            elif token.type != "eof":
                raise self._unexpected(token, "a line break or ';' after the statement")
        return Program(tuple(statements), self.text)

    def _skip_separators(self) -> None:
        while self._peek().type == "sep":
            self._advance()

    def _statement(self, has_previous: bool) -> Statement | None:
        start = self._peek().start
        modifiers: set[str] = set()
        while True:
            token = self._peek()
            if token.type != "name":
                raise self._unexpected(token, "a function call, sort(...) or None")
            if self.functions is None and token.partial:
                raise IncompleteProgram()  # any function name may follow
            candidates = ["sort", *(() if modifiers else _NONE_WORDS), *_MODIFIERS, *(self.functions or ())]
            word = self._word(token, candidates)
            if not modifiers and word in _NONE_WORDS:
                self._advance()
                return None
            if word not in _MODIFIERS:
                break
            modifiers.add(word)  # db3 wrote "ALL, ALL get_...": a repeated modifier and a comma are harmless
            self._advance()
            if self._peek().type == "comma":
                self._advance()
        all_matches = "all" in modifiers
        if word == "sort":
            head = self._sort(has_previous, all_matches, start)
        else:
            head = self._call(has_previous, all_matches, start)
            if all_matches and self.functions is not None and not self.functions[head.name].searches:
                all_matches = False  # db3's ALL before a join: it returns every row anyway
        average = "avg" in modifiers
        selectors = self._selectors(average, start)
        end = self.tokens[self.index - 1].end
        statement = Statement(head, tuple(selectors), all_matches, average, start, self.text[start:end])
        if average and statement.key is None and (self._peek().type != "eof" or not self.prefix):
            raise KGTypeError('AVG needs a key to average, e.g. AVG get_stock_price(...)["close"]',
                              self.text, statement.position)
        return statement

    # ------------------------------------------------------------------ heads
    def _call(self, has_previous: bool, all_matches: bool, start: int) -> Call:
        name = self._advance()
        signature = None
        if self.functions is not None:
            signature = self.functions.get(name.value)
            if signature is None:
                raise KGTypeError(f"unknown function {name.value!r}; known functions: "
                                  f"{', '.join(sorted(self.functions))}", self.text, name.start)
        self._expect("lparen", "'('")
        args = []
        if self._peek().type != "rparen":
            while True:
                param = signature.params[len(args)] if signature and len(args) < len(signature.params) else None
                arg = _year_as_condition(self._argument(param), param)
                if param is None and signature and args and _holds_conditions(arg) and _holds_conditions(args[-1]):
                    # db3 wrote a condition after the condition list: f(None, None, [c1, c2], c3) = [c1, c2, c3]
                    joined = args.pop()
                    arg = ListArg(_condition_items(joined) + _condition_items(arg), joined.position)
                if isinstance(arg, Star):
                    if not has_previous:
                        raise KGTypeError("* stands for the previous line's output, but there is no previous "
                                          "line", self.text, arg.position)
                    if any(isinstance(a, Star) for a in args):
                        raise KGTypeError("only one argument may be *", self.text, arg.position)
                if signature is not None:
                    signature.check_argument(len(args), arg, self.text)
                args.append(arg)
                if self._peek().type != "comma":
                    break
                self._advance()
        close = self._expect("rparen", "')' or ','" if args else "an argument or ')'")
        call = Call(name.value, tuple(args), name.start)
        if signature is not None:
            signature.check_call(call, self.text, close.start)
        return call

    def _sort(self, has_previous: bool, all_matches: bool, start: int) -> Sort:
        sort_token = self._advance()
        if all_matches:
            raise KGTypeError("ALL applies to a function that searches for an entity, not to sort(...)",
                              self.text, start)
        if not has_previous:
            raise KGTypeError("sort(...) needs a previous line whose rows it sorts", self.text, sort_token.start)
        self._expect("lparen", "'('")
        token = self._peek()
        if token.type == "lbracket":
            listed = self._list()
            if argument_kind(listed) is not ArgKind.CONDITIONS:
                raise KGTypeError("sort(...) takes None, a condition or a list of conditions",
                                  self.text, listed.position)
            conditions = listed.items
        elif token.type == "name" and self._word(token, _SORT_CONDITION_WORDS) in _NONE_WORDS:
            self._advance()
            conditions = ()
        elif token.type == "name" and token.value.lower() in CONDITION_OPS:
            conditions = (self._condition(),)
        else:
            raise self._unexpected(token, "None, a condition or a list of conditions")
        self._expect("comma", "','")
        descending, key = self._sort_key()
        self._expect("rparen", "')'")
        return Sort(tuple(conditions), key, descending, sort_token.start)

    def _sort_key(self) -> tuple[bool, str]:
        descending = False
        if self._peek().type in ("minus", "plus"):
            descending = self._advance().type == "minus"
        return descending, self._key("a key to sort by")

    def _key(self, description: str) -> str:
        """A key: a bare name or a non-empty quoted string (taken literally)."""
        token = self._peek()
        if token.type not in ("name", "string"):
            raise self._unexpected(token, description)
        if not self._advance().value and not token.partial:
            raise KGSyntaxError("a key may not be empty", self.text, token.start)
        return token.value

    # ------------------------------------------------------------------ arguments
    def _argument(self, param: Param | None = None):
        """One argument; `param` (when known) narrows which keywords a cut-off name may still become."""
        token = self._peek()
        if token.type in ("string", "number", "minus"):
            return self._scalar()
        if token.type == "star":
            return Star(self._advance().start)
        if token.type == "lbracket":
            return self._list()
        if token.type == "name":
            words = _ARGUMENT_WORDS if param is None else [w for w, kind in _ARGUMENT_WORD_KINDS.items()
                                                            if kind in param.kinds]
            word = self._word(token, words)
            if word in CONDITION_OPS:
                return self._condition()
            if word in _NONE_WORDS or word in _BOOL_WORDS:
                return self._scalar()
            raise KGSyntaxError(f"expected an argument but found name {token.value!r} "
                                "(quote names: \"...\")", self.text, token.start)
        raise self._unexpected(token, "an argument")

    def _scalar(self) -> Literal:
        """A string, number, None or boolean; a bare word is read as a string (condition values)."""
        token = self._peek()
        if token.type == "minus":
            self._advance()
            number = self._expect("number", "a number after '-'")
            return Literal("number", -number.value, token.start, "-" + number.raw)
        if token.type == "number":
            return Literal("number", self._advance().value, token.start, token.raw)
        if token.type == "string":
            return Literal("string", self._advance().value, token.start)
        if token.type == "name":
            self._advance()
            word = token.value.lower()
            if word in _NONE_WORDS:
                return Literal("none", None, token.start)
            if word in _BOOL_WORDS:
                return Literal("bool", _BOOL_WORDS[word], token.start)
            return Literal("string", token.value, token.start)
        raise self._unexpected(token, "a value")

    def _condition(self) -> Condition:
        op = self._advance()
        self._expect("lparen", "'('")
        key = self._key("a key")
        self._expect("comma", "','")
        value = self._scalar()
        self._expect("rparen", "')'")
        return Condition(op.value.lower(), key, value, op.start)

    def _list(self) -> ListArg:
        start = self._advance().start
        items = []
        if self._peek().type != "rbracket":
            while True:
                items.append(self._list_item())
                if argument_kind(items[-1]) is not argument_kind(items[0]):
                    raise KGTypeError("a list must hold only conditions or only strings",
                                      self.text, items[-1].position)
                if self._peek().type != "comma":
                    break
                self._advance()
        self._expect("rbracket", "']' or ','" if items else "a condition, a string or ']'")
        return ListArg(tuple(items), start)

    def _list_item(self):
        token = self._peek()
        if token.type == "string":
            return self._scalar()
        if token.type == "name" and self._word(token, CONDITION_OPS) in CONDITION_OPS:
            return self._condition()
        raise self._unexpected(token, "a condition or a string")

    # ------------------------------------------------------------------ selectors
    def _selectors(self, average: bool, statement_start: int) -> list:
        selectors = []
        while self._peek().type == "lbracket":
            start = self._advance().start
            if selectors and isinstance(selectors[-1], Length):
                raise KGTypeError('nothing may follow ["len"]', self.text, start)
            token = self._peek()
            if token.type == "colon":
                self._advance()
                bound = self._expect("number", "a whole number after ':'")
                if not isinstance(bound.value, int):
                    raise KGSyntaxError("a slice bound must be a whole number", self.text, bound.start)
                selectors.append(Slice(bound.value, start))
            elif token.type in ("string", "name"):
                key = self._key("a key or ':'")
                if key == "len" and average:
                    raise KGTypeError('AVG and ["len"] cannot be combined', self.text, statement_start)
                selectors.append(Length(start) if key == "len" else SelectKey(key, start))
            else:
                raise self._unexpected(token, "a key or ':'")
            self._expect("rbracket", "']'")
        return selectors


def _holds_conditions(arg) -> bool:
    """A condition, or a list of conditions (not an empty list, which may stand for no strings)."""
    return isinstance(arg, Condition) or (isinstance(arg, ListArg) and bool(arg.items)
                                           and all(isinstance(item, Condition) for item in arg.items))


def _condition_items(arg) -> tuple[Condition, ...]:
    return (arg,) if isinstance(arg, Condition) else arg.items


def _year_as_condition(arg, param: Param | None):
    """db3's `get_movie_person_crew("batman", "Jack", 1997)`: a year where only conditions may stand is
    `eq(year, 1997)`."""
    if (param is not None and ArgKind.CONDITIONS in param.kinds and ArgKind.NUMBER not in param.kinds
            and isinstance(arg, Literal) and arg.kind == "number" and isinstance(arg.value, int)
            and 1000 <= arg.value <= 2999):
        return Condition("eq", "year", arg, arg.position)
    return arg
