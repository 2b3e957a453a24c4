"""The interpreter whose JAX is analysed and probed: found, checked and loaded once.

One resolver of interpreter settings serves the analysis, the probe and the
language server: a path to an executable or to a virtual environment folder,
``~`` expanded, relative paths taken from a base folder, bare names looked up
on PATH.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from .platforms import Version, parse_version
from .semantics.jedi_resolver import JediResolver, create_environment
from .semantics.name_store import NameStore
from .semantics.resolve_worker import WorkerResolver
from .semantics.resolver import Resolver, StaticResolver

if TYPE_CHECKING:
    import jedi


class InterpreterError(ValueError):
    """The configured interpreter cannot be used; ``kind`` says why."""

    def __init__(self, message: str, kind: str = "interpreter-not-executable") -> None:
        super().__init__(message)
        self.kind = kind


def default_interpreter() -> str:
    """The active virtual environment's Python, else the one running jaxtarget."""
    venv = os.environ.get("VIRTUAL_ENV")
    if venv:
        for candidate in _venv_pythons(Path(venv)):
            if candidate.exists():
                return str(candidate)
    return sys.executable


def _venv_pythons(folder: Path) -> tuple[Path, Path]:
    return folder / "bin" / "python", folder / "Scripts" / "python.exe"


def resolve_interpreter(python: str | None, base: Path | None = None) -> str:
    """The executable an interpreter setting names (None: the default interpreter)."""
    if not python:
        return default_interpreter()
    path = Path(python).expanduser()
    if not path.is_absolute() and os.sep not in python and "/" not in python:
        found = shutil.which(python)
        if found:
            path = Path(found)
    elif not path.is_absolute() and base is not None:
        path = base / path
    if not path.exists():
        bare = not path.is_absolute() and os.sep not in python and "/" not in python
        tried = " (not on PATH)" if bare else f" (looked for {path.absolute()})"
        if str(path.absolute()) == python:
            tried = ""
        raise InterpreterError(f"interpreter not found: {python}{tried}", "interpreter-missing")
    if path.is_dir():
        for candidate in _venv_pythons(path):
            if candidate.exists():
                return str(candidate.absolute())
        raise InterpreterError(f"no python executable in {python}")
    if not os.access(path, os.X_OK):
        raise InterpreterError(f"interpreter is not executable: {python}")
    # absolute (the probe runs in a temporary folder), symlinks kept (a venv's python is one)
    return str(path.absolute())


_DIST_RE = re.compile(r"^jax-(\d[^-]*)\.dist-info$")


@dataclass(frozen=True)
class JaxInstall:
    path: Path
    version: str | None


def find_jax(sys_path: Iterable[str]) -> JaxInstall | None:
    """Locate the jax package (and its version) on an interpreter's sys.path."""
    for entry in sys_path:
        root = Path(entry)
        init = root / "jax" / "__init__.py"
        if not init.is_file():
            continue
        version: str | None = None
        try:
            for child in root.iterdir():
                m = _DIST_RE.match(child.name)
                if m:
                    version = m.group(1)
                    break
        except OSError:
            pass
        if version is None:
            vfile = root / "jax" / "version.py"
            try:
                m2 = re.search(r'^_version\s*(?::\s*str)?\s*=\s*"([^"]+)"', vfile.read_text(), re.M)
                version = m2.group(1) if m2 else None
            except OSError:
                version = None
        return JaxInstall(root / "jax", version)
    return None


def find_plugins(sys_path: Iterable[str]) -> list[str]:
    """Names of installed PJRT plugin distributions (cuda, rocm, tpu)."""
    names: set[str] = set()
    for entry in sys_path:
        try:
            children = list(Path(entry).iterdir())
        except OSError:
            continue
        for child in children:
            n = child.name.lower().replace("_", "-")
            if n.endswith(".dist-info") and (
                (n.startswith(("jax-cuda", "jax-rocm", "libtpu")) and "plugin" in n) or n.startswith("libtpu")
            ):
                names.add(n.split("-", 3)[0] if n.startswith("libtpu") else "-".join(n.split("-")[:3]))
    return sorted(names)


def guess_backend(plugins: Sequence[str]) -> str | None:
    """The backend a jax with these plugins would default to, without running it."""
    joined = " ".join(plugins)
    if "libtpu" in joined:
        return "tpu"
    if "cuda" in joined:
        return "cuda"
    if "rocm" in joined:
        return "rocm"
    return None


@dataclass(frozen=True)
class Environment:
    """The interpreter whose JAX is analysed."""

    python: str
    resolver: Resolver
    jax_version: str | None
    plugins: tuple[str, ...]

    @property
    def jax_version_tuple(self) -> Version | None:
        return parse_version(self.jax_version) if self.jax_version else None


_ENVIRONMENTS: dict[tuple[str, bool], Environment] = {}
_ENVIRONMENTS_LOCK = threading.Lock()


def load_environment(python: str | None, base: Path | None = None, isolated: bool = False) -> Environment:
    """Create (once per interpreter) the jedi environment and resolver.

    ``isolated``: jedi runs in a child process that stops when idle (semantics/resolve_worker.py),
    for a long-lived process whose memory should not keep what jedi parsed.
    """
    exe = resolve_interpreter(python, base)
    with _ENVIRONMENTS_LOCK:
        cached = _ENVIRONMENTS.get((exe, isolated))
        if cached is not None:
            return cached
        same = os.path.realpath(exe) == os.path.realpath(sys.executable) and exe == sys.executable
        env: jedi.api.environment.Environment | None = None
        if same:
            sys_path = list(sys.path)  # jedi's view of the running interpreter, without importing jedi
        else:
            try:
                env = create_environment(exe)
            except Exception as exc:  # jedi raises several kinds for a broken interpreter
                raise InterpreterError(f"cannot use interpreter {exe}: {exc}") from exc
            sys_path = list(env.get_sys_path())
        jax = find_jax(sys_path)
        plugins = tuple(find_plugins(sys_path))
        resolver: Resolver
        if jax is None:
            resolver = StaticResolver(f"jax is not installed in {exe}; resolved from imports only")
        else:
            store = NameStore.for_environment(exe, sys_path, jax.version)
            resolver = WorkerResolver(None if same else exe, store) if isolated else JediResolver(env, store)
        result = Environment(exe, resolver, jax.version if jax else None, plugins)
        _ENVIRONMENTS[(exe, isolated)] = result
        return result


def forget_environments() -> None:
    """Drop the loaded environments (in a forked process: jedi's subprocesses are the parent's)."""
    with _ENVIRONMENTS_LOCK:
        _ENVIRONMENTS.clear()
