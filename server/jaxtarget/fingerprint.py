"""A digest of what jaxtarget's answers depend on in itself: its version, its modules, Python, jedi.

The result cache and the resolved-name cache put it in their keys, so a new release, or
an edit to a module of a development checkout, starts them afresh.
"""

from __future__ import annotations

import functools
import hashlib
import sys
from pathlib import Path

from . import __version__


@functools.cache
def own_fingerprint() -> str:
    """jaxtarget's version and its modules' sizes and times, Python's and jedi's versions."""
    import jedi

    root = Path(__file__).parent
    parts = [__version__, sys.version, str(jedi.__version__)]
    for path in sorted(root.rglob("*.py")):
        try:
            st = path.stat()
        except OSError:
            continue
        parts.append(f"{path.relative_to(root)}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()
