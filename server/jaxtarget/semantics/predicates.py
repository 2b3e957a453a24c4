"""Backend predicates another module of the project defines, read from that module alone.

A guard may call a test imported from elsewhere in the project (``from tests.utils
import has_gpu``; ``if has_gpu(): ...``), and a fix may want to import the project's
own ``has_gpu_backend()`` rather than define a second one. The module is found the
way Python would import it where the file runs (``project_files.py``). The
function's body is read the way a local predicate is (``conditions.py``), with the names it
calls resolved through that module's own imports, so it is recognised by what it computes,
whatever its name.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from .grammar import parse_modern
from .project_files import MAX_BYTES, Stamp, by_stamp, module_file, read_top_level
from .resolver import Binding
from .scopes import ScopeIndex, binding_for, collect, import_bindings
from .text import Lines, lines_with_words
from .values import _module_bindings_in, positional_params

Sets = tuple[frozenset[str], frozenset[str]]
#: a comparison of the function's result with a number (``get_tpu_version() >= 5``)
Comparison = tuple[type[ast.cmpop], float] | None


def module_function(tree: ast.Module, name: str) -> ast.FunctionDef | None:
    """The module-level ``def name`` that takes no required argument (the last one wins)."""
    found: ast.FunctionDef | None = None
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef) and stmt.name == name:
            a = stmt.args
            required = len(a.posonlyargs) + len(a.args) - len(a.defaults)
            no_kw = all(d is not None for d in a.kw_defaults)
            found = stmt if required == 0 and no_kw else None
    return found


def predicate_sets(tree: ast.Module, text: Lines, name: str, comparison: Comparison = None) -> Sets | None:
    """Where the module-level function ``name`` can return True, and where False (with
    ``comparison``: where its result compared so can be true, and false).

    ``tree`` holds the function and the module's own statements (constants it may read),
    not necessarily its other defs and classes. None when it has no such function, or the
    function is not a backend test (it could return either anywhere).
    """
    from .conditions import ALL, Conditions

    func = module_function(tree, name)
    if func is None:
        return None
    read = [s for s in tree.body if s is func or not isinstance(s, (ast.FunctionDef, ast.ClassDef))]
    resolved = static_resolved(tree, text, read)
    call = ast.Call(func=ast.Name(id=name, ctx=ast.Load()), args=[], keywords=[])
    test: ast.expr = call
    if comparison is not None:
        test = ast.Compare(left=call, ops=[comparison[0]()], comparators=[ast.Constant(comparison[1])])
    sets = Conditions(tree, resolved).sets(test, [tree])
    return None if sets == (ALL, ALL) else sets


def static_resolved(tree: ast.Module, text: Lines, read: list[ast.stmt]) -> dict[int, str]:
    """The public names the statements ``read`` spell through the module's own imports
    (id of the node -> qualified name), read without the resolver."""
    span = sorted({ln for s in read for ln in range(s.lineno, (s.end_lineno or s.lineno) + 1)})
    words = frozenset(
        n.attr if isinstance(n, ast.Attribute) else n.id
        for s in read
        for n in ast.walk(s)
        if isinstance(n, (ast.Name, ast.Attribute))
    )
    index = ScopeIndex(tree, {w: text.word_lines(w) for w in words}, text.word_lines)
    resolved: dict[int, str] = {}
    for cand in collect(tree, span, words, lines_with_words(text, words)):
        binding = binding_for(cand, index, tree)
        if isinstance(binding, Binding):
            public = binding.qualify(cand.dotted)
            if public is not None:
                resolved[id(cand.node)] = public
    return resolved


#: (file, function, comparison) -> what its last read version said
_READ: dict[tuple[Path, str, Comparison], tuple[Stamp, Sets | None]] = {}


def file_predicate(path: Path, name: str, comparison: Comparison = None) -> Sets | None:
    """``predicate_sets`` of the function ``name`` in the file at ``path`` (cached on its stamp)."""

    def read(size: int) -> Sets | None:
        # the function and the module's statements that are no def or class
        view = read_top_level(path, size, f"def {name}", lambda defined, _: defined in (None, name))
        return predicate_sets(view.module(), view.text, name, comparison) if view is not None else None

    return by_stamp(_READ, (path, name, comparison), path, read, None)


def _importing(
    path: str | None, stmt: ast.Import | ast.ImportFrom, name: str
) -> tuple[Path, ast.alias] | None:
    """The importing file, resolved, and the alias of ``stmt`` that binds ``name``."""
    alias = next((a for a in stmt.names if (a.asname or a.name) == name), None)
    return (Path(path).resolve(), alias) if path and alias is not None else None


def imported_file(path: str | None, stmt: ast.ImportFrom, name: str) -> tuple[Path, str] | None:
    """The project file and the function name there that ``stmt`` imports as ``name`` (None:
    not a project module, or the file itself)."""
    importing = _importing(path, stmt, name)
    if importing is None:
        return None
    here, alias = importing
    found = module_file(here, stmt.module or "", stmt.level)
    return (found, alias.name) if found is not None and found != here else None


def _module_function(
    path: str | None, stmt: ast.Import | ast.ImportFrom, name: str, function: str
) -> tuple[Path, str] | None:
    """The project file defining ``name.function``, ``name`` being the project module ``stmt``
    imports (``from jaxite.jaxite_cggi import jax_helpers``, ``import mylib.utils as utils``,
    ``import helpers``)."""
    importing = _importing(path, stmt, name)
    if importing is None:
        return None
    here, alias = importing
    if isinstance(stmt, ast.ImportFrom):
        module = f"{stmt.module}.{alias.name}" if stmt.module else alias.name
        found = module_file(here, module, stmt.level)
    else:
        # `import helpers` names the module itself; `import mylib.utils` binds only `mylib`
        found = module_file(here, alias.name, 0) if alias.asname or "." not in alias.name else None
    return (found, function) if found is not None and found != here else None


def _dotted(node: ast.expr) -> list[str] | None:
    """``mylib.utils.on_tpu`` as its parts, None when it is not names and attributes."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return [node.id, *reversed(parts)] if isinstance(node, ast.Name) else None


