"""No CRAG dev question or interaction id in the submission's git history (submission/preflight.py's history check;
the module docstring there says how)."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

from models import crag_data
from submission.check_result import Result

REPO_ROOT = Path(__file__).resolve().parents[1]
SUBMISSION_BRANCH_FIX = ("tag the submission on a branch without this history (README 'Submitting'): git checkout "
                         "--orphan submission-tree && git commit -m 'submission tree', then tag that commit and push "
                         "only the tag")
_WORDS = re.compile(rb"[a-z0-9]+")


def _normalised(data: bytes) -> list[bytes]:
    """Lower-cased words, every run of non-alphanumerics a separator (tests/test_no_crag_data.py's `_norm`)."""
    return _WORDS.findall(data.lower())


def dev_needles(path: Path) -> tuple[dict[bytes, list[bytes]], int]:
    """The questions and interaction ids of a CRAG file, normalised (" w1 w2 ... "), keyed by their longest word;
    and how many examples were read. An id is left out when the file has none (the loader's "file:line")."""
    from evaluation.data import load_examples

    anchors: dict[bytes, list[bytes]] = {}
    count = 0
    for example in load_examples(path):
        count += 1
        texts = [example["query"]] + ([example["interaction_id"]] if ":" not in example["interaction_id"] else [])
        for text in texts:
            words = _normalised(text.encode("utf-8"))
            if words:
                needle = b" " + b" ".join(words) + b" "
                anchors.setdefault(max(words, key=len), []).append(needle)
    return anchors, count


def _holds(data: bytes, anchors: dict[bytes, list[bytes]]) -> bool:
    words = _normalised(data)
    present = anchors.keys() & set(words)
    if not present:
        return False
    text = b" " + b" ".join(words) + b" "
    return any(needle in text for anchor in present for needle in anchors[anchor])


def history_hits(root: Path, anchors: dict[bytes, list[bytes]], rev: str = "HEAD") -> tuple[dict[str, str], int]:
    """The objects of `rev`'s history (file versions and commits, each read once) that hold a needle: sha -> the
    path of the file version ("" for a commit); and how many objects were read."""
    listing = subprocess.Popen(["git", "rev-list", "--objects", rev], cwd=root, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    reader = subprocess.Popen(["git", "cat-file", "--batch=%(objectname) %(objecttype) %(objectsize) %(rest)"],
                              cwd=root, stdin=listing.stdout, stdout=subprocess.PIPE)
    listing.stdout.close()
    hits, read = {}, 0
    with reader:
        while header := reader.stdout.readline():
            parts = header.rstrip(b"\n").split(b" ", 3)
            if len(parts) < 3:  # "<sha> missing"
                continue
            sha, kind, size = parts[0].decode(), parts[1], int(parts[2])
            data = reader.stdout.read(size)
            reader.stdout.read(1)
            if kind not in (b"blob", b"commit") or b"\0" in data[:8000]:  # trees; binary files
                continue
            read += 1
            if _holds(data, anchors):
                hits[sha] = parts[3].decode("utf-8", "replace") if kind == b"blob" and len(parts) > 3 else ""
    if listing.wait() != 0:
        raise RuntimeError(f"git rev-list --objects {rev}: {listing.stderr.read().decode(errors='replace').strip()}")
    return hits, read


def introduced(root: Path, hits: dict[str, str], rev: str = "HEAD") -> list[tuple[str, str]]:
    """(commit, file) of each commit of `rev`'s history, oldest first, that adds a hit file version (or whose
    message is a hit: file "its commit message")."""
    log = subprocess.run(["git", "log", "--reverse", "--format=%H", "--raw", "--no-abbrev", "--no-renames", rev],
                         cwd=root, capture_output=True, text=True, errors="replace", check=True).stdout
    found, commit = [], ""
    for line in log.splitlines():
        if re.fullmatch(r"[0-9a-f]{40,64}", line):
            commit = line
            if commit in hits:
                found.append((commit, "its commit message"))
        elif line.startswith(":") and "\t" in line:
            meta, path = line.split("\t", 1)
            fields = meta.split()
            if len(fields) >= 4 and fields[3] in hits:
                found.append((commit, path))
    return found


def check_history(root: Path = REPO_ROOT, dev_data: str | Path | None = None, rev: str = "HEAD") -> Result:
    """No question or interaction id of CRAG's dev file in `rev`'s history (module docstring)."""
    dev = Path(dev_data) if dev_data else crag_data.crag_path(crag_data.DEV_FILE)
    if not dev.is_file():
        return Result("history", True, f"skipped: {dev} (CRAG's dev file, not shipped) is not here, so {rev}'s "
                      "history was not checked for its questions",
                      f"{crag_data.missing_message(crag_data.DEV_FILE, dev)}; or pass --dev-data FILE", skipped=True)
    anchors, questions = dev_needles(dev)
    hits, read = history_hits(root, anchors, rev)
    commits = subprocess.run(["git", "rev-list", "--count", rev], cwd=root, capture_output=True, text=True,
                             check=True).stdout.strip()
    if not hits:
        return Result("history", True, f"none of the {questions} questions of {dev.name} (nor an interaction id) in "
                      f"the {commits} commits of {rev}'s history ({read} file versions and messages read)")
    where = introduced(root, hits, rev)
    first = (f"the first: commit {where[0][0][:12]}, {where[0][1]}" if where else
             f"e.g. {next(iter(hits.values())) or 'a commit message'} (brought in by a merge)")
    files = sum(1 for path in hits.values() if path)
    return Result("history", False, f"{files} file versions and {len(hits) - files} commit messages of {rev}'s "
                  f"history ({len({c for c, _ in where})} commits) hold a question or interaction id of {dev.name}; "
                  f"{first}", SUBMISSION_BRANCH_FIX)
