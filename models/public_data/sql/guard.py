"""Running a model-written SQL statement on a connection that cannot write, escape, or run long.

The statement comes from a language model, so it is hostile until proven otherwise. Each layer would stop a
write on its own; they are stacked because each also stops something the others do not:

1. The file is opened with a `mode=ro` URI and `PRAGMA query_only`: SQLite refuses every write.
2. SQLite's authorizer is asked about every action while the statement is compiled: it allows SELECT, reads of
   the store's typed tables (models/public_data/tables.py) and a whitelist of functions, and denies everything
   else: PRAGMA, ATTACH, writes, recursive CTEs, the store's internal tables, `load_extension`, `randomblob`.
   `trim`, `ltrim` and `rtrim` with a character set (two arguments) are refused when they run: they compare
   every character of the string with every character of the set inside one call.
3. Limits on the connection (`setlimit`): at most this many characters of SQL, of a string or blob, of expression
   depth, of compound SELECTs; no attached databases. The string limit is small (10,000) because one function
   call is never interrupted (the progress handler runs between instructions, not inside `instr` or `replace`,
   which compare in O(n*m)): it bounds each call, and the statement's length bounds the number of calls.
4. Exactly one statement: the text must be one complete statement (`sqlite3.complete_statement` on what stands
   before the first `;` is the whole text, trailing `;` allowed), and it must start with SELECT or WITH.
5. A time limit through the progress handler (checked every `_PROGRESS_OPS` virtual-machine instructions, so a
   huge cross join is interrupted) and a row limit on what is fetched.

`run` never raises: a refused, malformed or interrupted statement returns a `SQLResult` with its `error` (the
reason, for the trace) and no rows.
"""
from __future__ import annotations

import os
import re
import sqlite3
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Sequence

# Scalar and aggregate functions a question over the tables needs; everything else is denied (randomblob,
# zeroblob, printf (which can build a string of any width), load_extension, sqlite_* introspection, ...).
ALLOWED_FUNCTIONS = frozenset({
    "count", "sum", "total", "avg", "min", "max", "group_concat", "abs", "round", "length", "lower", "upper",
    "trim", "ltrim", "rtrim", "substr", "substring", "instr", "replace", "coalesce", "ifnull", "nullif", "like",
    "glob", "cast", "date", "strftime", "iif"})
_PROGRESS_OPS = 1000
_START = re.compile(r"\s*(select|with)\b", re.IGNORECASE)
_ALLOWED_ACTIONS = {sqlite3.SQLITE_SELECT}