def project_definition(path: str | None, tree: ast.Module, func: ast.expr) -> tuple[Path, str] | None:
    """The project file, and the function's or class's name there, that a name spells through
    the module's imports: ``has_gpu`` after ``from .utils import has_gpu``; ``utils.has_gpu`` after
    ``from mylib import utils``, ``import mylib.utils as utils`` or ``import utils``;
    ``mylib.utils.has_gpu`` after ``import mylib.utils``.

    Only where top-level imports alone bind the called name's root: one import, or for a
    dotted module, plain ``import mylib...`` statements of which one names that module.
    """
    parts = _dotted(func)
    if parts is None or path is None:
        return None
    name, function, module = parts[0], parts[-1] if len(parts) > 1 else None, ".".join(parts[:-1])
    imports: list[ast.Import | ast.ImportFrom] = []
    for stmt in tree.body:
        if isinstance(stmt, ast.ImportFrom) and any((a.asname or a.name) == name for a in stmt.names):
            imports.append(stmt)
        elif not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            found, unsure = _module_bindings_in(stmt, name)
            if found or unsure:
                return None
        elif any((a.asname or a.name.split(".")[0]) == name for a in stmt.names):
            if function is None:
                return None  # `import helpers; helpers()`: a module is no function
            imports.append(stmt)
    if function is None:
        one = imports[0] if len(imports) == 1 else None
        return imported_file(path, one, name) if isinstance(one, ast.ImportFrom) else None
    if len(parts) == 2:
        # `import mylib.utils as utils`, `import helpers`: the name is the module itself
        plain = len(imports) == 1 and (
            isinstance(imports[0], ast.ImportFrom)
            or any(a.asname == name or a.name == name for a in imports[0].names)
        )
        return _module_function(path, imports[0], name, function) if plain else None
    # `import mylib.utils` binds `mylib`, through which `mylib.utils` is reached
    if not imports or not all(
        isinstance(stmt, ast.Import)
        and all(a.asname is None for a in stmt.names if a.name.split(".")[0] == name)
        for stmt in imports
    ):
        return None
    if not any(a.name == module for stmt in imports for a in stmt.names):
        return None
    here = Path(path).resolve()
    found_file = module_file(here, module, 0)
    return (found_file, function) if found_file is not None and found_file != here else None


def project_predicate(
    path: str, tree: ast.Module, func: ast.expr, comparison: Comparison = None
) -> Sets | None:
    """Where a predicate another project module defines is true and false (``project_definition``
    says which imports are read)."""
    found = project_definition(path, tree, func)
    return file_predicate(found[0], found[1], comparison) if found is not None else None


# ---------------------------------------------------------------- functions that only trace

#: calls that trace the function they are handed without lowering it
TRACERS = frozenset({"jax.make_jaxpr", "jax.eval_shape"})


def static_callee(tree: ast.Module, call: ast.Call) -> str | None:
    """The public name a call's function spells through the module's top-level imports."""
    parts: list[str] = []
    node: ast.expr = call.func
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    dotted = ".".join([node.id, *reversed(parts)])
    binds = [
        b
        for stmt in tree.body
        if isinstance(stmt, (ast.Import, ast.ImportFrom))
        for b in import_bindings(stmt, node.id)
        if isinstance(b, Binding)
    ]
    names = {b.qualify(dotted) for b in binds}
    return names.pop() if len(names) == 1 else None


