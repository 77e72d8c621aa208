"""The documentation's links lead somewhere, and the code's pointers into it name headings that exist.

- README.md and every docs/**/*.md: each Markdown link or image (`[text](target)`, `![alt](target)`, `[ref]: target`)
  outside fenced code and inline code, other than http(s): and mailto:, names a file or folder of the repository
  (relative to the linking file), and its `#anchor` is a GitHub heading slug of the target (of the same file for
  `#anchor` alone), or an explicit `<a id=...>` / `<a name=...>` there.
- The code (`*.py`, `*.yaml`, Makefile, Dockerfile tracked under the packages, scripts/, local_evaluation.py and
  .ci/): each `README "Heading"` (or 'Heading', or `README: 'Heading'`) and `docs/NAME.md "Heading"` names the start
  of a heading of that file (ignoring case and backticks), so a renamed or moved section is caught where it is cited.
- README.md and every docs/**/*.md: each file they cite in inline code (a path that starts with one of the
  repository's top-level entries, or any `NAME.md`) exists: in the repository (relative to its root or to the
  citing file; a bare `NAME.md` anywhere in it), in a git-ignored place an entrant fills (weights, adapters,
  outputs), or among the files a run writes; placeholders (`NAME`, `taskN`) are not checked. A cited path
  outside the repository (`../...`) is reported: a clone has nothing beside it. CRAG's own files are cited as
  `$CRAG_DATA/<name>`, and `<name>` must be one the setting holds (`models.crag_data.FILES`).
- README.md and every docs/**/*.md: each `#` heading has a blank line (or the file's edge) above and below it,
  so no heading is glued to a paragraph.
- docs/results.md: each `##` section names the commit its figures were recorded in (`commit abc1234`).
"""
import re
import subprocess
import urllib.parse
from pathlib import Path

import pytest

from models import crag_data

REPO = Path(__file__).resolve().parent.parent
CODE_PLACES = ("models/", "evaluation/", "submission/", "training/", "mock_api/", "scripts/", ".ci/",
               "local_evaluation.py", "Makefile", "Dockerfile")
CODE_KINDS = (".py", ".yaml", ".yml")

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
INLINE_CODE = re.compile(r"(`+)(?:.|\n)*?(?<!`)\1(?!`)")
ATX = re.compile(r"^ {0,3}#{1,6}(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
INLINE_LINK = re.compile(r"\]\(\s*(<[^>]*>|[^)\s]+)(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
REFERENCE_LINK = re.compile(r"^ {0,3}\[[^\]]+\]:\s*(<[^>]*>|\S+)", re.M)
EXPLICIT_ANCHOR = re.compile(r"<a\s[^>]*?(?:id|name)=[\"']([^\"']+)[\"']", re.I)
EXTERNAL = ("http:", "https:", "mailto:")
LINE_ANCHOR = re.compile(r"L\d+(?:-L\d+)?")
# A space or a colon between the file and the quote: `"README.md", x / "docs"` in code is no reference; nor is a
# README of a data folder (`data/public/README.md "..."`).
CODE_REFERENCE = re.compile(r"(?<![\w/.])(README(?:\.md)?|docs/[\w./-]+?\.md)(?::[ \t]*|[ \t]+)([\"'])([^\"'\n]+)\2")


def outside_fences(text: str) -> list[str]:
    """The lines of `text`, those of fenced code blocks blanked (so line numbers stay)."""
    lines, fence = [], None
    for line in text.split("\n"):
        opening = FENCE.match(line)
        if fence is None and opening:
            fence = opening.group(1)
            lines.append("")
        elif fence is not None:
            closing = FENCE.match(line)
            if closing and closing.group(1)[0] == fence[0] and len(closing.group(1)) >= len(fence) \
                    and not line.strip()[len(closing.group(1)):].strip():
                fence = None
            lines.append("")
        else:
            lines.append(line)
    return lines


def without_inline_code(text: str) -> str:
    """`text` with every code span blanked (line breaks kept)."""
    return INLINE_CODE.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)


def headings(text: str) -> list[str]:
    """The heading texts of a Markdown text (ATX and setext), in order; none from fenced code."""
    found, previous = [], ""
    for line in outside_fences(text):
        atx = ATX.match(line)
        if atx:
            found.append((atx.group(1) or "").strip())
            previous = ""
            continue
        if SETEXT.match(line) and previous.strip() and not re.match(r"^\s*([-*+>|]|\d+[.)])", previous):
            found.append(previous.strip())
            previous = ""
            continue
        previous = line
    return found


def slug_text(heading: str) -> str:
    """The text GitHub makes a slug of: links read as their text, HTML tags and backticks gone."""
    heading = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)
    return re.sub(r"<[^>]+>", "", heading).replace("`", "")


