"""APIs reached through another module of the project, read from that module's imports.

A project often imports an API in one module and uses it from others, under the name
that module gave it: ``_attention_impl.py`` says ``from jax._src.cudnn.fused_attention_stablehlo
import dot_product_attention as cuda_dot_product_attention``, and ``attention.py`` calls
``attn_impl.cuda_dot_product_attention(q, k, v)`` after ``import mypkg._attention_impl as
attn_impl``. The resolver asks jedi in the user's environment, which does not see the
project's modules when the project is not installed there (a script's helpers, tests
beside a package, a checkout that was never ``pip install``-ed). So a use whose import
names a module of the project (found the way ``project_files.module_file`` finds it) is
followed through that module's own top-level import statements, as Python would, up to
``MAX_HOPS`` modules, to the import of a module outside the project, which the resolver
then answers as usual.

Only imports are followed: a name the module also defines or assigns (other than a
``None`` placeholder for an import that failed, as in a ``try``/``except ImportError``
shim) is the module's own, and is left to the resolver. Modules of ``jax`` and ``jaxlib``
are always left to the resolver (the installed ones are what the code runs with), and so
is every name in a module of a ``jax`` package itself.

A module's imports are read once per version of its file (its stamp), parsing only its
statements that are no def or class.
"""

from __future__ import annotations

import ast
import functools
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .pins import PIN_SPELLINGS, module_pin
from .project_files import Stamp, by_stamp, import_root, module_file, read_top_level
from .resolver import Binding, Query
from .scopes import ScopeIndex, dotted_spelling
from .text import Lines
from .values import _is_none_assignment, _module_bindings_in, _walk_own, module_assigned, module_constants

#: how many project modules a use is followed through
MAX_HOPS = 3
#: how many lines a bracketed import statement is read onto
_CONTINUED_LINES = 50
#: modules the resolver always answers for
_LEFT_TO_RESOLVER = frozenset({"jax", "jaxlib"})


@dataclass(frozen=True)
class _Imports:
    """What a module's top-level statements bind by import alone."""

    #: name -> the imports that bind it, in order (names bound otherwise too are left out)
    bound: dict[str, tuple[Binding, ...]]
    #: a name a ``from ... import x as name`` gives -> x
    renames: dict[str, str]
    #: names one statement binds, to ``True`` or ``False`` and nothing else (``USE_JAX = True``)
    flags: dict[str, bool]
    #: names one statement binds to a dotted name of an import, and nothing else binds -> that
    #: dotted name (``jax_handle = jax``, ``xp = jax.numpy``: a backend handle other modules use)
    aliases: dict[str, str]


_READ: dict[Path, tuple[Stamp, _Imports | None]] = {}

#: a ``global`` declaration, read from the text (``global USE_JAX, backend``)
_GLOBAL = re.compile(r"^[ \t]+global[ \t]+(\w+(?:[ \t]*,[ \t]*\w+)*)", re.MULTILINE)


def _imports_of(path: Path) -> _Imports | None:
    def read(size: int) -> _Imports | None:
        view = read_top_level(path, size, ("import", "True", "False"), lambda defined, _: defined is None)
        if view is None:
            return None
        other = {name for line in view.starts if (name := view.defined_name(line)) is not None}
        bound: dict[str, list[Binding]] = {}
        renames: dict[str, str] = {}
        body = view.module().body
        for stmt in body:
            for node in _walk_own([stmt]):
                for name, binding in _import_bindings(node):
                    bound.setdefault(name, []).append(binding)
                    if binding.kind == "from" and binding.asname and binding.name != binding.asname:
                        renames[binding.asname] = binding.name or ""
        for stmt in body:
            for name in bound:
                found, _ = _module_bindings_in(stmt, name)
                if any(not _is_none_assignment(n) for n in found):
                    other.add(name)
        imported = {n: tuple(b) for n, b in bound.items() if n not in other}
        # the view leaves out the functions: one that declares a name `global` may rebind it
        rebound = {n for m in _GLOBAL.finditer(view.text.source) for n in re.split(r"[\s,]+", m.group(1))}
        aliases = {
            n: spelled[1]
            for n, value in module_assigned(body).items()
            if n not in bound
            and n not in other
            and n not in rebound
            and (spelled := dotted_spelling(value)) is not None
            and spelled[0] in imported
        }
        return _Imports(
            imported,
            {a: n for a, n in renames.items() if a not in other},
            {n: v for n, v in module_flags(body).items() if n not in bound and n not in rebound},
            aliases,
        )

    return by_stamp(_READ, path, path, read, None)