def only_traces(
    func: ast.FunctionDef | ast.AsyncFunctionDef, position: int, callee: Callable[[ast.Call], str | None]
) -> bool:
    """Whether ``func`` hands its parameter at ``position`` only to ``jax.make_jaxpr`` /
    ``jax.eval_shape`` (``def trace(fn, *args): closed = jax.make_jaxpr(fn)(*args)``)."""
    params = positional_params(func)
    if position >= len(params):
        return False
    name = params[position]
    loads = 0
    traced = 0
    stack: list[tuple[ast.AST, ast.AST | None]] = [(s, None) for s in func.body]
    while stack:
        node, parent = stack.pop()
        if isinstance(node, ast.Name) and node.id == name:
            if not isinstance(node.ctx, ast.Load):
                return False
            loads += 1
            handed = isinstance(parent, ast.Call) and bool(parent.args) and parent.args[0] is node
            if handed and isinstance(parent, ast.Call) and callee(parent) in TRACERS:
                traced += 1
            continue
        stack.extend((child, node) for child in ast.iter_child_nodes(node))
    return loads > 0 and loads == traced


#: (file, function, position) -> whether its last read version only traces that parameter
_TRACES: dict[tuple[Path, str, int], tuple[Stamp, bool]] = {}
_IMPORTS = ("import ", "from ")


def file_traces(path: Path, name: str, position: int, hops: int = 1) -> bool:
    """``only_traces`` of the function ``name`` defined in the file at ``path``, or re-exported
    there from another module of the project (``from palladium.trace import trace``)."""

    def read(size: int) -> bool:
        # the function and the module's top-level imports (what it calls is read through them)
        view = read_top_level(
            path, size, name, lambda defined, first: defined == name or first.startswith(_IMPORTS)
        )
        if view is None:
            return False
        tree = view.module()
        defs = (s for s in tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)))
        func = next((s for s in defs if s.name == name), None)
        if func is not None:
            return only_traces(func, position, lambda c: static_callee(tree, c))
        stmt = next(
            (
                s
                for s in tree.body
                if isinstance(s, ast.ImportFrom) and any((a.asname or a.name) == name for a in s.names)
            ),
            None,
        )
        if hops <= 0 or stmt is None:
            return False
        alias = next(a for a in stmt.names if (a.asname or a.name) == name)
        there = module_file(path, stmt.module or "", stmt.level)
        return there is not None and there != path and file_traces(there, alias.name, position, hops - 1)

    return by_stamp(_TRACES, (path, name, position), path, read, False)


def project_traces(path: str | None, tree: ast.Module, func: ast.expr, position: int) -> bool:
    """Whether the project function a call spells (``trace`` after ``from palladium import trace``,
    ``palladium.trace`` after ``import palladium``) only traces its argument at ``position``."""
    found = project_definition(path, tree, func)
    return found is not None and file_traces(found[0], found[1], position)


# ---------------------------------------------------------------- classes another module defines


@dataclass(frozen=True)
class ProjectModule:
    """A project module read from disk: its tree and the names its imports give its statements."""

    path: Path
    tree: ast.Module
    resolved: dict[int, str]


_MODULES: dict[Path, tuple[Stamp, ProjectModule | None]] = {}


def project_module(path: Path) -> ProjectModule | None:
    """The module at ``path``, parsed and resolved through its own imports (cached by stamp)."""

    def read(size: int) -> ProjectModule | None:
        try:
            source = path.read_bytes().decode("utf-8") if size <= MAX_BYTES else ""
            tree = parse_modern(source) if source else None
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            return None
        if tree is None or not tree.body:
            return None
        return ProjectModule(path, tree, static_resolved(tree, Lines(source), tree.body))

    return by_stamp(_MODULES, path, path, read, None)


def project_class(
    path: str | None, tree: ast.Module, base: ast.expr
) -> tuple[ProjectModule, ast.ClassDef] | None:
    """The class another project module defines that ``base`` spells through this module's
    imports (``ptu.PallasTPUTest`` after ``from jax._src.pallas import pallas_test_util as
    ptu``), with that module (None: not such a class)."""
    found = project_definition(path, tree, base)
    module = project_module(found[0]) if found is not None else None
    if module is None or found is None:
        return None
    cls = next((s for s in module.tree.body if isinstance(s, ast.ClassDef) and s.name == found[1]), None)
    return (module, cls) if cls is not None else None