def slugs(text: str) -> set[str]:
    """GitHub's anchors of a Markdown text: lowercase, only letters, digits, spaces, hyphens and underscores kept,
    spaces as hyphens, a repeated slug numbered -1, -2, ... in order; plus explicit <a id/name> anchors."""
    seen: dict[str, int] = {}
    anchors = set()
    for heading in headings(text):
        slug = re.sub(r"[^\w\- ]", "", slug_text(heading).lower()).replace(" ", "-")
        anchors.add(f"{slug}-{seen[slug]}" if slug in seen else slug)
        seen[slug] = seen.get(slug, 0) + 1
    return anchors | set(EXPLICIT_ANCHOR.findall(text))


def link_targets(text: str) -> list[tuple[int, str]]:
    """(line, target) of every inline, image and reference-style link outside fenced and inline code."""
    body = without_inline_code("\n".join(outside_fences(text)))
    found = []
    for pattern in (INLINE_LINK, REFERENCE_LINK):
        for match in pattern.finditer(body):
            found.append((body.count("\n", 0, match.start()) + 1, match.group(1).strip("<>")))
    return sorted(found)


def broken_links(path: Path, root: Path) -> list[str]:
    """`file:line: target (why)` for every link of the Markdown file `path` that leads nowhere in `root`."""
    problems = []
    text = path.read_text(encoding="utf-8")
    for line, target in link_targets(text):
        if target.lower().startswith(EXTERNAL):
            continue
        where = f"{path.relative_to(root)}:{line}: ({target})"
        part, _, anchor = urllib.parse.unquote(target).partition("#")
        part = part.split("?")[0]
        linked = (path.parent / part).resolve() if part else path
        if not linked.is_relative_to(root.resolve()) or not linked.exists():
            problems.append(f"{where} no such file or folder in the repository")
        elif anchor and linked.suffix.lower() == ".md":
            if anchor not in slugs(linked.read_text(encoding="utf-8")):
                problems.append(f"{where} no heading of {linked.relative_to(root.resolve())} has the anchor #{anchor}")
        elif anchor and not (linked.is_file() and LINE_ANCHOR.fullmatch(anchor)):
            problems.append(f"{where} #{anchor} is neither a Markdown heading nor a line anchor")
    return problems


def bare(heading: str) -> str:
    return heading.replace("`", "").strip().lower()


def stale_references(path: Path, root: Path) -> list[str]:
    """`file:line: reference (why)` for every `README "Heading"` / `docs/NAME.md "Heading"` of `path` that no
    heading of that file starts with."""
    problems = []
    text = path.read_text(encoding="utf-8", errors="replace")
    for match in CODE_REFERENCE.finditer(text):
        document, cited = match.group(1), match.group(3)
        target = root / ("README.md" if document.startswith("README") else document)
        where = f"{path.relative_to(root)}:{text.count(chr(10), 0, match.start()) + 1}: {match.group(0)}"
        if not target.is_file():
            problems.append(f"{where} ({document} does not exist)")
        elif not any(bare(h).startswith(bare(cited)) for h in headings(target.read_text(encoding="utf-8"))):
            problems.append(f"{where} (no heading of {target.relative_to(root)} starts with {cited!r})")
    return problems


CITED_PATH = re.compile(r"^(?:\./|\$CRAG_DATA/)?[\w.+-]+(?:/[\w.+-]+)*/?$")
PLACEHOLDER = re.compile(r"NAME|(?<=[a-z])N(?=[./]|$)")
RUN_OUTPUTS = ("report.md",)  # a Markdown file a run writes (beside predictions.jsonl in --output-dir)


