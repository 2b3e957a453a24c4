"""Finding and reading the Python files to check."""

from __future__ import annotations

import fnmatch
import io
import os
import tokenize
from collections.abc import Iterator, Sequence
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


def read_source(path: Path) -> str:
    """Read a Python file the way Python would (PEP 263 coding cookie, UTF-8 default)."""
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise SourceError(f"file is too large to check ({size} bytes)")
        data = path.read_bytes()
    except OSError as exc:
        raise SourceError(f"cannot read file: {exc.strerror or exc}") from exc
    return decode_source(data)


def decode_source(data: bytes) -> str:
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
    return text[1:] if text.startswith("\ufeff") else text


def _excluded(rel: str, name: str, patterns: Sequence[str], is_dir: bool) -> bool:
    for pat in patterns:
        p = pat.rstrip("/")
        if pat.endswith("/") and not is_dir:
            continue
        if fnmatch.fnmatch(rel, p) or fnmatch.fnmatch(name, p) or rel.startswith(p + "/"):
            return True
    return False


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
                if not f.endswith((".py", ".pyi")):
                    continue
                path = here / f
                if _excluded(_rel(path, base), f, exclude, False) or path in seen:
                    continue
                seen.add(path)
                yield path


def _rel(path: Path, base: Path) -> str:
    try:
        return path.relative_to(base).as_posix()
    except ValueError:
        return path.as_posix()
