"""Every measured figure is stated once, in docs/results.md, under its command, date and commit; elsewhere the
documentation, the profiles' comments and the code's comments link to its section instead of repeating it.

A figure is a number with a unit of time, memory, share or speed (`4.9 s`, `16.1 GB`, `28.4 %`, `47.2 tokens/s`).
Each one found in README.md (outside its generated current-results block), docs/*.md other than results.md, the
comments of models/profiles/*.yaml and the `#` comments of the code must be one results.md holds (the same number
and unit), or a constant of CONSTANTS: a limit, a setting or a fact of the hardware, not something measured here.
"""
import io
import re
import tokenize
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "docs" / "results.md"
GENERATED = re.compile(r"<!-- current-results:start -->.*?<!-- current-results:end -->", re.S)
UNIT = r"(?:tokens/s|ms|s|min|h|GB|GiB|MB|MiB|%)"
# A space before a unit of letters ("1970s" is a decade), none needed before "%".
FIGURE = re.compile(r"(?<![\w.\-/])(\d[\d,]*(?:\.\d+)?)(?:\s(" + UNIT + r")|(%))(?![\w/])")
CODE_PLACES = ("models", "evaluation", "training", "scripts", "submission", "mock_api", "local_evaluation.py")

# (figure, reason): constants, stated wherever they are used.
CONSTANTS = {
    "30 s": "the grader's limit per question (CRAG's rules)",
    "16 GB": "a T4's memory (the grader's g4dn.12xlarge: 4 of them)",
    "16.1 GB": "Llama-3-8B's fp16 weights: 8.03e9 parameters x 2 bytes, arithmetic",
    "80 GB": "an A100's or H100's memory",
    "28.4 %": "db3's published Task 1 score (its paper)",
    "42.7 %": "db3's published Task 2 score (its paper)",
    "47.8 %": "db3's published Task 3 score (its paper)",
    "8.9 %": "APEX's published local score (its report)",
    "44.9 %": "APEX's published official score (its report)",
    "0.5 s": "the SQL guard's time limit per statement (a setting)",
    "1 s": "a test's stage deadline (a setting of the check)",
    "100 %": "all of something, not a measurement",
    "0 %": "none of something, not a measurement",
    "50 %": "half, as a rule's threshold",
    "25 %": "make adapters' KG check: the share of the data's entities the KG must serve (a heuristic floor)",
    "20 %": "the spare memory g4dn-hf wants before it keeps a model on one GPU (a rule of the code)",
    "24 GB": "an L4's or A10's memory",
    "1 GiB": "cpu-vllm's KV cache (a setting)",
    "256 MB": "Ray's object store on a local cluster (a setting)",
    "1 MB": "preflight's git-LFS threshold for a weight file (a setting)",
    # vLLM 0.32.0's shared-memory rings (models/llm/shared_memory.py), read from its code:
    "16 MiB": "vLLM's request-ring chunk (its default)", "24 MiB": "vLLM's reply-ring chunk (fixed in its code)",
    "240 MiB": "vLLM's reply ring: 10 chunks of 24 MiB", "1120 MiB": "4 workers' rings at vLLM's defaults, arithmetic",
    "512 MiB": "the --shm-size the message rounds to (a rule of the code)",
    # The robustness and real-engine tests' inputs, each stated beside the test that uses it:
    "3 MB": "a hostile page's size (test input)", "4 MB": "a hostile page's size (test input)",
    "10 MB": "a hostile page's size (test input)", "3 s": "a slowed page's delay (test input)",
    "0.15 s": "a stand-in engine step (test input)", "7.5 s": "a test's deadline (test input)",
    "6 s": "a test batch's deadline (test input)", "7 s": "a stand-in answer's length (test input)",
    "14 s": "a stand-in KG program's length (test input)", "1.5 s": "a deadline test's bound (test input)",
}


def normal(number: str, unit: str) -> str:
    return f"{number.replace(',', '')} {unit}"


def figures(text: str) -> list[tuple[int, str]]:
    """(line, normalised figure) of every figure of `text`."""
    return [(text.count("\n", 0, m.start()) + 1, normal(m.group(1), m.group(2) or m.group(3)))
            for m in FIGURE.finditer(text)]


def held(results_text: str) -> set[str]:
    return {figure for _, figure in figures(results_text)}


