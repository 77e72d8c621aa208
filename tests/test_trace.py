"""The declared trace (models/trace.py): the writers in models/ write, and the readers in evaluation/ read, only
the keys `Trace` declares, and a real run's traces hold only those (tests/test_end_to_end.py's `check_outputs`). Keys are read from the code's own syntax
(`ast`): a string key used on an expression named `trace` (`state.trace["kg"]`, `trace.get("why")`,
`record.get("trace")["stages"]`, `state.trace.update(task=...)`, `Answer(..., trace={"why": ...})`)."""
import ast
from pathlib import Path

import pytest

from models.trace import FINISHED_KEYS, LLM_CALL_KEYS, TRACE_KEYS, new_trace

REPO = Path(__file__).resolve().parent.parent
READERS = ("evaluation/explain.py", "evaluation/html_report.py", "training/gate/fit.py",
           "evaluation/experiments/latency_model.py")


def _names_trace(node) -> bool:
    if isinstance(node, ast.Name) or isinstance(node, ast.Attribute):
        return (node.id if isinstance(node, ast.Name) else node.attr) == "trace"
    if isinstance(node, ast.Subscript):  # record["trace"]
        return isinstance(node.slice, ast.Constant) and node.slice.value == "trace"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        return bool(node.args) and isinstance(node.args[0], ast.Constant) and node.args[0].value == "trace"
    if isinstance(node, ast.BoolOp):  # (record.get("trace") or {})
        return any(_names_trace(v) for v in node.values)
    return False


def trace_keys(path: Path) -> set[tuple[str, int]]:
    """(key, line) of every string key used on a trace in `path`."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Subscript) and _names_trace(node.value) and isinstance(node.slice, ast.Constant):
            found.add((node.slice.value, node.lineno))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and _names_trace(node.func.value):
            if node.func.attr in ("get", "setdefault", "pop") and node.args and isinstance(node.args[0], ast.Constant):
                found.add((node.args[0].value, node.lineno))
            elif node.func.attr == "update":
                found |= {(k.arg, node.lineno) for k in node.keywords if k.arg}
        elif isinstance(node, ast.keyword) and node.arg == "trace" and isinstance(node.value, ast.Dict):
            found |= {(k.value, node.lineno) for k in node.value.keys if isinstance(k, ast.Constant)}
    return {(key, line) for key, line in found if isinstance(key, str)}


def writers() -> list[Path]:
    """The modules of models/ that set a key on a question's trace (`state.trace[...]`, `Answer(trace=...)`)."""
    return [p for p in sorted((REPO / "models").rglob("*.py"))
            if ".trace[" in p.read_text(encoding="utf-8") or "trace={" in p.read_text(encoding="utf-8")
            or ".trace.update(" in p.read_text(encoding="utf-8")]


def test_the_scan_finds_the_writers_and_the_readers():
    written = {key for path in writers() for key, _ in trace_keys(path)}
    assert {"llm_calls", "attempts", "kg", "why", "stages", "omni"} <= written
    read = {key for name in READERS for key, _ in trace_keys(REPO / name)}
    assert {"why", "kg", "llm_calls"} <= read


@pytest.mark.parametrize("path", writers(), ids=lambda p: str(p.relative_to(REPO)))
def test_writers_write_only_declared_keys(path):
    """A key a stage adds to a question's trace is declared in models/trace.py first. Sub-traces a module keeps
    under a local name `trace` (a KG or SQL provenance) are the declared keys' contents, checked only where they
    are set on a question's trace."""
    lines = path.read_text(encoding="utf-8").splitlines()
    keys = {(key, line) for key, line in trace_keys(path)
            if "state.trace" in lines[line - 1] or "trace=" in lines[line - 1]}
    assert not {(key, line) for key, line in keys if key not in TRACE_KEYS}


@pytest.mark.parametrize("name", READERS)
def test_readers_read_only_declared_keys(name):
    assert not {(key, line) for key, line in trace_keys(REPO / name) if key not in TRACE_KEYS}


def test_an_llm_call_holds_only_declared_keys():
    """models/answering/llm_calls.py's `call` dict: its literal keys and the keys set on it after."""
    tree = ast.parse((REPO / "models" / "answering" / "llm_calls.py").read_text(encoding="utf-8"))
    keys = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "call" for t in node.targets) \
                and isinstance(node.value, ast.Dict):
            keys |= {k.value for k in node.value.keys if isinstance(k, ast.Constant)}
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and node.value.id == "call" \
                and isinstance(node.slice, ast.Constant):
            keys.add(node.slice.value)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "update" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "call":
            keys |= {k.arg for k in node.keywords}
    assert {"stage", "adapter", "error", "retryable"} <= keys and keys <= LLM_CALL_KEYS


def test_a_new_trace_and_the_finished_keys_are_declared():
    assert set(new_trace()) <= TRACE_KEYS and set(FINISHED_KEYS) <= TRACE_KEYS
