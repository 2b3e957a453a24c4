"""Per-file settings: `[tool.jaxtarget.per-file-targets]` and `[tool.jaxtarget.per-file-ignores]`.

Both are tables of glob -> value, relative to the folder of the pyproject.toml that holds
them (the nearest one with a `[tool.jaxtarget]` table, for the CLI and the server alike).
When a file's project settings are loaded, each table keeps the entries whose glob matches
that file (``for_file``); resolving the layers then lets the first matching targets entry
replace the targets and adds every matching ignore entry's codes (``apply``).

Globs: ``*`` and ``?`` stay within one path segment, ``**`` spans any number of them, a
glob without ``/`` matches the file name in any folder, and a glob that matches a folder
covers the files under it (``"gpu"`` and ``"gpu/**"`` both cover ``gpu/a/b.py``).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from pathlib import Path, PurePosixPath
from typing import Any

#: The settings that are per-file tables: name -> the setting each entry overrides or extends.
TARGETS = "per_file_targets"
IGNORES = "per_file_ignores"

Table = tuple[tuple[str, tuple[str, ...]], ...]


@functools.lru_cache(maxsize=256)
def _regex(glob: str) -> re.Pattern[str]:
    out = []
    i = 0
    while i < len(glob):
        c = glob[i]
        if glob.startswith("**/", i):
            out.append("(?:.*/)?")
            i += 3
            continue
        if glob.startswith("**", i):
            out.append(".*")
            i += 2
            continue
        if c == "*":
            out.append("[^/]*")
        elif c == "?":
            out.append("[^/]")
        elif c == "[":
            end = glob.find("]", i + 1)
            if end == -1:
                out.append(re.escape(c))
            else:
                body = glob[i + 1 : end]
                negate = body.startswith("!")
                body = body[1:] if negate else body
                out.append(f"[{'^' if negate else ''}{body.replace(chr(92), chr(92) * 2)}]")
                i = end + 1
                continue
        else:
            out.append(re.escape(c))
        i += 1
    return re.compile("".join(out))


def matches(glob: str, rel: str) -> bool:
    """Whether ``glob`` covers the file at ``rel`` (a POSIX path relative to the pyproject's folder)."""
    glob = glob.strip().removeprefix("./").rstrip("/")
    if not glob:
        return False
    path = PurePosixPath(rel)
    candidates = [path.as_posix(), *(p.as_posix() for p in path.parents if p.as_posix() != ".")]
    if "/" not in glob:
        candidates += [path.name, *(part for part in path.parts[:-1])]
    regex = _regex(glob)
    return any(regex.fullmatch(c) for c in candidates)


def for_file(values: Mapping[str, Any], start: Path, root: Path) -> dict[str, Any]:
    """``values`` with each per-file table cut to the entries that cover the file ``start``.

    Globs are relative to ``root``, the pyproject's folder; a folder, or a file outside
    ``root``, is covered by no entry.
    """
    file = start.resolve()
    rel = file.relative_to(root).as_posix() if not file.is_dir() and root in file.parents else None
    out = dict(values)
    for name in (TARGETS, IGNORES):
        table: Table | None = out.get(name)
        if table:
            out[name] = tuple(entry for entry in table if rel is not None and matches(entry[0], rel))
    return out


def apply(values: dict[str, Any]) -> None:
    """Fold the matching entries in: the first targets entry wins, every ignore entry adds its codes."""
    targets: Table = values.get(TARGETS) or ()
    if targets:
        values["target_backends"] = targets[0][1]
    ignores: Table = values.get(IGNORES) or ()
    if ignores:
        codes = [*values.get("ignore", ()), *(code for _, more in ignores for code in more)]
        values["ignore"] = tuple(dict.fromkeys(codes))
