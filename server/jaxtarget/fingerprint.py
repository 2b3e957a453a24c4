"""A digest of what jaxtarget's answers depend on in itself: its version, its modules, Python, jedi.

The result cache and the resolved-name cache put it in their keys, so a new release, or
an edit to a module of a development checkout, starts them afresh.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import sys
from pathlib import Path

from . import __version__


@functools.cache
def own_fingerprint() -> str:
    """jaxtarget's version and its modules' sizes and times, Python's version, jedi's install."""
    root = Path(__file__).parent
    parts = [__version__, sys.version, _jedi_install()]
    for path in sorted(root.rglob("*.py")):
        try:
            st = path.stat()
        except OSError:
            continue
        parts.append(f"{path.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def _jedi_install() -> str:
    """Where jedi is and its ``__init__.py``'s size and time, found without importing jedi
    (a new jedi release rewrites that file, which holds its version)."""
    spec = importlib.util.find_spec("jedi")
    origin = spec.origin if spec is not None else None
    if origin is None:
        return "no jedi"
    try:
        st = os.stat(origin)
    except OSError:
        return origin
    return f"{origin}:{st.st_size}:{st.st_mtime_ns}"
