"""Finding and reading the Python files to check."""

from __future__ import annotations

import fnmatch
import io
import os
import shutil
import tempfile
import tokenize
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

#: Folders never descended into (ruff's defaults: version control, tool caches, environments,
#: build output). Other dot-folders are checked: ``.github/`` may hold real code.
DEFAULT_EXCLUDES: frozenset[str] = frozenset(
    {
        ".bzr",
        ".direnv",
        ".eggs",
        ".git",
        ".git-rewrite",
        ".hg",
        ".ipynb_checkpoints",
        ".jaxtarget_cache",
        ".mypy_cache",
        ".nox",
        ".pants.d",
        ".pyenv",
        ".pytest_cache",
        ".pytype",
        ".ruff_cache",
        ".svn",
        ".tox",
        ".venv",
        ".vscode",
        "__pypackages__",
        "_build",
        "buck-out",
        "build",
        "dist",
        "node_modules",
        "site-packages",
        "venv",
        "__pycache__",
    }
)

MAX_BYTES = 20 * 1024 * 1024


class SourceError(Exception):
    """A file that cannot be analysed; the message says why, in one line."""


@dataclass(frozen=True)
class SourceFile:
    """A file's text as Python reads it, with the encoding to write it back in.

    The text keeps the file's line endings; a byte-order mark is not part of it
    (``encoding`` is then ``utf-8-sig``, which writes it back).
    """

    text: str
    encoding: str

    def encode(self, text: str) -> bytes:
        """``text`` in this file's encoding; ``UnicodeEncodeError`` if it cannot hold it."""
        return text.encode(self.encoding)


def read_source(path: Path) -> str:
    """Read a Python file the way Python would (PEP 263 coding cookie, UTF-8 default)."""
    return read_source_file(path).text


def read_source_file(path: Path) -> SourceFile:
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise SourceError(f"file is too large to check ({size} bytes)")
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read file: {exc.strerror or exc}") from exc
    return decode_source_file(data)


def decode_source(data: bytes) -> str:
    return decode_source_file(data).text


def decode_source_file(data: bytes) -> SourceFile:
    if b"\0" in data:
        raise SourceError("binary file (contains NUL bytes), not Python source")
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        try:
            data.decode("utf-8")
        except UnicodeDecodeError as bad:
            raise SourceError(
                f"file is not valid UTF-8 (byte {bad.start}) and declares no other encoding"
            ) from exc
        raise SourceError(f"cannot decode file: {exc.msg}") from exc
    try:
        text = data.decode(encoding)
    except (UnicodeDecodeError, LookupError) as exc:
        where = f" at byte {exc.start}" if isinstance(exc, UnicodeDecodeError) else ""
        name = "UTF-8" if encoding.replace("-", "").lower() in ("utf8", "utf8sig") else encoding
        raise SourceError(f"file is not valid {name}{where}") from exc
    if text.startswith("\ufeff"):
        return SourceFile(text[1:], "utf-8-sig")
    return SourceFile(text, encoding)


def write_source(path: Path, data: bytes) -> None:
    """Replace the file's content at once, keeping its mode; through a symbolic link, the
    file it points to is replaced and the link kept."""
    write_atomically(path.resolve(), data, keep_mode=True)


def write_atomically(path: Path, data: bytes, keep_mode: bool = False) -> None:
    """Write ``path`` whole: a temporary file beside it, renamed over it (``os.replace``), so a
    reader sees the old content or the new, never a part."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        if keep_mode:
            shutil.copymode(path, tmp)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _excluded(rel: str, name: str, patterns: Sequence[str], is_dir: bool) -> bool:
    for pat in patterns:
        p = pat.rstrip("/")
        if pat.endswith("/") and not is_dir:
            continue
        if fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) or rel.startswith(p + "/"):
            return True
    return False


PYTHON_SUFFIXES = (".py", ".pyi")
#: Jupyter notebooks, checked as the module of their code cells (``notebook_check.py``)
NOTEBOOK_SUFFIXES = (".ipynb",)


def is_python_file(path: Path) -> bool:
    """A file to check: ``.py``/``.pyi``, a notebook, or a script whose first line runs python."""
    if path.name.endswith(PYTHON_SUFFIXES + NOTEBOOK_SUFFIXES):
        return True
    if path.suffix:
        return False
    try:
        with path.open("rb") as fh:
            first = fh.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def discover(paths: Sequence[Path], exclude: Sequence[str] = (), root: Path | None = None) -> Iterator[Path]:
    """Python files under ``paths``; explicitly named files are always included."""
    seen: set[Path] = set()
    for start in paths:
        if start.is_file():
            if start not in seen:
                seen.add(start)
                yield start
            continue
        base = root or start
        for dirpath, dirnames, filenames in os.walk(start):
            here = Path(dirpath)
            keep = []
            for d in sorted(dirnames):
                rel = _rel(here / d, base)
                if d in DEFAULT_EXCLUDES or _excluded(rel, d, exclude, True):
                    continue
                if (here / d / "pyvenv.cfg").exists():
                    continue
                keep.append(d)
            dirnames[:] = keep
            for f in sorted(filenames):
                if not f.endswith(PYTHON_SUFFIXES + NOTEBOOK_SUFFIXES):
                    continue
                path = here / f
                if _excluded(_rel(path, base), f, exclude, False) or path in seen:
                    continue
                seen.add(path)
                yield path


def force_excluded(path: Path, exclude: Sequence[str], root: Path | None) -> bool:
    """Whether walking a folder would have skipped this named file (ruff's ``--force-exclude``).

    ``root`` is the folder ``exclude`` is relative to (the pyproject's); without one,
    the current folder.
    """
    base = (root or Path.cwd()).resolve()
    full = path.resolve()
    try:
        parts = full.relative_to(base).parts
    except ValueError:
        return False
    for i, name in enumerate(parts[:-1]):
        folder = base.joinpath(*parts[: i + 1])
        if name in DEFAULT_EXCLUDES or (folder / "pyvenv.cfg").exists():
            return True
        if _excluded("/".join(parts[: i + 1]), name, exclude, True):
            return True
    return bool(parts) and _excluded("/".join(parts), parts[-1], exclude, False)


def _rel(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()
