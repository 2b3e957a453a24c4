"""A GPU-test helper another module of the project already defines, importable from a file.

A fix that needs ``has_gpu_backend()`` imports the project's own (``from tests.utils
import has_gpu_backend``) instead of defining a second one, when some module of the
project defines it at module level as a test that is true exactly on a GPU backend
(read by what it computes, ``semantics/predicates.py``) and that module can be
imported where the file runs (from one of its import roots).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..files import DEFAULT_EXCLUDES
from ..platforms import GPU_PLATFORMS
from ..semantics.predicates import file_predicate
from ..semantics.project_files import import_root, import_roots, project_root


def _importable(root: Path) -> list[tuple[Path, str]]:
    """The modules an import finds under ``root``: its own files and its packages' (dotted names)."""
    found: list[tuple[Path, str]] = []
    stack: list[tuple[Path, str]] = [(root, "")]
    while stack:
        folder, prefix = stack.pop()
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            name = entry.name
            if entry.is_file() and name == "__init__.py":
                if prefix:  # a package's own module
                    found.append((Path(entry.path), prefix[:-1]))
            elif entry.is_file() and name.endswith(".py") and name[:-3].isidentifier():
                found.append((Path(entry.path), prefix + name[:-3]))
            elif (
                entry.is_dir()
                and name.isidentifier()
                and name not in DEFAULT_EXCLUDES
                and os.path.isfile(os.path.join(entry.path, "__init__.py"))
            ):
                stack.append((Path(entry.path), f"{prefix}{name}."))
    return found


def importable_helper(path: str | None, name: str) -> str | None:
    """The dotted module, importable from the file at ``path``, that defines ``name`` as a GPU test.

    Modules under the file's own import root come first, then the project's folder and
    its ``src/``; among them the shallowest.
    """
    if not path:
        return None
    here = Path(path).resolve()
    if project_root(here) is None:
        return None
    own_name = import_root(here)[1]
    best: tuple[tuple[int, int, str], str] | None = None
    for rank, where in enumerate(import_roots(here)):
        for module, dotted in _importable(where):
            if module == here or dotted == own_name:
                continue
            sets = file_predicate(module, name)
            if sets is None or sets[0] != GPU_PLATFORMS:
                continue
            key = (rank, dotted.count("."), dotted)
            if best is None or key < best[0]:
                best = key, dotted
    return best[1] if best else None
