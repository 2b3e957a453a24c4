"""The platform a test suite's ``conftest.py`` pins every test process to.

pytest imports each ``conftest.py`` from the root folder down to a test file's
folder before the test module; one that runs ``jax.config.update("jax_platform_name",
"cpu")`` at import time makes every test below it run on that platform whatever
the machine has. Read from disk, cached per file by modification time.
"""

from __future__ import annotations

import ast
import os
from pathlib import Path

from .uses import module_pin

_ROOT_MARKERS = ("pyproject.toml", "setup.cfg", "setup.py", "tox.ini", "pytest.ini", ".git")
_MAX_DEPTH = 12
_cache: dict[str, tuple[float, frozenset[str] | None]] = {}


def _pin_of(conftest: Path) -> frozenset[str] | None:
    key = str(conftest)
    try:
        mtime = conftest.stat().st_mtime
    except OSError:
        return None
    hit = _cache.get(key)
    if hit is not None and hit[0] == mtime:
        return hit[1]
    try:
        pin = module_pin(ast.parse(conftest.read_bytes()))
    except (OSError, SyntaxError, ValueError, RecursionError):
        pin = None
    _cache[key] = (mtime, pin)
    return pin


def conftest_pin(path: str | None) -> frozenset[str] | None:
    """The pin of the nearest conftest.py that pins, from the file's folder up to the project root."""
    if not path:
        return None
    folder = Path(os.path.abspath(path)).parent
    for _ in range(_MAX_DEPTH):
        candidate = folder / "conftest.py"
        if candidate.is_file():
            pin = _pin_of(candidate)
            if pin is not None:
                return pin
        if any((folder / m).exists() for m in _ROOT_MARKERS) or folder.parent == folder:
            return None
        folder = folder.parent
    return None