def module_flags(body: list[ast.stmt]) -> dict[str, bool]:
    """The names that one top-level statement of ``body`` binds, to ``True`` or ``False``,
    and no other statement binds (``USE_JAX = True``, ``__use_jax__: bool = True``)."""
    return {n: v for n, v in module_constants(body).items() if isinstance(v, bool)}


def flag_value(path: str | None, binding: Binding, name: str) -> bool | None:
    """The value ``name``, bound by ``binding`` in the file at ``path``, always has: a flag
    another module of the project sets to a constant (``from .._config import __use_jax__``,
    where _config.py says ``__use_jax__ = True``). None: not such a flag."""
    if path is None:
        return None
    located = _project_file(Path(path).resolve(), binding, name)
    if located is None or "." in located[1]:
        return None
    imports = _imports_of(located[0])
    return imports.flags.get(located[1]) if imports is not None else None


def flag_truth(path: str | None, index: ScopeIndex, tree: ast.Module) -> Callable[[ast.expr], bool | None]:
    """What a module-level ``if`` test always says, where it is a flag bound to a constant,
    here or in another module of the project (``if __use_jax__:`` after ``from .._config
    import __use_jax__``, where _config.py says ``__use_jax__ = True``), or its negation."""
    asking: set[str] = set()

    def truth(test: ast.expr) -> bool | None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            value = truth(test.operand)
            return None if value is None else not value
        if not isinstance(test, ast.Name) or test.id in asking:
            return None
        asking.add(test.id)
        try:
            binds, _ = index.bindings(tree, test.id)
        finally:
            asking.discard(test.id)
        if len(binds) != 1:
            return None
        (bind,) = binds
        if isinstance(bind, Binding):
            return flag_value(path, bind, test.id)
        return module_flags([s for s in tree.body if s.lineno == bind.line]).get(test.id)

    return truth


def _import_bindings(node: ast.AST) -> list[tuple[str, Binding]]:
    """The names an import statement binds, each with its binding (star imports bind none here)."""
    if isinstance(node, ast.Import):
        return [
            (a.asname, Binding("import-as", a.name, None, a.asname))
            if a.asname
            else (a.name.split(".")[0], Binding("import", a.name, None, None))
            for a in node.names
        ]
    if isinstance(node, ast.ImportFrom):
        module = node.module or ""
        return [
            (a.asname or a.name, Binding("from", module, a.name, a.asname, node.level))
            for a in node.names
            if a.name != "*"
        ]
    return []


def _outside(binding: Binding) -> bool:
    """Whether the binding imports from a module the resolver always answers for."""
    return binding.level == 0 and binding.module.split(".")[0] in _LEFT_TO_RESOLVER


def _in_jax(path: str) -> bool:
    """Whether the file at ``path`` is a module of a ``jax`` or ``jaxlib`` package."""
    return _package_in_jax(os.path.dirname(os.path.abspath(path)))


@functools.lru_cache(maxsize=4096)
def _package_in_jax(folder: str) -> bool:
    """Whether the modules of ``folder`` belong to a ``jax`` or ``jaxlib`` package (read once
    per folder: the ``__init__.py`` files above it)."""
    return import_root(Path(folder) / "_.py")[1].split(".")[0] in _LEFT_TO_RESOLVER


def _project_file(here: Path, binding: Binding, dotted: str) -> tuple[Path, str] | None:
    """The project module ``dotted`` reaches through ``binding`` in the file ``here``, and
    what it names there (``attn_impl.cuda_attention`` -> the module's file, ``cuda_attention``)."""
    if _outside(binding):
        return None
    parts = dotted.split(".")
    found: Path | None
    if binding.kind == "import-as":
        found, rest = module_file(here, binding.module, 0), parts[1:]
    elif binding.kind == "import":
        # `import a.b` binds `a`: `a.b.c.x` is `x` of module a.b.c where such a module is
        # there, else `b.c.x` looked up in package a
        module, i = parts[0], 1
        while i < len(parts) - 1 and module_file(here, f"{module}.{parts[i]}", 0) is not None:
            module, i = f"{module}.{parts[i]}", i + 1
        found, rest = module_file(here, module, 0), parts[i:]
    elif binding.kind == "star":
        found, rest = module_file(here, binding.module, binding.level), parts
    else:
        name = binding.name or ""
        # `from mypkg import impl` (a module) or `from mypkg.impl import cuda_attention` (a name)
        found = module_file(here, f"{binding.module}.{name}" if binding.module else name, binding.level)
        rest = parts[1:]
        if found is None and (binding.module or binding.level):
            found, rest = module_file(here, binding.module, binding.level), [name, *parts[1:]]
    if found is None or not rest or found == here:
        return None
    return found, ".".join(rest)


