"""Python's scope rules for the few names that matter, and the loads of those names.

``ScopeIndex`` answers "which statements bind name N in scope S" by walking only
the statements on lines that mention N; ``collect`` finds the loads of candidate
names; ``binding_for`` applies the LEGB rules to pick the import that a load
refers to, or says that the binding is ambiguous.
"""

from __future__ import annotations

import ast
import bisect
import itertools
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from .resolver import Binding

SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


@dataclass(frozen=True)
class Other:
    """A binding that is not an import (assignment, def, parameter, ...)."""

    line: int


Bind = Binding | Other


def import_bindings(node: ast.Import | ast.ImportFrom, name: str) -> list[Bind]:
    out: list[Bind] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname == name:
                out.append(Binding("import-as", alias.name, None, alias.asname))
            elif alias.asname is None and alias.name.split(".")[0] == name:
                out.append(Binding("import", alias.name, None, None))
    else:
        module = node.module or ""
        for alias in node.names:
            if alias.name == "*":
                continue
            if (alias.asname or alias.name) == name:
                out.append(Binding("from", module, alias.name, alias.asname, node.level))
    return out


def _target_names(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


def covers(node: ast.AST, lines: Sequence[int]) -> bool:
    """Whether ``node`` (decorators included) spans any of the sorted ``lines``."""
    start = getattr(node, "lineno", None)
    if start is None:
        return True
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        start = min(start, *(d.lineno for d in decorators))
    end = getattr(node, "end_lineno", start) or start
    i = bisect.bisect_left(lines, start)
    return i < len(lines) and lines[i] <= end


def _scan_nodes(stack: list[ast.AST], name: str, lines: Sequence[int]) -> tuple[list[Bind], bool]:
    """Bindings of ``name`` made by these nodes in their own scope (nested scopes skipped)."""
    found: list[Bind] = []
    is_global = False
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.extend(import_bindings(node, name))
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            if name in node.names and isinstance(node, ast.Global):
                is_global = True
            continue
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            if node.name == name:
                found.append(Other(node.lineno))
            # decorators are evaluated in this scope
            stack.extend(node.decorator_list)
            continue
        if isinstance(node, (ast.Lambda, *_COMPREHENSIONS)):
            continue
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if node.id == name:
                found.append(Other(node.lineno))
            continue
        if isinstance(node, ast.ExceptHandler) and node.name == name:
            found.append(Other(node.lineno))
        if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == name:
            found.append(Other(node.lineno))
        if isinstance(node, ast.Try) and any(_catches_import_error(h.type) for h in node.handlers):
            tried, tried_global = _scan_nodes([s for s in node.body if covers(s, lines)], name, lines)
            if any(isinstance(b, Binding) for b in tried):
                # `try: import jax.numpy as np` / `except ImportError: import numpy as np`: the
                # import the environment has wins, and the handler's binding is its fallback
                found.extend(tried)
                is_global = is_global or tried_global
                stack.extend(s for s in (*node.orelse, *node.finalbody) if covers(s, lines))
                continue
        for child in ast.iter_child_nodes(node):
            if not hasattr(child, "lineno") or covers(child, lines):
                stack.append(child)
    return found, is_global


#: what a handler of a failed import catches
_IMPORT_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "Exception", "BaseException"})


def _catches_import_error(kind: ast.expr | None) -> bool:
    if kind is None:
        return True
    if isinstance(kind, ast.Tuple):
        return any(_catches_import_error(e) for e in kind.elts)
    name = kind.attr if isinstance(kind, ast.Attribute) else kind.id if isinstance(kind, ast.Name) else None
    return name in _IMPORT_ERRORS


def _declared(node: ast.AST, kind: type[ast.Global | ast.Nonlocal], key: str) -> frozenset[str]:
    """Names the ``kind`` statements anywhere inside ``node`` declare (memoised on the node)."""
    hit: frozenset[str] | None = node.__dict__.get(key)
    if hit is None:
        hit = frozenset(n for inner in ast.walk(node) if isinstance(inner, kind) for n in inner.names)
        node.__dict__[key] = hit
    return hit


def declared_globals(stmt: ast.stmt) -> frozenset[str]:
    """Names that functions inside a top-level def or class declare ``global`` (memoised on the node)."""
    if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return frozenset()
    return _declared(stmt, ast.Global, "_jaxtarget_globals")


def declared_nonlocals(scope: ast.AST) -> frozenset[str]:
    """Names that functions inside ``scope`` declare ``nonlocal`` (memoised on the node)."""
    return _declared(scope, ast.Nonlocal, "_jaxtarget_nonlocals")


