"""Which functions of a module visibly run under a given wrapper (such as ``shard_map``).

A function runs under a wrapper when it is decorated with it, passed to it
(directly, by name, as ``f=``/``fun=`` or through ``functools.partial``), is a
lambda passed to it, or is called by name from a function that runs under it.
The wrapper is recognised by what its loads resolved to, never by its name.
"""

from __future__ import annotations

import ast
import itertools
import re
from collections.abc import Sequence, Set

from .scopes import covers
from .source import SourceView
from .text import Lines, lines_where, lines_with_words
from .vocabulary import terminal

#: how many names a wrapper may pass through (``smap = jax.shard_map``; ``f = smap``)
_ALIAS_ROUNDS = 3


def _mentions(node: ast.AST, wrappers: Set[int]) -> bool:
    return any(id(sub) in wrappers for sub in ast.walk(node))


def _called_or_passed(root: ast.AST) -> set[str]:
    """Names of functions ``root`` calls, or passes to a call (``lax.fori_loop(0, n, body, x)``)."""
    out: set[str] = set()
    for sub in ast.walk(root):
        if isinstance(sub, ast.Call):
            if isinstance(sub.func, ast.Name):
                out.add(sub.func.id)
            out.update(a.id for a in sub.args if isinstance(a, ast.Name))
            out.update(k.value.id for k in sub.keywords if isinstance(k.value, ast.Name))
    return out


class WrappedFunctions:
    """Functions visibly run under the wrapper whose resolved loads are ``wrappers``."""

    def __init__(self, view: SourceView, text: Lines, wrappers: Set[int]) -> None:
        self.view = view
        self.text = text
        self.wrappers = wrappers
        self._nodes: set[int] | None = None

    def covers(self, ancestors: list[ast.AST], node: ast.AST) -> bool:
        """Whether code at ``node`` (under ``ancestors``) runs under the wrapper."""
        if not self.wrappers:
            return False
        if self.encloses(ancestors, node):
            return True
        nodes = self._wrapped()
        return any(id(a) in nodes for a in ancestors)

    def encloses(self, ancestors: list[ast.AST], node: ast.AST) -> bool:
        """Whether a decorator or a wrapping call of a lambda around ``node`` is the wrapper."""
        for parent, child in itertools.pairwise([*ancestors, node]):
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                _mentions(d, self.wrappers) for d in parent.decorator_list
            ):
                return True
            if (
                isinstance(child, ast.Lambda)
                and isinstance(parent, ast.Call)
                and parent.args
                and parent.args[0] is child
                and _mentions(parent.func, self.wrappers)
            ):
                return True
        return False

    def _wrapped(self) -> set[int]:
        if self._nodes is not None:
            return self._nodes
        nodes: set[int] = set()
        passed: set[str] = set()
        roots: list[ast.AST] = []
        for node in ast.walk(self.view.module()):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(_mentions(d, self.wrappers) for d in node.decorator_list):
                    nodes.add(id(node))
                    roots.append(node)
            elif isinstance(node, ast.Call) and _mentions(node.func, self.wrappers):
                target = node.args[0] if node.args else None
                for kw in node.keywords:
                    if kw.arg in ("f", "fun"):
                        target = kw.value
                if isinstance(target, ast.Call) and terminal(target.func) == "partial" and target.args:
                    target = target.args[0]
                if isinstance(target, ast.Name):
                    passed.add(target.id)
                elif isinstance(target, ast.Lambda):
                    nodes.add(id(target))
                    roots.append(target)
        # a name passed to the wrapper may hold `partial(body, ...)`: the body runs under it
        if passed:
            alternatives = "|".join(re.escape(n) for n in sorted(passed))
            assigned = re.compile(rf"^[ \t]*(?:{alternatives})[ \t]*=")
            self.view.ensure(lines_where(self.text, passed, assigned))
        for node in ast.walk(self.view.module()):
            if not (isinstance(node, ast.Assign) and isinstance(node.value, ast.Call)):
                continue
            names = {t.id for t in node.targets if isinstance(t, ast.Name)}
            call = node.value
            first = call.args[0] if call.args else None
            if names & passed and terminal(call.func) == "partial" and isinstance(first, ast.Name):
                passed.add(first.id)
        # functions passed to the wrapper, and the functions they call or pass on
        # (lax.scan, fori_loop, cond bodies), run under it
        wanted = set(passed) | {name for root in roots for name in _called_or_passed(root)}
        seen: set[str] = set()
        while wanted - seen:
            new = wanted - seen
            seen |= new
            pattern = re.compile(rf"\bdef\s+(?:{'|'.join(re.escape(n) for n in sorted(new))})\b")
            self.view.ensure(lines_where(self.text, new, pattern))
            for node in ast.walk(self.view.module()):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in new:
                    nodes.add(id(node))
                    wanted.update(_called_or_passed(node))
        self._nodes = nodes
        return nodes