def _pick(bindings: tuple[Binding, ...], dotted: str) -> Binding | None:
    """The import a use means where several bind its first name: for ``import a.b`` and
    ``import a.c``, the one the use spells; None where they bind different things (numpy or
    jax chosen at run time: left to the resolver, which reads the choice)."""
    spelled = tuple(b for b in bindings if b.kind != "import" or dotted.startswith(b.module + "."))
    bindings = spelled or bindings
    return bindings[0] if len({b.qualify(dotted) for b in bindings}) == 1 else None


def through_project(path: str | None, binding: Binding, dotted: str) -> Query | None:
    """The question to ask the resolver about ``dotted``, bound by ``binding`` in the file at
    ``path``, when the binding imports a module of the project: asked of the import that
    module (or one it imports from, ``MAX_HOPS`` at most) makes of an outside module.
    None: the binding imports no project module, or the project spells the name otherwise.
    The caller leaves out the modules of a ``jax`` package (``jax_module_name``)."""
    if path is None or _outside(binding):
        return None
    here = Path(path).resolve()
    for _ in range(MAX_HOPS):
        located = _project_file(here, binding, dotted)
        if located is None:
            return None
        here, dotted = located
        imports = _imports_of(here)
        if imports is None:
            return None
        first = dotted.split(".")[0]
        if first in imports.aliases:
            # `jax_handle = jax` there: `rp.jax_handle.numpy` is `jax.numpy`
            dotted = imports.aliases[first] + dotted[len(first) :]
        bindings = imports.bound.get(dotted.split(".")[0])
        if not bindings:
            return None
        picked = _pick(bindings, dotted)
        if picked is None:
            return None
        binding = picked
        if _outside(binding) or _project_file(here, binding, dotted) is None:
            return None if binding.level else Query(binding, dotted)
    return None


#: an import statement, read from the text (``import a.b as c, d``; ``from .m import (x as y, z)``)
_IMPORT = re.compile(r"^[ \t]*import[ \t]+([\w. \t,]+)", re.MULTILINE)
_FROM = re.compile(
    r"^[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]*(\([^)]*\)|[^\n#;]*(?:\\\n[^\n#;]*)*)",
    re.MULTILINE,
)
_ALIAS = re.compile(r"([\w.*]+)(?:[ \t\n\\]+as[ \t\n\\]+(\w+))?")


def imports_in_text(source: str, top_level: bool = False) -> list[tuple[str, Binding]]:
    """The names the import statements spelled in ``source`` bind, with their bindings, read
    from the text alone (a statement in a string counts too): cheap enough for a file that
    is otherwise never parsed. ``top_level``: only statements that are not indented."""
    found: list[tuple[str, Binding]] = []
    for m in _IMPORT.finditer(source):
        if top_level and not m.group(0).startswith("import"):
            continue
        for name, asname in _ALIAS.findall(m.group(1)):
            if asname:
                found.append((asname, Binding("import-as", name, None, asname)))
            elif name != "as":
                found.append((name.split(".")[0], Binding("import", name, None, None)))
    for m in _FROM.finditer(source):
        if top_level and not m.group(0).startswith("from"):
            continue
        level, module = len(m.group(1)), m.group(2)
        if not level and module.split(".")[0] in _LEFT_TO_RESOLVER:
            continue  # its names are never followed: not read
        for name, asname in _ALIAS.findall(m.group(3)):
            if name == "*":
                found.append(("*", Binding("star", module, None, None, level)))
            elif "." not in name and name != "as":
                found.append((asname or name, Binding("from", module, name, asname or None, level)))
    return found