def _global_imports(stmt: ast.stmt, name: str) -> list[Bind]:
    """Imports of ``name`` inside functions that declare it ``global`` (they bind the module's name)."""
    if name not in declared_globals(stmt):
        return []
    found: list[Bind] = []
    for node in ast.walk(stmt):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            isinstance(g, ast.Global) and name in g.names for g in ast.walk(node)
        ):
            for sub in ast.walk(node):
                if isinstance(sub, (ast.Import, ast.ImportFrom)):
                    found.extend(import_bindings(sub, name))
    return found


class ScopeIndex:
    """Answers "what binds name N in scope S" for the few names that matter."""

    def __init__(
        self,
        tree: ast.Module,
        lines_of: dict[str, list[int]],
        more_lines: Callable[[str], list[int]] | None = None,
    ) -> None:
        self.tree = tree
        self.lines_of = lines_of
        #: lines mentioning a name not in ``lines_of`` (for names met while following aliases)
        self.more_lines = more_lines
        #: the value a module-level ``if`` test always has, where it is known (a flag another
        #: module of the project sets to a constant): only that branch's imports bind
        self.truth: Callable[[ast.expr], bool | None] | None = None
        self._cache: dict[tuple[int, str], tuple[list[Bind], bool]] = {}
        self._stars: list[Binding] | None = None
        if more_lines is not None:
            # a statement on no line saying ``global`` declares nothing global: no walk needed
            global_lines = more_lines("global")
            for stmt in tree.body:
                if not covers(stmt, global_lines):
                    stmt.__dict__.setdefault("_jaxtarget_globals", frozenset())

    def bindings(self, scope: ast.AST, name: str) -> tuple[list[Bind], bool]:
        """Bindings of ``name`` directly in ``scope``, and whether it is declared global."""
        key = (id(scope), name)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        # a scope's bindings are a property of its (immutable, cached) nodes alone
        memo: dict[str, tuple[list[Bind], bool]] | None = None
        if not isinstance(scope, ast.Module):
            memo = scope.__dict__.setdefault("_jaxtarget_bindings", {})
            if name in memo:
                return memo[name]
        result = self._scan(scope, name)
        self._cache[key] = result
        if memo is not None:
            memo[name] = result
        return result

    def _scan(self, scope: ast.AST, name: str) -> tuple[list[Bind], bool]:
        found: list[Bind] = []
        is_global = False
        lines = self.lines_of.get(name)
        if lines is None:
            lines = self.more_lines(name) if self.more_lines is not None else []
        if isinstance(scope, FUNCTIONS):
            args = scope.args
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                if a is not None and a.arg == name:
                    found.append(Other(a.lineno))
        if isinstance(scope, _COMPREHENSIONS):
            for gen in scope.generators:
                if name in _target_names(gen.target):
                    found.append(Other(gen.target.lineno))
            return found, False
        body: list[ast.stmt] = [] if isinstance(scope, ast.Lambda) else scope.body  # type: ignore[attr-defined]
        if isinstance(scope, ast.Module):
            # the module is rebuilt per version, its statements are cached with their chunks
            for stmt in body:
                if covers(stmt, lines):
                    known = self.truth(stmt.test) if self.truth and isinstance(stmt, ast.If) else None
                    if known is not None and isinstance(stmt, ast.If):
                        # read with what other files say: not kept on the statement
                        taken = stmt.body if known else stmt.orelse
                        found.extend(_scan_nodes([s for s in taken if covers(s, lines)], name, lines)[0])
                        continue
                    memo: dict[str, list[Bind]] = stmt.__dict__.setdefault("_jaxtarget_module_bindings", {})
                    hit = memo.get(name)
                    if hit is None:
                        hit = memo[name] = _scan_nodes([stmt], name, lines)[0] + _global_imports(stmt, name)
                    found.extend(hit)
            return found, False
        more, is_global = _scan_nodes([s for s in body if covers(s, lines)], name, lines)
        found.extend(more)
        return found, is_global

    def star_imports(self) -> list[Binding]:
        if self._stars is None:
            self._stars = [
                Binding("star", node.module or "", None, None, node.level)
                for node in (ast.walk(self.tree) if self.lines_of.get("*") else ())
                if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
            ]
        return self._stars


def scopes_of(ancestors: Sequence[ast.AST], node: ast.AST, tree: ast.Module) -> list[ast.AST]:
    """Scopes in which a load at ``node`` looks names up, innermost first."""
    scopes: list[ast.AST] = []
    chain = [*ancestors, node]
    for parent, child in itertools.pairwise(chain):
        if isinstance(parent, SCOPES):
            # decorators, defaults, bases and the first comprehension iterator belong outside
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not any(
                child is s for s in parent.body
            ):
                continue
            if isinstance(parent, ast.Lambda) and child is not parent.body:
                continue
            if isinstance(parent, _COMPREHENSIONS) and parent.generators and child is parent.generators[0]:
                continue
            scopes.append(parent)
    scopes.reverse()
    # class scopes are visible only to code directly in their body
    visible = [s for i, s in enumerate(scopes) if not isinstance(s, ast.ClassDef) or i == 0]
    return [*visible, tree]


