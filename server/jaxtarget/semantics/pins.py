"""The platform a module, or a test suite's ``conftest.py``, pins the whole process to.

pytest imports each ``conftest.py`` from the root folder down to a test file's
folder before the test module; one that runs ``jax.config.update("jax_platform_name",
"cpu")`` at import time makes every test below it run on that platform whatever
the machine has. Read from disk, cached per file by modification time.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator
from pathlib import Path

from ..platforms import platforms_of
from .values import module_constants
from .vocabulary import terminal

#: config options and environment variables that choose the platform for the whole process
_PLATFORM_OPTIONS = frozenset({"jax_platform_name", "jax_platforms"})
PLATFORM_WORDS: tuple[str, ...] = ("jax_platform_name", "jax_platforms", "JAX_PLATFORMS", "JAX_PLATFORM_NAME")
#: what a module that pins the platform spells (``module_pin``): a module spelling none pins nothing
PIN_SPELLINGS: tuple[str, ...] = ("jax_platform", "JAX_PLATFORM", "jax_default_device")


def _text(node: ast.expr | None, constants: dict[str, object]) -> str | None:
    """The string ``node`` is: a literal, or a name the module binds once to one
    (``which_device = "cpu"``)."""
    if isinstance(node, ast.Name):
        value = constants.get(node.id)
        return value if isinstance(value, str) else None
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def _platform_value(
    key: ast.expr | None, value: ast.expr | None, constants: dict[str, object]
) -> frozenset[str] | None:
    option, text = _text(key, constants), _text(value, constants)
    if option is None or not text or option.lower() not in _PLATFORM_OPTIONS:
        return None
    # "cpu" or a priority list such as "cuda,cpu": the first one that exists is used
    return platforms_of(text.split(",")[0].strip()) or None


def _default_device(key: ast.expr, value: ast.expr, constants: dict[str, object]) -> frozenset[str] | None:
    """``"jax_default_device"`` set to a device named by platform (``jax.devices("cpu")[0]``,
    ``jax.local_devices(backend="cpu")[0]``, ``jax.devices(which_device)[0]`` after
    ``which_device = "cpu"``) or to a platform's name: every computation whose inputs are
    not committed elsewhere runs there."""
    if _text(key, constants) != "jax_default_device":
        return None
    if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Call):
        call = value.value
        if terminal(call.func) not in ("devices", "local_devices"):
            return None
        named = [k.value for k in call.keywords if k.arg == "backend"]
        value = call.args[0] if call.args else named[0] if named else value
    text = _text(value, constants)
    return (platforms_of(text) or None) if text is not None else None


def _settings(tree: ast.Module) -> Iterator[tuple[ast.expr, ast.expr, bool]]:
    """The module's top-level statements that may set a platform option: the key, the value,
    and whether it is a ``config.update`` (which may also set the default device)."""
    for stmt in tree.body:
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            call = stmt.value
            method = call.func.attr if isinstance(call.func, ast.Attribute) else None
            if method in ("update", "setdefault") and len(call.args) == 2:
                yield call.args[0], call.args[1], method == "update"
        elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
            target = stmt.targets[0]
            if isinstance(target, ast.Subscript) and terminal(target.value) == "environ":
                yield target.slice, stmt.value, False


def pin_names(tree: ast.Module) -> set[str]:
    """The names the module's platform settings read (``jax.devices(which_device)``): where
    only some statements are parsed, those binding them are needed too."""
    read: list[ast.expr] = []
    for key, value, _ in _settings(tree):
        read += [key, value]
        if isinstance(value, ast.Subscript) and isinstance(value.value, ast.Call):
            read += [*value.value.args[:1], *(k.value for k in value.value.keywords)]
    return {n.id for n in read if isinstance(n, ast.Name)}


def module_pin(tree: ast.Module) -> frozenset[str] | None:
    """The platform a module (or a conftest.py) pins the whole process to at import time.

    ``jax.config.update("jax_platform_name", "cpu")``, ``jax.config.update("jax_platforms", "cpu")``,
    ``os.environ["JAX_PLATFORMS"] = "cpu"``, ``os.environ.setdefault("JAX_PLATFORMS", "cpu")``
    and ``jax.config.update("jax_default_device", jax.devices("cpu")[0])``; a platform's
    name may be a name the module binds once to it.
    """
    found: frozenset[str] | None = None
    constants: dict[str, object] | None = None
    for key, value, update in _settings(tree):
        constants = module_constants(tree.body) if constants is None else constants
        found = _platform_value(key, value, constants) or found
        if update:
            found = _default_device(key, value, constants) or found
    return found


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


def is_test_module(path: str) -> bool:
    """A module pytest collects (``test_*.py``, ``*_test.py``), run under the conftest.py files above it."""
    name = os.path.basename(path)
    return name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))


def conftest_pin(path: str | None) -> frozenset[str] | None:
    """The pin of the nearest conftest.py that pins, from a test module's folder up to the
    project root (None for a module others import: it runs outside pytest too)."""
    if not path or not is_test_module(path):
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