def _is_wrapper(value: ast.expr, ids: Set[int]) -> bool:
    """``jax.shard_map`` or ``partial(jax.shard_map, ...)``, where that load is a wrapper's."""
    if isinstance(value, ast.Call) and terminal(value.func) == "partial" and value.args:
        value = value.args[0]
    return id(value) in ids


def _statements_on(tree: ast.Module, lines: Sequence[int]) -> list[ast.stmt]:
    """The top-level statements spanning any of ``lines``."""
    return [stmt for stmt in tree.body if covers(stmt, lines)]


def _wrapper_assignments(stmts: Sequence[ast.stmt], ids: Set[int]) -> list[ast.Assign]:
    """The assignments of a wrapper or of a ``partial`` of one in ``stmts``."""
    return [n for s in stmts for n in ast.walk(s) if isinstance(n, ast.Assign) and _is_wrapper(n.value, ids)]


def _alias_loads(stmts: Sequence[ast.stmt], ids: Set[int], names: Set[str]) -> set[int]:
    """The loads of ``names`` whose every binding in ``stmts`` (all that spell them) holds a
    wrapper: assignments of one or of a ``partial`` of one, and imports (``shard_map =
    partial(shard_map, ...)`` reads the imported one). A name also bound any other way is
    left out."""
    fine = {id(t) for n in _wrapper_assignments(stmts, ids) for t in n.targets}
    other: set[str] = set()
    loads: list[ast.Name] = []
    for node in (n for s in stmts for n in ast.walk(s)):
        if isinstance(node, ast.Name) and node.id in names:
            if isinstance(node.ctx, ast.Load):
                loads.append(node)
            elif id(node) not in fine:
                other.add(node.id)
        elif isinstance(node, ast.arg) and node.arg in names:
            other.add(node.arg)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name in names:
            other.add(node.name)
    return {id(n) for n in loads if n.id not in other}


#: a line that may bind a name to a wrapper: an assignment, or an argument continued from one
_ASSIGNED = re.compile(r"^[ \t]*\w+[ \t]*=[^=]|^[ \t]*[\w.]+[ \t]*,")


def with_aliases(
    view: SourceView, text: Lines, ids: set[int], words: Set[str], chunks: Set[int] | None
) -> set[int]:
    """The loads ``ids`` resolved to a wrapper (spelled with one of ``words``), with the loads
    of names only ever bound to one or to a ``partial`` of one (``smap = jax.shard_map``,
    ``shard_map = partial(shard_map, ...)``); with ``chunks``, only in those statements."""
    seen: set[str] = set()
    spelled = set(words)
    for _ in range(_ALIAS_ROUNDS):
        assigned = lines_where(text, spelled, _ASSIGNED)
        if not assigned:
            break
        bound = _wrapper_assignments(_statements_on(view.module(), assigned), ids)
        names = {t.id for n in bound for t in n.targets if isinstance(t, ast.Name)}
        if names <= seen:
            break
        seen |= names
        spelled = names
        spelling = [
            ln for ln in lines_with_words(text, names) if chunks is None or view.chunk_index(ln) in chunks
        ]
        view.ensure(spelling)
        ids = ids | _alias_loads(_statements_on(view.module(), spelling), ids, names)
    return ids