def cited_paths(text: str) -> list[tuple[int, str]]:
    """(line, path) of every inline-code span outside fenced code that is one path and nothing else."""
    body = "\n".join(outside_fences(text))
    found = []
    for match in INLINE_CODE.finditer(body):
        span = match.group(0).strip("`").strip()
        if CITED_PATH.match(span) and "/" in span.strip("/") or span.endswith(".md") and CITED_PATH.match(span):
            found.append((body.count("\n", 0, match.start()) + 1, span))
    return found


def missing_citations(path: Path, root: Path, ignored=lambda relative: False) -> list[str]:
    """`file:line: path (why)` for every file or folder the Markdown file `path` cites in inline code that is in
    neither the repository nor a place `ignored` (relative path -> bool; e.g. git's ignore rules) calls the
    entrant's. Checked: paths whose first part is a top-level entry of `root`, and every `NAME.md`."""
    problems = []
    top = {entry.name for entry in root.iterdir()} - {".git"}
    names = {found.name for found in root.rglob("*.md") if ".git" not in found.parts}
    for line, cited in cited_paths(path.read_text(encoding="utf-8")):
        relative = cited.removeprefix("./").rstrip("/")
        if PLACEHOLDER.search(relative):
            continue
        if crag_data.crag_name(relative) is not None:  # CRAG's own files: a name the setting knows, not a path here
            if crag_data.crag_name(relative).split("/")[0] not in crag_data.FILES:
                problems.append(f"{path.relative_to(root)}:{line}: {cited} (not one of CRAG's files that "
                                f"{crag_data.CRAG_DATA_ENV} holds: {', '.join(crag_data.FILES)})")
            continue
        if relative.startswith("../") and not (root / relative).resolve().is_relative_to(root.resolve()) \
                and not (path.parent / relative).exists():
            problems.append(f"{path.relative_to(root)}:{line}: {cited} (outside the repository: a user's clone "
                            f"has nothing beside it; CRAG's files are `${crag_data.CRAG_DATA_ENV}/<name>`)")
            continue
        first = relative.split("/")[0]
        if relative.endswith(".md") and "/" not in relative:
            if relative in names or relative in RUN_OUTPUTS or (path.parent / relative).exists():
                continue
            problems.append(f"{path.relative_to(root)}:{line}: {cited} (no such Markdown file in the repository)")
        elif first in top or (path.parent / first).exists() and path.parent != root:
            if (root / relative).exists() or (path.parent / relative).exists() or ignored(relative) or ignored(relative + "/"):
                continue
            problems.append(f"{path.relative_to(root)}:{line}: {cited} (no such file or folder in the repository)")
    return problems


def glued_headings(path: Path, root: Path) -> list[str]:
    """`file:line: heading` for every ATX heading of the Markdown file `path` (outside fenced code) with a
    non-blank line directly above or below it."""
    original = path.read_text(encoding="utf-8").split("\n")
    problems = []
    for number, line in enumerate(outside_fences("\n".join(original))):
        if not ATX.match(line):
            continue
        above = original[number - 1] if number > 0 else ""
        below = original[number + 1] if number + 1 < len(original) else ""
        if above.strip() or below.strip():
            problems.append(f"{path.relative_to(root)}:{number + 1}: {line.strip()}")
    return problems


def git_ignored(root: Path):
    """relative path -> whether git ignores it in `root` (a place an entrant fills, or a run's output)."""
    def ignored(relative: str) -> bool:
        return subprocess.run(["git", "check-ignore", "-q", "--no-index", relative], cwd=root).returncode == 0
    return ignored


def documents(root: Path) -> list[Path]:
    return [root / "README.md", *sorted((root / "docs").rglob("*.md"))]


def code_files(root: Path) -> list[Path]:
    """The tracked code and configuration files that may cite the documentation."""
    listed = subprocess.run(["git", "ls-files", "-z", *CODE_PLACES], cwd=root, capture_output=True, text=True,
                            check=True).stdout.split("\0")
    return [root / name for name in listed if name and (name.endswith(CODE_KINDS) or name.startswith(".ci/")
                                                        or Path(name).name in ("Makefile", "Dockerfile"))]


