"""The product speaks of the product, not of how it was made: no tracker numbers, work sessions, helpers, acceptance
"bars", code "rooms", briefs or borrowed machines in README.md, docs/, prompts/, the data folders' READMEs, the code
and the tests.

Each pattern below matches a word in its process sense only; the same words have technical senses that stay
(`requests.Session`, pytest's `scope="session"`, a trading session, a stock's minute bars, a chart's bars, lark's
`*` helpers, room left in a context window). Where a process pattern also matches a technical phrase, TECHNICAL names
that phrase and why it stays.
"""
import re
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
THIS_FILE = Path(__file__).resolve()  # holds the patterns and planted examples themselves

# (name, pattern): each matches the process sense of a word, case-insensitively.
PROCESS = [
    ("issue number", r"\bissues?\s+#?\d+\b"),
    ("this issue", r"\b(this|that|the|an|another|previous|next) issue(?:'s)?\s+(?:filed|beside|asks|says|lists|text|"
                   r"trap|brief)\b|\bthis issue\b|\bthe issue's\b"),
    ("work session", r"\b(this|that|the previous|an earlier|a later|the next|another|each|every|one|same|my|our) "
                     r"sessions?\b|\bsessions?\s+(notes?|budget|brief|log)\b|\bsession of work\b"),
    ("helper (an agent)", r"\b(the|a|another|each|every|one|our) helpers?\b"),
    ("acceptance bars", r"\bthe bars\b|\bsame bars\b|\b(judge|test|suite|check)'s bars\b|\bbars\s+(hold|fail|pass|are met)\b"
                        r"|\b(raise|clear|meet)s?\s+the\s+bar\b"),
    ("code rooms", r"\brooms\b"),
    ("brief", r"\bthe brief\b|\bbrief's\b|\bper (the )?brief\b"),
    ("lent machine", r"\blent\b"),
    ("house refactor", r"\bhouse refactor"),
    ("the lead (a person)", r"\bthe lead\b"),
    ("engineer", r"\bengineers?\b"),
    ("audit (a review)", r"\b(the|an|this|a fresh|the previous|last) audit\b"),
    ("round of work", r"\b(last|this|next|previous|each) round\b"),
    ("filed", r"\bfiled (by|beside|as)\b"),
]
PROCESS_RE = [(name, re.compile(pattern, re.I)) for name, pattern in PROCESS]

# (pattern, reason): a technical phrase that a process pattern above would otherwise match; a match inside one of
# these on the same line stays.
TECHNICAL = [
    (r"\bthe lead (actor|actress|role|singer|vocalist)s?\b", "a film's or a song's cast, as public-data records word it"),
    (r"\b(the|a|another|each|every|one|our) helpers? (function|module|class|method|script)s?\b",
     "code that other code calls"),
    (r"\b(last|this|next|previous|each) round of\b", "a round of an algorithm: ARM's drafts, the judge's rounds"),
]
TECHNICAL_RE = [re.compile(pattern, re.I) for pattern, _ in TECHNICAL]


def scanned_files(root: Path = REPO) -> list[Path]:
    """README.md, docs/, prompts/, the data folders' READMEs, the code and the tests: every tracked text file there."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"], cwd=root,
                            capture_output=True, text=True, check=True).stdout.split("\0")
    found = []
    for name in filter(None, listed):
        path = root / name
        if not path.is_file() or path.resolve() == THIS_FILE:
            continue
        top = name.split("/")[0]
        code = top in ("models", "evaluation", "training", "scripts", "submission", "mock_api", "tests", ".ci") \
            and path.suffix in (".py", ".yaml", ".yml", ".j2", ".sh", ".txt", ".md", "")
        if name == "README.md" or (top in ("docs", "prompts") and path.suffix in (".md", ".txt")) or code \
                or (top == "data" and path.name.lower().startswith("readme")) \
                or name in ("local_evaluation.py", "Makefile", "Dockerfile", "pyproject.toml", "pytest.ini"):
            found.append(path)
    return found


def process_words(path: Path, root: Path = REPO) -> list[str]:
    """`file:line: word ("text")` for each process word of `path` that no TECHNICAL entry allows."""
    relative = str(path.relative_to(root))
    problems = []
    for number, line in enumerate(path.read_text(encoding="utf-8", errors="replace").split("\n"), 1):
        technical = [(m.start(), m.end()) for pattern in TECHNICAL_RE for m in pattern.finditer(line)]
        for name, pattern in PROCESS_RE:
            for match in pattern.finditer(line):
                if any(start <= match.start() and match.end() <= end for start, end in technical):
                    continue
                problems.append(f"{relative}:{number}: {name} ({match.group(0)!r} in {line.strip()[:120]!r})")
    return problems


FILES = scanned_files()


def test_the_scan_covers_the_product_and_the_tests():
    names = {str(path.relative_to(REPO)) for path in FILES}
    assert {"README.md", "docs/results.md", "Makefile", "local_evaluation.py", "tests/conftest.py"} <= names
    assert any(name.startswith("prompts/") for name in names)
    assert any(name.startswith("data/") and name.endswith("README.md") for name in names)
    assert len(FILES) > 300


def test_no_process_words():
    problems = [problem for path in FILES for problem in process_words(path)]
    assert problems == [], "\n".join(problems)


def test_each_technical_exception_covers_a_phrase_a_process_pattern_matches():
    """Each entry of TECHNICAL has a reason and lets through one of the technical lines below that a process pattern
    matches (else it allows nothing and goes)."""
    for (pattern, reason), compiled in zip(TECHNICAL, TECHNICAL_RE):
        assert reason
        assert any(compiled.search(line) and any(p.search(line) for _, p in PROCESS_RE) for line in TECHNICAL_LINES), \
            pattern


# --- planted process words fail; the technical senses pass ---

@pytest.mark.parametrize("line", [
    "Fixed in issue 33.", "As this issue asks, the table moved.", "The issue's trap: a stale figure.",
    "Measured in this session on the shared machine.", "the helper wrote the table", "the bars hold",
    "exit 1 when the bars fail", "evaluation/ in rooms", "the brief's mix of sets", "on the GPU we were lent",
    "the house refactor", "the lead merges it", "a fresh audit found ten", "fixed last round",
])
def test_a_planted_process_word_is_reported(tmp_path, line):
    doc = tmp_path / "README.md"
    doc.write_text(f"Intro.\n{line}\n", encoding="utf-8")
    assert process_words(doc, tmp_path), line


TECHNICAL_LINES = [
    "self.session = requests.Session()", '@pytest.fixture(scope="session")', "loaded once per test session",
    "A session whose connection pool holds the requests", "1-minute bars for the last 5 sessions",
    "one-minute bars, for counts", "one group of three bars (score, accuracy)", "lark's `*` helpers",
    "the patterns and helpers they share", "room left in the context", "The lead actors are A, B and C.",
    "objects each new object brings in per round", "a helper function of the parser", "its last round of drafts",
]


@pytest.mark.parametrize("line", TECHNICAL_LINES)
def test_technical_senses_are_not_reported(tmp_path, line):
    doc = tmp_path / "README.md"
    doc.write_text(f"Intro.\n{line}\n", encoding="utf-8")
    assert process_words(doc, tmp_path) == [], line