# ---------------------------------------------------------------- candidates


@dataclass
class Candidate:
    """A load of a candidate name: ``root`` is its first name, ``dotted`` the whole spelling."""

    node: ast.Name | ast.Attribute
    root: str
    dotted: str
    ancestors: list[ast.AST]
    line: int
    byte_col: int
    end_byte_col: int


def dotted_spelling(node: ast.AST) -> tuple[str, str] | None:
    """``(root, dotted)`` for a name or attribute chain (``jnp.linalg.eig``), else None."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    return node.id, ".".join(parts)


_CandidateTail = tuple[ast.Name | ast.Attribute, str, str, list[ast.AST], int, int, int]


def collect(
    tree: ast.Module, lines: Sequence[int], names: frozenset[str], name_lines: Sequence[int]
) -> Iterator[Candidate]:
    """Loads of a candidate name (terminal attribute or bare name) in the top-level
    statements spanning the sorted ``lines``.

    ``name_lines`` are the sorted lines on which any of ``names`` is spelled: inner
    statements spanning none of them hold no candidate and are not walked. Results are
    memoised on each top-level statement (its nodes are immutable and cached with its
    chunk), keyed by the candidate names.
    """
    for stmt in tree.body:
        if not covers(stmt, lines):
            continue
        memo: dict[frozenset[str], list[_CandidateTail]] = stmt.__dict__.setdefault(
            "_jaxtarget_candidates", {}
        )
        found = memo.get(names)
        if found is None:
            found = memo[names] = list(_collect_in(stmt, names, name_lines))
        for node, root, dotted, ancestors, line, col, end in found:
            yield Candidate(node, root, dotted, [tree, *ancestors], line, col, end)


def _collect_in(stmt: ast.stmt, names: frozenset[str], lines: Sequence[int]) -> Iterator[_CandidateTail]:
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(stmt, [])]
    while stack:
        node, ancestors = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        if isinstance(node, ast.stmt) and node is not stmt and not covers(node, lines):
            continue
        target: ast.Name | ast.Attribute | None = None
        if (isinstance(node, ast.Attribute) and node.attr in names) or (
            isinstance(node, ast.Name) and node.id in names
        ):
            target = node
        if target is not None and isinstance(target.ctx, ast.Load):
            spelled = dotted_spelling(target)
            end_line = target.end_lineno or target.lineno
            end_col = target.end_col_offset or 0
            terminal = target.attr if isinstance(target, ast.Attribute) else target.id
            if spelled is not None:
                start = end_col - len(terminal.encode("utf-8"))
                yield (target, spelled[0], spelled[1], ancestors, end_line, start, end_col)
            if isinstance(target, ast.Attribute):
                stack.append((target.value, [*ancestors, target]))
            continue
        child_anc = [*ancestors, node]
        for child in reversed(list(ast.iter_child_nodes(node))):
            stack.append((child, child_anc))


def import_aliases(tree: ast.Module, lines: Sequence[int], names: frozenset[str]) -> set[str]:
    """Local names that import-from statements on ``lines`` give to ``names``."""
    out: set[str] = set()
    stack: list[ast.AST] = [s for s in tree.body if covers(s, lines)]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.asname and alias.name in names:
                    out.add(alias.asname)
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) and covers(child, lines):
                stack.append(child)
    return out


# ---------------------------------------------------------------- LEGB

AMBIGUOUS = "ambiguous"


def binding_for(cand: Candidate, index: ScopeIndex, tree: ast.Module) -> Binding | str | None:
    """The import a load refers to, ``AMBIGUOUS``, or None (bound by something else)."""
    for scope in scopes_of(cand.ancestors, cand.node, tree):
        binds, is_global = index.bindings(scope, cand.root)
        if is_global:
            binds, _ = index.bindings(tree, cand.root)
            scope = tree
        if not binds:
            if scope is tree:
                stars = index.star_imports()
                if len(stars) == 1:
                    return stars[0]
                if len(stars) > 1:
                    return AMBIGUOUS
            continue
        imports = [b for b in binds if isinstance(b, Binding)]
        if not imports:
            return None
        if len(imports) == len(binds) and len({b.qualify(cand.dotted) for b in imports}) == 1:
            return imports[0]
        return AMBIGUOUS
    return None


def static_guess(cand: Candidate, index: ScopeIndex, tree: ast.Module) -> str | None:
    """What the import statements alone say an ambiguous load is, when they agree."""
    for scope in scopes_of(cand.ancestors, cand.node, tree):
        binds, _ = index.bindings(scope, cand.root)
        if binds or scope is tree:
            imports = [b for b in binds if isinstance(b, Binding)] or index.star_imports()
            names = {b.qualify(cand.dotted) for b in imports}
            if len(names) == 1:
                (name,) = names
                return name
            return None
    return None