@dataclass(frozen=True)
class SQLResult:
    """What one statement returned.

    Attributes:
        statement: the statement as run (stripped).
        columns: the result's column names.
        rows: at most `row_limit` rows.
        truncated: there were more rows than `row_limit`.
        error: why it did not run ("" = it ran); a refused statement has no rows.
        seconds: the wall time it took.
        tables: the tables it read.
    """

    statement: str
    columns: tuple[str, ...] = ()
    rows: tuple[tuple, ...] = ()
    truncated: bool = False
    error: str = ""
    seconds: float = 0.0
    tables: tuple[str, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not self.error


class ReadOnlySQL:
    """Args:
        path: the store file.
        tables: the tables a statement may read (the store's typed tables).
        row_limit: rows fetched at most.
        time_limit_s: a statement running longer is interrupted.
        max_chars: a longer statement is refused before SQLite sees it; also SQLite's own SQL length limit.
        max_value_chars: SQLite's limit on one string or blob (`randomblob(1e9)` and its kin fail at it), which
            also bounds the time of one `instr` or `replace` call.
    """

    def __init__(self, path: str | os.PathLike, tables: Sequence[str], row_limit: int = 50,
                 time_limit_s: float = 0.5, max_chars: int = 2000, max_value_chars: int = 10_000):
        self.path, self.tables = Path(path), frozenset(t.lower() for t in tables)
        self.row_limit, self.time_limit_s, self.max_chars = row_limit, time_limit_s, max_chars
        if not self.path.exists():
            raise FileNotFoundError(f"public-data database {self.path} does not exist")
        self._lock = threading.Lock()  # one statement at a time: the handlers below read per-run state
        # No statement cache: a cached statement is not compiled again, so the authorizer would not see its reads
        # (`tables` would be empty the second time the same text runs).
        self._db = sqlite3.connect(f"file:{self.path}?mode=ro", uri=True, check_same_thread=False,
                                   cached_statements=0)
        self._db.execute("PRAGMA query_only = ON")
        for limit, value in ((sqlite3.SQLITE_LIMIT_LENGTH, max_value_chars),
                             (sqlite3.SQLITE_LIMIT_SQL_LENGTH, max_chars),
                             (sqlite3.SQLITE_LIMIT_ATTACHED, 0), (sqlite3.SQLITE_LIMIT_EXPR_DEPTH, 100),
                             (sqlite3.SQLITE_LIMIT_COLUMN, 64),
                             (sqlite3.SQLITE_LIMIT_COMPOUND_SELECT, 8), (sqlite3.SQLITE_LIMIT_FUNCTION_ARG, 8),
                             (sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, 200)):
            self._db.setlimit(limit, value)
        self._ends_at = 0.0
        self._read: set[str] = set()
        self._denied: list[str] = []
        self._db.set_authorizer(self._authorize)
        self._db.set_progress_handler(self._over_time, _PROGRESS_OPS)
        for name in ("trim", "ltrim", "rtrim"):  # the one-argument forms (spaces) stay SQLite's own
            self._db.create_function(name, 2, self._refuse_character_set)

    # ------------------------------------------------------------------ the handlers SQLite calls
    def _authorize(self, action, arg1, arg2, database, trigger) -> int:
        if action in _ALLOWED_ACTIONS:
            return sqlite3.SQLITE_OK
        if action == sqlite3.SQLITE_READ:
            # arg1 is the table; a column of a subquery or CTE has none of its own (None), whose reads were
            # authorised where the subquery reads its table.
            if arg1 is None or (arg1.lower() in self.tables and database in (None, "main")):
                if arg1:
                    self._read.add(arg1.lower())
                return sqlite3.SQLITE_OK
            return self._deny(f"reads {arg1}")
        if action == sqlite3.SQLITE_FUNCTION:
            return sqlite3.SQLITE_OK if (arg2 or "").lower() in ALLOWED_FUNCTIONS else self._deny(f"calls {arg2}()")
        return self._deny(_ACTION_NAMES.get(action, f"action {action}"))

    def _deny(self, what: str) -> int:
        self._denied.append(what)
        return sqlite3.SQLITE_DENY

    def _refuse_character_set(self, *_args):
        self._deny("calls trim() with a character set")
        raise sqlite3.OperationalError("trim() with a character set")

    def _over_time(self) -> int:
        return 1 if time.perf_counter() > self._ends_at else 0  # non-zero interrupts the statement

    # ------------------------------------------------------------------ running
    def run(self, statement: str) -> SQLResult:
        """Runs one read-only statement; never raises (the refusal or the error is in `error`)."""
        started = time.perf_counter()
        text = statement.strip() if isinstance(statement, str) else ""
        refusal = self._refusal(text, statement)
        if refusal:
            return SQLResult(text, error=refusal)
        with self._lock:
            self._read, self._denied = set(), []
            self._ends_at = time.perf_counter() + self.time_limit_s
            try:
                cursor = self._db.execute(text)
                rows = cursor.fetchmany(self.row_limit + 1)
                columns = tuple(d[0] for d in cursor.description or ())
                cursor.close()
            except Exception as exc:  # sqlite3.Error, ValueError (NUL), OverflowError, MemoryError: no evidence
                return SQLResult(text, error=self._explain(exc), seconds=time.perf_counter() - started)
            finally:
                self._ends_at = 0.0
            tables = tuple(sorted(self._read))
        return SQLResult(text, columns, tuple(rows[:self.row_limit]), len(rows) > self.row_limit,
                         seconds=time.perf_counter() - started, tables=tables)

    def _refusal(self, text: str, statement) -> str:
        """Why `text` is refused before SQLite compiles it ("" = it may be compiled)."""
        if not isinstance(statement, str):
            return f"not a string: {type(statement).__name__}"
        if not text:
            return "empty statement"
        if len(text) > self.max_chars:
            return f"statement longer than {self.max_chars} characters"
        if "\x00" in text:
            return "NUL character in the statement"
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: sqlite3 would raise it while checking or compiling
            return "not UTF-8 text (a lone surrogate)"
        if not _START.match(text):
            return "not a SELECT statement"
        if not _one_statement(text):
            return "not exactly one statement"
        return ""

    def _explain(self, exc: Exception) -> str:
        if self._denied:
            return f"refused: {', '.join(dict.fromkeys(self._denied))}"
        if isinstance(exc, sqlite3.OperationalError) and "interrupted" in str(exc):
            return f"interrupted after {self.time_limit_s:g} s"
        return f"{type(exc).__name__}: {exc}"

    def close(self) -> None:
        self._db.close()


def _one_statement(text: str) -> bool:
    """Whether `text` is exactly one complete SQL statement (a trailing `;` allowed).

    SQLite's own tokenizer decides where statements end (`complete_statement` understands strings, quoted
    names and comments), so a `;` inside a string literal does not split it."""
    body = text.rstrip().rstrip(";").rstrip()
    if not body or not sqlite3.complete_statement(body + "\n;"):  # "\n": a trailing -- comment ends there
        return False
    # If some proper prefix ending in ';' is already complete, a second statement follows it.
    for match in re.finditer(";", body):
        if sqlite3.complete_statement(body[:match.end()]):
            return False
    return True


_ACTIONS = ("CREATE_INDEX", "CREATE_TABLE", "CREATE_TEMP_INDEX", "CREATE_TEMP_TABLE", "CREATE_TEMP_TRIGGER",
            "CREATE_TEMP_VIEW", "CREATE_TRIGGER", "CREATE_VIEW", "DELETE", "DROP_INDEX", "DROP_TABLE",
            "DROP_TEMP_INDEX", "DROP_TEMP_TABLE", "DROP_TEMP_TRIGGER", "DROP_TEMP_VIEW", "DROP_TRIGGER", "DROP_VIEW",
            "INSERT", "PRAGMA", "READ", "SELECT", "TRANSACTION", "UPDATE", "ATTACH", "DETACH", "ALTER_TABLE",
            "REINDEX", "ANALYZE", "CREATE_VTABLE", "DROP_VTABLE", "FUNCTION", "SAVEPOINT", "RECURSIVE")
_ACTION_NAMES = {getattr(sqlite3, f"SQLITE_{name}"): name.lower().replace("_", " ") for name in _ACTIONS
                 if hasattr(sqlite3, f"SQLITE_{name}")}
