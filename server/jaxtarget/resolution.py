"""jedi glue: resolve names against the JAX installed in the user's interpreter.

The engine hands over *bindings* (the import statement that binds a name, plus
the dotted expression that uses it); jedi answers which definition that is.
Answers are cached per environment, so a warm check asks jedi nothing new.
When jax is not importable in the chosen interpreter, resolution falls back to
the import statements alone (``StaticResolver``).
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import jedi

from .catalog import APIS, SHARD_MAP_NAMES, parse_version


class InterpreterError(ValueError):
    """The configured interpreter cannot be used."""


@dataclass(frozen=True)
class Binding:
    """How a name used in the code is bound by an import.

    ``module`` is the imported module (``jax.lax`` for ``import jax.lax as L``
    or ``from jax import lax`` gives module ``jax`` and ``name`` ``lax``).
    """

    kind: str  # "import" | "import-as" | "from" | "star"
    module: str
    name: str | None
    asname: str | None
    level: int = 0

    def statement(self) -> str:
        dots = "." * self.level
        if self.kind == "import":
            return f"import {self.module}"
        if self.kind == "import-as":
            return f"import {self.module} as {self.asname}"
        if self.kind == "star":
            return f"from {dots}{self.module} import *"
        alias = f" as {self.asname}" if self.asname and self.asname != self.name else ""
        return f"from {dots}{self.module} import {self.name}{alias}"

    def qualify(self, dotted: str) -> str | None:
        """The public dotted name the expression spells, read from the import alone."""
        if self.level:
            return None
        root, _, rest = dotted.partition(".")
        if self.kind == "import":
            return dotted
        if self.kind == "import-as":
            base = self.module
        elif self.kind == "star":
            base = f"{self.module}.{root}"
        else:
            base = f"{self.module}.{self.name}"
        return f"{base}.{rest}" if rest else base


@dataclass(frozen=True)
class Query:
    """One resolution question: what does ``dotted`` mean under ``binding``?"""

    binding: Binding
    dotted: str


class StaticResolver:
    """Import-aware resolution from the module text alone (no jax available)."""

    exact = False

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def resolve(self, queries: Sequence[Query]) -> list[str | None]:
        out: list[str | None] = []
        for q in queries:
            name = q.binding.qualify(q.dotted)
            out.append(name if name in APIS or name in SHARD_MAP_NAMES else None)
        return out


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


class JediResolver:
    """Resolution through jedi in the user's own environment."""

    exact = True

    def __init__(self, environment: jedi.api.environment.Environment, jax: JaxInstall) -> None:
        self.environment = environment
        self.jax = jax
        self.reason = ""
        self._cache: dict[Query, str | None] = {}
        self._lock = threading.Lock()
        self._definitions: dict[str, str] | None = None

    def definitions(self) -> dict[str, str]:
        """Map jedi ``full_name`` of each catalog definition to its public name."""
        if self._definitions is None:
            names = sorted(APIS) + sorted(SHARD_MAP_NAMES)
            modules = sorted({n.rsplit(".", 1)[0] for n in names})
            lines = [f"import {m}" for m in modules]
            first = len(lines) + 1
            lines += names
            script = jedi.Script("\n".join(lines) + "\n", environment=self.environment)
            found: dict[str, str] = {}
            for i, name in enumerate(names):
                for d in _goto(script, first + i, len(name)):
                    if d.full_name:
                        found.setdefault(d.full_name, name)
            self._definitions = found
        return self._definitions

    def resolve(self, queries: Sequence[Query]) -> list[str | None]:
        with self._lock:
            missing = [q for q in dict.fromkeys(queries) if q not in self._cache]
            if missing:
                self._resolve_batch(missing)
            return [self._cache[q] for q in queries]

    def _resolve_batch(self, queries: Sequence[Query]) -> None:
        defs = self.definitions()
        star = [q for q in queries if q.binding.kind == "star" or q.binding.level]
        scoped = [q for q in queries if q not in star]
        if scoped:
            lines: list[str] = []
            spots: list[tuple[Query, int, int]] = []
            for i, q in enumerate(scoped):
                lines.append(f"def _jaxtarget_{i}():")
                lines.append(f"    {q.binding.statement()}")
                lines.append(f"    {q.dotted}")
                spots.append((q, len(lines), 4 + len(q.dotted)))
            self._run("\n".join(lines) + "\n", spots, defs)
        for q in star:
            # star and relative imports cannot live in a function: one script each
            src = f"{q.binding.statement()}\n{q.dotted}\n"
            self._run(src, [(q, 2, len(q.dotted))], defs)

    def _run(self, src: str, spots: Sequence[tuple[Query, int, int]], defs: dict[str, str]) -> None:
        script = jedi.Script(src, environment=self.environment)
        for q, line, col in spots:
            self._cache[q] = _match(_goto(script, line, col), defs)

    def resolve_in_file(
        self, source: str, path: str | None, spots: Sequence[tuple[int, int]]
    ) -> list[str | None]:
        """Full-file resolution for names whose binding the engine could not pin down."""
        defs = self.definitions()
        script = jedi.Script(source, path=path, environment=self.environment)
        return [_match(_goto(script, line, col), defs) for line, col in spots]