# --- the repository ---

@pytest.mark.parametrize("path", documents(REPO), ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_of_the_documentation_leads_somewhere(path):
    problems = broken_links(path, REPO)
    assert not problems, "broken links:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", documents(REPO), ids=lambda p: str(p.relative_to(REPO)))
def test_every_file_the_documentation_cites_exists(path):
    problems = missing_citations(path, REPO, git_ignored(REPO))
    assert not problems, "cited files that do not exist:\n" + "\n".join(problems)


@pytest.mark.parametrize("path", documents(REPO), ids=lambda p: str(p.relative_to(REPO)))
def test_no_heading_is_glued_to_a_paragraph(path):
    problems = glued_headings(path, REPO)
    assert not problems, "headings without a blank line above and below:\n" + "\n".join(problems)


def test_the_code_cites_headings_that_exist():
    files = code_files(REPO)
    assert REPO / "models" / "config.py" in files and REPO / "Dockerfile" in files  # the scan sees the code
    problems = [problem for path in files for problem in stale_references(path, REPO)]
    assert not problems, f"{len(problems)} stale references to the documentation:\n" + "\n".join(problems)


# --- the checkers themselves, on small files ---

GUIDE = """# Guide

## Quick start (two commands)

Text with `[not a link](nowhere.md)` in code, and a [good link](../README.md#the-b-part-c).

```markdown
# Not a heading
[not a link either](nowhere.md)
```

## Quick start (two commands)

## Ünïcode & `code`: done?

Setext heading
--------------

<a id="custom-anchor"></a>
[self](#quick-start-two-commands-1) [unicode](#ünïcode--code-done) [setext](#setext-heading)
[explicit](#custom-anchor) [folder](.) [image ![alt](../pic.png)](https://example.com) [mail](mailto:a@b.c)
[line](../tool.py#L3-L5)

[ref]: ../README.md
"""


@pytest.fixture
def tiny_repo(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "README.md").write_text("# Title\n\n## The `B` part: c\n\nSee [the guide](docs/guide.md).\n",
                                        encoding="utf-8")
    (tmp_path / "docs" / "guide.md").write_text(GUIDE, encoding="utf-8")
    (tmp_path / "pic.png").write_bytes(b"\x89PNG")
    (tmp_path / "tool.py").write_text('"""Cites README "the b part", docs/guide.md "Quick start".\n'
                                      "And README: 'title' and docs/guide.md: 'ünïcode & code'.\"\"\"\n", encoding="utf-8")
    return tmp_path


def test_the_slugs_follow_github():
    assert slugs(GUIDE) >= {"guide", "quick-start-two-commands", "quick-start-two-commands-1",
                            "ünïcode--code-done", "setext-heading", "custom-anchor"}
    assert "not-a-heading" not in slugs(GUIDE)


def test_valid_links_and_references_are_not_reported(tiny_repo):
    assert [problem for path in documents(tiny_repo) for problem in broken_links(path, tiny_repo)] == []
    assert stale_references(tiny_repo / "tool.py", tiny_repo) == []


def test_a_broken_link_a_broken_anchor_and_a_stale_reference_are_each_reported(tiny_repo):
    guide = tiny_repo / "docs" / "guide.md"
    guide.write_text(GUIDE + "\n[gone](../missing.md) [bad anchor](../README.md#the-b-part)\n"
                             "[fenced](#not-a-heading) ![lost](img/lost.png) [escaping](../../outside.md)\n",
                     encoding="utf-8")
    line = GUIDE.count("\n") + 2
    problems = broken_links(guide, tiny_repo)
    assert problems == [
        f"docs/guide.md:{line}: (../README.md#the-b-part) no heading of README.md has the anchor #the-b-part",
        f"docs/guide.md:{line}: (../missing.md) no such file or folder in the repository",
        f"docs/guide.md:{line + 1}: (#not-a-heading) no heading of docs/guide.md has the anchor #not-a-heading",
        f"docs/guide.md:{line + 1}: (../../outside.md) no such file or folder in the repository",
        f"docs/guide.md:{line + 1}: (img/lost.png) no such file or folder in the repository"]
    code = tiny_repo / "tool.py"
    code.write_text('x = 1\n# see README "Old heading" and docs/gone.md "Guide" and docs/guide.md \'Guide\'\n')
    problems = stale_references(code, tiny_repo)
    assert problems == ["tool.py:2: README \"Old heading\" (no heading of README.md starts with 'Old heading')",
                        "tool.py:2: docs/gone.md \"Guide\" (docs/gone.md does not exist)"]


