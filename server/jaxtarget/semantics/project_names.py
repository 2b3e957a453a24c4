"""Whether another file of the project spells a name.

A private function that its own module never uses may still be used by another module
of the project (``from .attention import _flash_fwd``, then ``_flash_fwd(q)``), or named in
a string there (``getattr(kernels, "_flash_fwd")``). Only where no other Python file of the
project spells its name, as a whole word, other than on a one-line ``from ... import`` of
it without an alias (which binds it and runs nothing), is it known to run nowhere. The
project is the folder of the nearest ``pyproject.toml``, ``setup.py`` or ``setup.cfg``
above the file; its Python files are those ``check`` would walk (no virtual environments,
VCS or tool-cache folders).
Without such a folder, or with more than ``MAX_FILES`` files to read, nothing is known.

The walk of a project is kept for ``WALK_SECONDS`` and an answer for as long as no file
of the project changed (the files' count, sizes and modification times).
"""

from __future__ import annotations

import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ..files import discover
from .project_files import project_root

#: what marks a project's root folder
ROOT_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg")
#: a project with more Python files than this is not searched
MAX_FILES = 5000
#: a file larger than this is not read (generated code, data)
MAX_BYTES = 2 * 1024 * 1024
#: how long a project's walk is reused (a check of many files walks it once)
WALK_SECONDS = 2.0


@dataclass(frozen=True)
class _Walk:
    at: float
    #: (file, size, modification time) of each Python file; None: too many to read
    files: tuple[tuple[Path, int, int], ...] | None


_WALKS: dict[Path, _Walk] = {}
_ANSWERS: dict[tuple[Path, Path, str], tuple[tuple[tuple[Path, int, int], ...], bool]] = {}
_LOCK = threading.Lock()


def _walk(root: Path) -> tuple[tuple[Path, int, int], ...] | None:
    now = time.monotonic()
    with _LOCK:
        held = _WALKS.get(root)
        if held is not None and now - held.at < WALK_SECONDS:
            return held.files
    found: list[tuple[Path, int, int]] = []
    files: tuple[tuple[Path, int, int], ...] | None = None
    for path in discover([root]):
        if len(found) >= MAX_FILES:
            break
        try:
            stat = path.stat()
        except OSError:
            continue
        found.append((path, stat.st_size, stat.st_mtime_ns))
    else:
        files = tuple(found)
    with _LOCK:
        _WALKS[root] = _Walk(now, files)
    return files


#: a one-line ``from module import a, b`` (no alias, no brackets): it binds, it runs nothing
_PLAIN_IMPORT = re.compile(
    rb"[ \t]*from[ \t]+[\w.]+[ \t]+import[ \t]+\w+(?:[ \t]*,[ \t]*\w+)*[ \t]*,?[ \t]*(?:#.*)?"
)


def spelled_elsewhere(path: str | None, name: str) -> bool | None:
    """Whether a Python file of the project other than ``path`` spells ``name`` as a word
    other than in a plain import of it (None: unknown, for a file outside any project or a
    project too large to read). A file that imports the name and never spells it again
    (``from pkg.flash import _reference_fwd`` left over) does not use it; an alias
    (``import ... as``), a string or any other line does."""
    if path is None:
        return None
    here = Path(path).resolve()
    root = project_root(here, ROOT_MARKERS)
    if root is None:
        return None
    files = _walk(root)
    if files is None:
        return None
    key = (root, here, name)
    with _LOCK:
        held = _ANSWERS.get(key)
    if held is not None and held[0] == files:
        return held[1]
    word = re.compile(rb"(?<![\w])" + re.escape(name.encode()) + rb"(?![\w])")
    spelled = False
    for file, size, _ in files:
        if size > MAX_BYTES or file == here:
            continue
        try:
            data = file.read_bytes()
        except OSError:
            return None  # a file that cannot be read may name it
        if any(not _plain_import_line(data, m.start()) for m in word.finditer(data)):
            spelled = True
            break
    with _LOCK:
        _ANSWERS[key] = (files, spelled)
    return spelled


def _plain_import_line(data: bytes, at: int) -> bool:
    """Whether the line holding offset ``at`` is a one-line ``from ... import`` without an alias."""
    start = data.rfind(b"\n", 0, at) + 1
    end = data.find(b"\n", at)
    line = data[start : end if end != -1 else len(data)].rstrip(b"\r")
    return _PLAIN_IMPORT.fullmatch(line) is not None