def _goto(script: jedi.Script, line: int, col: int) -> list[jedi.api.classes.Name]:
    try:
        return list(script.goto(line, col, follow_imports=True))
    except Exception:  # jedi can fail on odd code; treat as unresolved
        return []


def _match(names: Sequence[jedi.api.classes.Name], defs: dict[str, str]) -> str | None:
    for n in names:
        if n.full_name and n.full_name in defs:
            return defs[n.full_name]
    return None


Resolver = JediResolver | StaticResolver

_ENVIRONMENTS_LOCK = threading.Lock()


@dataclass(frozen=True)
class Environment:
    """The interpreter whose JAX is analysed."""

    python: str
    resolver: Resolver
    jax_version: str | None
    plugins: tuple[str, ...]

    @property
    def jax_version_tuple(self) -> tuple[int, ...] | None:
        return parse_version(self.jax_version) if self.jax_version else None


def _executable(python: str | None) -> str:
    if not python:
        return sys.executable
    path = Path(python).expanduser()
    if not path.exists():
        raise InterpreterError(f"interpreter not found: {python}")
    if path.is_dir():
        for candidate in (path / "bin" / "python", path / "Scripts" / "python.exe"):
            if candidate.exists():
                return str(candidate)
        raise InterpreterError(f"no python executable in {python}")
    if not os.access(path, os.X_OK):
        raise InterpreterError(f"interpreter is not executable: {python}")
    return str(path)


_ENVIRONMENTS: dict[str, Environment] = {}


def load_environment(python: str | None) -> Environment:
    """Create (once per interpreter) the jedi environment and resolver."""
    exe = _executable(python)
    with _ENVIRONMENTS_LOCK:
        cached = _ENVIRONMENTS.get(exe)
        if cached is not None:
            return cached
        env: jedi.api.environment.Environment
        if os.path.realpath(exe) == os.path.realpath(sys.executable) and exe == sys.executable:
            env = jedi.api.environment.InterpreterEnvironment()
        else:
            try:
                env = jedi.create_environment(exe, safe=False)
                env.get_sys_path()
            except Exception as exc:
                raise InterpreterError(f"cannot use interpreter {exe}: {exc}") from exc
        sys_path = list(env.get_sys_path())
        jax = find_jax(sys_path)
        plugins = tuple(find_plugins(sys_path))
        resolver: Resolver
        if jax is None:
            resolver = StaticResolver(f"jax is not installed in {exe}; resolved from imports only")
        else:
            resolver = JediResolver(env, jax)
        result = Environment(exe, resolver, jax.version if jax else None, plugins)
        _ENVIRONMENTS[exe] = result
        return result


def describe(environment: Environment, qualname: str) -> tuple[str, str]:
    """Signature and docstring of a public name, from the user's installed JAX."""
    resolver = environment.resolver
    if not isinstance(resolver, JediResolver):
        return "", ""
    module = qualname.rsplit(".", 1)[0]
    script = jedi.Script(f"import {module}\n{qualname}\n", environment=resolver.environment)
    try:
        names = script.infer(2, len(qualname))
    except Exception:
        return "", ""
    for n in names:
        try:
            sigs = n.get_signatures()
            signature = sigs[0].to_string() if sigs else ""
            return signature, n.docstring(raw=True)
        except Exception:
            continue
    return "", ""