def test_a_cited_file_that_does_not_exist_is_reported(tiny_repo):
    (tiny_repo / "weights").mkdir()  # a git-ignored place the entrant fills
    guide = tiny_repo / "docs" / "guide.md"
    guide.write_text(GUIDE + "\nCited: `tool.py`, `docs/guide.md`, `guide.md`, `../README.md`, `report.md`,\n"
                             "`docs/NAME.md`, `data/aicrowd.taskN.json`, `weights/model.bin`, `not/a/repo/path.py`,\n"
                             "`style-anchors.md`, `docs/gone.md` and `tool.py --flag`.\n"
                             "```\n`docs/fenced.md`\n```\n", encoding="utf-8")
    line = GUIDE.count("\n") + 2
    assert missing_citations(guide, tiny_repo, ignored=lambda relative: relative.startswith("weights/")) == [
        f"docs/guide.md:{line + 2}: style-anchors.md (no such Markdown file in the repository)",
        f"docs/guide.md:{line + 2}: docs/gone.md (no such file or folder in the repository)"]
    assert missing_citations(guide, tiny_repo)[0] == \
        f"docs/guide.md:{line + 1}: weights/model.bin (no such file or folder in the repository)"
    assert missing_citations(tiny_repo / "README.md", tiny_repo) == []


def test_a_file_beside_the_repository_is_reported_and_crags_files_are_named_by_the_setting(tiny_repo):
    guide = tiny_repo / "docs" / "guide.md"
    guide.write_text(GUIDE + "\nCited: `../beside/crag/dev_data.jsonl.bz2`, `$CRAG_DATA/dev_data.jsonl.bz2`,\n"
                             "`$CRAG_DATA/tokenizer`, `$CRAG_DATA/my_notes.txt` and `../README.md`.\n", encoding="utf-8")
    line = GUIDE.count("\n") + 2
    problems = missing_citations(guide, tiny_repo)
    assert len(problems) == 2, problems
    assert problems[0].startswith(f"docs/guide.md:{line}: ../beside/crag/dev_data.jsonl.bz2 (outside the repository")
    assert problems[1].startswith(f"docs/guide.md:{line + 1}: $CRAG_DATA/my_notes.txt (not one of CRAG's files")


def test_a_heading_glued_to_a_paragraph_is_reported(tiny_repo):
    assert [problem for path in documents(tiny_repo) for problem in glued_headings(path, tiny_repo)] == []
    guide = tiny_repo / "docs" / "guide.md"
    guide.write_text("# Guide\nA paragraph glued below.\n\nA paragraph glued above.\n## Part\n\n## Fine\n\n"
                     "```markdown\n# in a fence\nglued, but code\n```\n\n### Last\n", encoding="utf-8")
    assert glued_headings(guide, tiny_repo) == ["docs/guide.md:1: # Guide", "docs/guide.md:5: ## Part"]


def test_every_results_section_names_the_commit_its_figures_come_from():
    """Each `##` section of docs/results.md names a commit (`commit abc1234`), so a figure can be traced to the code
    it was measured on."""
    lines = (REPO / "docs" / "results.md").read_text(encoding="utf-8").split("\n")
    starts = [number for number, line in enumerate(outside_fences("\n".join(lines))) if line.startswith("## ")]
    sections = ["\n".join(lines[start:end]) for start, end in zip(starts, starts[1:] + [len(lines)])]
    assert sections
    unnamed = [section.split("\n")[0] for section in sections  # a commit in a command's output block counts too
               if not re.search(r"\bcommit [0-9a-f]{7,40}\b", section)]
    assert not unnamed, f"docs/results.md sections without a commit: {unnamed}"