def comments_of_python(text: str) -> str:
    """The `#` comments of Python source, each on its own line number (the rest blanked)."""
    lines = [""] * (text.count("\n") + 1)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                lines[token.start[0] - 1] = token.string
    except (tokenize.TokenError, SyntaxError):
        pass
    return "\n".join(lines)


def comments_of_yaml(text: str) -> str:
    return "\n".join(line.partition("#")[2] if "#" in line else "" for line in text.split("\n"))


def stated_texts(root: Path = REPO) -> list[tuple[str, str]]:
    """(file, text with only what is checked) of every place a figure must not be repeated."""
    places = [(root / "README.md", lambda t: GENERATED.sub(lambda m: "\n" * m.group(0).count("\n"), t))]
    places += [(path, lambda t: t) for path in sorted((root / "docs").glob("*.md")) if path.name != "results.md"]
    places += [(path, comments_of_yaml) for path in sorted((root / "models" / "profiles").glob("*.yaml"))]
    for place in CODE_PLACES:
        path = root / place
        files = [path] if path.is_file() else sorted(path.rglob("*.py")) if path.is_dir() else []
        places += [(file, comments_of_python) for file in files]
    return [(str(path.relative_to(root)), reader(path.read_text(encoding="utf-8"))) for path, reader in places
            if path.is_file()]


def repeated_figures(root: Path = REPO) -> list[str]:
    """`file:line: figure` for each figure stated outside results.md that results.md does not hold."""
    known = held((root / "docs" / "results.md").read_text(encoding="utf-8")) | set(CONSTANTS)
    return [f"{name}:{line}: {figure}" for name, text in stated_texts(root) for line, figure in figures(text)
            if figure not in known]


def test_every_figure_outside_results_md_is_one_results_md_holds():
    problems = repeated_figures()
    assert problems == [], ("figures that docs/results.md does not hold: move each under its command there and "
                            "link to it, or name it in CONSTANTS with a reason:\n" + "\n".join(problems))


def test_the_scan_sees_figures_and_results_md_holds_many():
    assert len(held(RESULTS.read_text(encoding="utf-8"))) > 100
    assert sum(len(figures(text)) for _, text in stated_texts()) > 20
    assert all(reason for reason in CONSTANTS.values())


# --- the parts, and a planted figure ---

def test_figures_are_read_with_their_units():
    assert [f for _, f in figures("took 4.9 s, then 1,400 MB and 47.2 tokens/s at 28.4 % and 5% (v1.5 s3 10s 1970s)")] \
        == ["4.9 s", "1400 MB", "47.2 tokens/s", "28.4 %", "5 %"]
    assert comments_of_python("x = 5  # 7.9 s here\ns = '3 s'\n") == "# 7.9 s here\n\n"
    assert comments_of_yaml("a: 1  # 2 s\nb: 3 s\n") == " 2 s\n\n"


@pytest.fixture
def tiny_repo(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "results.md").write_text("## Runs\n\nThe sample took 4.9 s per question.\n", encoding="utf-8")
    (tmp_path / "README.md").write_text(
        "# Package\n\n<!-- current-results:start -->\n| 12.3 s |\n<!-- current-results:end -->\n\n"
        "Each question gets 30 s; the sample takes [4.9 s](docs/results.md#runs).\n", encoding="utf-8")
    (tmp_path / "models" / "profiles").mkdir(parents=True)
    (tmp_path / "models" / "profiles" / "cpu.yaml").write_text("llm:\n  batch: 4  # budget 30 s\n", encoding="utf-8")
    return tmp_path


def test_a_figure_results_md_holds_a_constant_and_the_generated_block_pass(tiny_repo):
    assert repeated_figures(tiny_repo) == []


def test_a_planted_figure_is_reported(tiny_repo):
    (tiny_repo / "docs" / "gpu.md").write_text("# GPU\n\nStart-up takes 7.9 s.\n", encoding="utf-8")
    profile = tiny_repo / "models" / "profiles" / "cpu.yaml"
    profile.write_text(profile.read_text() + "web:\n  pages: 5  # about 2.5 s each\n", encoding="utf-8")
    (tiny_repo / "models" / "deadline.py").write_text("LIMIT = 3  # measured: 1.25 GB\n", encoding="utf-8")
    assert repeated_figures(tiny_repo) == ["docs/gpu.md:3: 7.9 s", "models/profiles/cpu.yaml:4: 2.5 s",
                                           "models/deadline.py:1: 1.25 GB"]
