"""The project's other files: where Python would import a module from, each read once per version.

A module is found the way Python would import it where the file runs: relative imports
from the file's package; absolute ones from the file's import root (the folder above its
outermost package, which pytest and ``python file.py`` put on ``sys.path``), the
project's folder (that of the nearest ``pyproject.toml``), its ``src/``, or the file's own
folder. What a reader says of a file is kept with the file's stamp (modification time and
size) and read again when it changes (``by_stamp``); within ``recording_reads`` every file
consulted, and every place a module was looked for and not found, is noted with its stamp,
which is what a result cache entry depends on besides the file itself.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import TypeVar

from .source import SparseModule
from .text import Lines


def project_root(path: Path, markers: tuple[str, ...] = ("pyproject.toml",)) -> Path | None:
    """The nearest folder above ``path`` that holds one of ``markers`` (None: there is none)."""
    for folder in path.parents:
        if any((folder / marker).is_file() for marker in markers):
            return folder
    return None


def import_root(path: Path) -> tuple[Path, str]:
    """The folder a module file is imported from, and its dotted name there."""
    parts = [path.stem]
    folder = path.parent
    while (folder / "__init__.py").is_file() and folder.parent != folder:
        parts.append(folder.name)
        folder = folder.parent
    return folder, ".".join(reversed(parts))


def jax_module_name(path: str | None) -> str | None:
    """The dotted name of a module of a ``jax`` package (``jax.experimental.sparse.linalg``),
    read from the ``__init__.py`` files above it; None for any other file."""
    if not path or not path.endswith(".py"):
        return None
    _, dotted = import_root(Path(path))
    dotted = dotted.removesuffix(".__init__")
    return dotted if dotted.startswith("jax.") else None


def import_roots(path: Path) -> list[Path]:
    """Where absolute imports of the file at ``path`` find the project's modules, nearest
    first; last, the file's own folder, which Python puts first on ``sys.path`` when the
    file is run as a script (``python bvar/estimate.py`` importing ``run_single_draw``)."""
    roots = [import_root(path)[0]]
    project = project_root(path)
    if project is not None:
        roots += [r for r in (project, project / "src") if r not in roots]
    if path.parent not in roots:
        roots.append(path.parent)
    return roots


#: how long where a module was found (or that it was found nowhere) is reused: an editor
#: asks again at every keystroke, a check of many files for each file
FOUND_SECONDS = 2.0
#: (file, module, level) -> when it was looked for, the file found, the places found empty
_FOUND: dict[tuple[Path, str, int], tuple[float, Path | None, tuple[Path, ...]]] = {}


def module_file(path: Path, module: str, level: int) -> Path | None:
    """The project file ``from <level dots><module> import ...`` in the file at ``path`` reads
    (looked for again after ``FOUND_SECONDS``)."""
    key = (path, module, level)
    now = time.monotonic()
    held = _FOUND.get(key)
    if held is None or now - held[0] >= FOUND_SECONDS:
        held = _FOUND[key] = (now, *_look_for(path, module, level))
    record = _RECORD.get()
    if record is not None:
        for absent in held[2]:
            record.setdefault(absent, None)  # a file made here later is read instead
    return held[1]


def _look_for(path: Path, module: str, level: int) -> tuple[Path | None, tuple[Path, ...]]:
    """The file a module is read from, and the places before it where it was not."""
    if level:
        base = path.parent
        for _ in range(level - 1):
            base = base.parent
        bases = [base]
    else:
        bases = import_roots(path)
    rel = Path(*module.split(".")) if module else Path()
    absent: list[Path] = []
    for base in bases:
        for candidate in (base / rel.with_suffix(".py") if module else None, base / rel / "__init__.py"):
            if candidate is None:
                continue
            if candidate.is_file():
                return candidate, tuple(absent)
            absent.append(candidate)
    return None, tuple(absent)


#: a file's modification time and size: what it said is read again when either changes
Stamp = tuple[int, int]
#: each project file read while recording (``recording_reads``), with its stamp (None: not there)
_RECORD: ContextVar[dict[Path, Stamp | None] | None] = ContextVar("jaxtarget_reads", default=None)
_K = TypeVar("_K")
_V = TypeVar("_V")

#: files larger than this are not read for predicates
MAX_BYTES = 2 * 1024 * 1024


def by_stamp(
    cache: dict[_K, tuple[Stamp, _V]], key: _K, path: Path, read: Callable[[int], _V], missing: _V
) -> _V:
    """What ``read`` said of the file at ``path`` when it was last read as it is now (its
    modification time and size), read again if it changed (``read`` is given the size);
    ``missing`` for a file that is not there."""
    stamp = stamp_of(path)
    record = _RECORD.get()
    if record is not None:
        record[path] = stamp
    if stamp is None:
        return missing
    hit = cache.get(key)
    if hit is not None and hit[0] == stamp:
        return hit[1]
    value = read(stamp[1])
    cache[key] = (stamp, value)
    return value


@contextmanager
def recording_reads() -> Iterator[dict[Path, Stamp | None]]:
    """Within the block, every project file the readers here consult is noted in the
    yielded dict with the stamp it had (None: it was not there): what a file's result
    depends on besides the file itself."""
    reads: dict[Path, Stamp | None] = {}
    token = _RECORD.set(reads)
    try:
        yield reads
    finally:
        _RECORD.reset(token)


def stamp_of(path: Path) -> Stamp | None:
    """The file's stamp now (None: it is not there)."""
    try:
        st = path.stat()
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def read_top_level(
    path: Path, size: int, spelled: str | tuple[str, ...], keep: Callable[[str | None, str], bool]
) -> SparseModule | None:
    """The file at ``path`` (of ``size`` bytes) with only the top-level statements ``keep``
    picks parsed: it is given the name a def or class binds (None for another statement)
    and the statement's first line. None when the file is larger than ``MAX_BYTES``,
    cannot be read or decoded, never spells ``spelled`` (or any of them: most files do not,
    no decoding, no parse), or a picked statement does not parse.

    A module as large as ``jax._src.numpy.lax_numpy`` costs a scan of its text and a parse
    of a few statements, not a syntax tree of the whole module.
    """
    try:
        data = path.read_bytes() if size <= MAX_BYTES else b""
        words = (spelled,) if isinstance(spelled, str) else spelled
        if not data or not any(w.encode() in data for w in words):
            return None
        view = SparseModule(Lines(data.decode("utf-8")))
    except (OSError, UnicodeDecodeError):
        return None
    view.ensure(line for line in view.starts if keep(view.defined_name(line), view.chunk_first_line(line)))
    return None if view.failed else view
