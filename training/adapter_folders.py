"""Where `make adapters` puts each adapter, and the git-LFS commands that commit them (printed, never run)."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Mapping

from training.adapter_settings import ADAPTERS, MakeAdaptersError

LFS_PATTERN = "*.safetensors"


def adapter_dirs(config, adapters_dir: str | Path | None = None) -> dict[str, Path]:
    """Where each adapter goes: `adapters_dir/<name>`, or the profile's `llm.adapters` entry (models-dir-relative)."""
    dirs = {}
    for name in ADAPTERS:
        if adapters_dir is not None:
            dirs[name] = Path(adapters_dir) / name
            continue
        spec = config.llm.adapters.get(name)
        if not spec:
            raise MakeAdaptersError(f"profile {config.name!r} names no llm.adapters.{name}; "
                                    f"give --adapters-dir DIR or --set llm.adapters.{name}=PATH")
        dirs[name] = Path(spec) if Path(spec).is_absolute() else Path(config.models_dir) / spec
    return dirs


def ignoring_rule(relative: str, gitignore: str) -> str | None:
    """The .gitignore line that ignores `relative` (a repo-relative folder) or a folder above it, else None.
    Plain folder and file rules only (no globs, no negation): what this repository's .gitignore uses."""
    for line in gitignore.splitlines():
        rule = line.strip()
        if not rule or rule.startswith(("#", "!")) or any(c in rule for c in "*?["):
            continue
        path = rule.strip("/")
        anchored = rule.startswith("/") or "/" in path
        candidates = [relative] if anchored else relative.split("/")
        if anchored and (relative == path or relative.startswith(path + "/")):
            return rule
        if not anchored and path in candidates:
            return rule
    return None


def lfs_lines(dirs: Mapping[str, Path], repo_root: Path, gitignore: str = "") -> list[str]:
    """The commands that commit the adapter folders with git-LFS (weights as LFS objects), as lines to print."""
    root = Path(repo_root).resolve()
    inside, outside = {}, {}
    for name, folder in dirs.items():
        folder = Path(folder).resolve()
        (inside if folder.is_relative_to(root) else outside)[name] = folder
    lines = [f"# {folder} is outside the repository: copy it into the models dir where the profile's "
             f"llm.adapters.{name} points (models/adapters/{name}) before committing"
             for name, folder in outside.items()]
    if not inside:
        return lines
    relative = {name: folder.relative_to(root).as_posix() for name, folder in inside.items()}
    rules = sorted({rule for path in relative.values() if (rule := ignoring_rule(path, gitignore))})
    lines.append("git lfs install")
    for rule in rules:
        lines.append(f"sed -i '/^{_sed_escape(rule)}$/d' .gitignore   # un-ignore: .gitignore has {rule}")
    for parent in sorted({str(Path(p).parent.as_posix()) for p in relative.values()}):
        lines.append(f'git lfs track "{parent}/**/{LFS_PATTERN}"')
    lines.append("git add .gitattributes" + (" .gitignore" if rules else "") + " " + " ".join(relative.values()))
    lines.append(f'git commit -m "adapters: {", ".join(relative)} (make adapters)"')
    return lines


def _sed_escape(text: str) -> str:
    return re.sub(r"([\\/.*\[\]^$])", r"\\\1", text)