def import_text(text: Lines) -> str:
    """The lines of ``text`` that spell ``import``, each with the lines a bracket or a
    backslash carries it onto (found through the text's word index, which an edit updates
    in place: no scan of the whole text)."""
    out: list[str] = []
    last = len(text.starts)
    for line in text.word_lines("import"):
        chunk = text.text(line)
        n = line
        while (
            n < last
            and n - line < _CONTINUED_LINES
            and (chunk.count("(") > chunk.count(")") or chunk.endswith("\\"))
        ):
            n += 1
            chunk += "\n" + text.text(n)
        out.append(chunk)
    return "\n".join(out)


def renamed_terms(path: str | None, imports: str, terms: frozenset[str]) -> frozenset[str]:
    """The names that the project modules imported by the statements in ``imports`` (the
    text of the module at ``path``, or its import lines) give to ``terms``: ``cuda_attention``
    for ``from ... import dot_product_attention as cuda_attention``, also where a package's
    ``__init__.py`` imports it from such a module, ``MAX_HOPS`` modules deep. A use of one
    may be a use of an API."""
    if path is None or "import" not in imports or _in_jax(path):
        return frozenset()
    found = {binding: name for name, binding in imports_in_text(imports) if not _outside(binding)}
    if not found:
        return frozenset()
    here = Path(path).resolve()
    words: set[str] = set()
    memo: dict[tuple[Path, int], set[str]] = {}
    for binding, name in found.items():
        located = _module_of(here, binding, name)
        if located is not None:
            words |= _renamed_in(located, terms, MAX_HOPS, memo)
    return frozenset(words)


def spelled(source: str, words: frozenset[str]) -> frozenset[str]:
    """Those of ``words`` that ``source`` spells as whole identifiers."""
    return frozenset(w for w in words if re.search(rf"\b{re.escape(w)}\b", source))


def _module_of(here: Path, binding: Binding, name: str) -> Path | None:
    """The project module whose names a use of ``name`` (bound by ``binding``) is looked up in."""
    # any name under the binding: what matters is the module it is looked up in
    probe = f"{binding.module if binding.kind == 'import' else name}._"
    located = _project_file(here, binding, probe)
    return located[0] if located is not None else None


def _renamed_in(
    path: Path, terms: frozenset[str], hops: int, memo: dict[tuple[Path, int], set[str]]
) -> set[str]:
    """The names the module at ``path`` binds, by import, to one of ``terms`` under another
    name (``memo``: what the modules already asked about in this reading answered)."""
    held = memo.get((path, hops))
    if held is not None:
        return held
    memo[(path, hops)] = set()  # a module importing itself, through others, adds nothing
    imports = _imports_of(path)
    if imports is None:
        return set()
    words = {a for a, n in imports.renames.items() if n in terms}
    if hops > 1:
        for name, bindings in imports.bound.items():
            b = bindings[0]
            if name in words or b.kind != "from" or _outside(b):
                continue
            located = _project_file(path, b, name)
            if (
                located is not None
                and located[1] == b.name
                and located[0] != path
                and b.name in _renamed_in(located[0], terms, hops - 1, memo)
            ):
                words.add(name)
    memo[(path, hops)] = words
    return words


_PINS: dict[Path, tuple[Stamp, frozenset[str] | None]] = {}


def _pin_of(path: Path) -> frozenset[str] | None:
    def read(size: int) -> frozenset[str] | None:
        view = read_top_level(path, size, PIN_SPELLINGS, lambda defined, _: defined is None)
        return module_pin(view.module()) if view is not None else None

    return by_stamp(_PINS, path, path, read, None)


def imported_pin(path: str | None, imports: str) -> frozenset[str] | None:
    """The platform a module of the project pins the process to when the module at ``path``
    imports it, by a statement of ``imports`` at the module's top level (not indented):
    ``from run_single_draw import smoother``, where run_single_draw.py runs
    ``jax.config.update("jax_platform_name", "cpu")`` as it is imported. One module deep."""
    if path is None or "import" not in imports or _in_jax(path):
        return None
    found = {b: n for n, b in imports_in_text(imports, top_level=True) if not _outside(b)}
    if not found:
        return None
    here = Path(path).resolve()
    for binding, name in found.items():
        located = _module_of(here, binding, name)
        pin = _pin_of(located) if located is not None else None
        if pin is not None:
            return pin
    return None
