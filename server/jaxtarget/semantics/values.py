"""What a name holds, where Python's scope rules make it certain: for guards and argument conditions.

``value_of`` finds the one assignment that binds a name in the innermost scope
that binds it (a local variable, a module constant); ``returned_by`` reads a
small function whose body returns one expression (a predicate such as
``def has_gpu(): return jax.default_backend() == "gpu"``). Anything less
certain (several assignments, a parameter, a loop target, a name bound in code
not parsed) is ``None``: unknown.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterable, Iterator, Sequence

from .scopes import FUNCTIONS, SCOPES, declared_globals, declared_nonlocals

_FUNCTIONS = FUNCTIONS
#: nodes that open a scope of their own
_NESTED = SCOPES

Found = tuple[ast.expr, list[ast.AST]]
_UNKNOWN = object()


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of ``scope``'s body that belong to it (nested scopes' bodies left out)."""
    body: list[ast.AST] = [scope.body] if isinstance(scope, ast.Lambda) else list(getattr(scope, "body", []))
    return _walk_own(body)


def _walk_own(roots: list[ast.AST]) -> Iterator[ast.AST]:
    """``roots`` and their descendants in the same scope (a nested def or class is yielded, not entered)."""
    stack = roots[::-1]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, _NESTED):
            continue
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


def _params(scope: ast.AST) -> set[str]:
    if not isinstance(scope, _FUNCTIONS):
        return set()
    a = scope.args
    return {p.arg for p in (*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg) if p is not None}


def keyword_value(call: ast.Call, name: str) -> ast.expr | None:
    """The value a call passes as ``name=`` (None: not passed so)."""
    return next((k.value for k in call.keywords if k.arg == name), None)


def call_arg(call: ast.Call, index: int, name: str) -> ast.expr | None:
    """The argument a call passes at position ``index`` or as ``name=``."""
    return call.args[index] if len(call.args) > index else keyword_value(call, name)


def positional_params(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """The names of a function's parameters that take positional arguments, in order."""
    return [a.arg for a in (*func.args.posonlyargs, *func.args.args)]


#: name -> (the nodes binding it, whether some binding is not one certain value)
_Bindings = dict[str, tuple[list[ast.AST], bool]]


def _index_bindings(nodes: Iterable[ast.AST]) -> _Bindings:
    """Every name bound among ``nodes``, with the nodes binding it and whether some binding
    is not one certain value (a loop target, an import...): one walk answers every name."""
    found: dict[str, list[ast.AST]] = {}
    unsure: set[str] = set()
    own: set[int] = set()
    for node in nodes:
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in dict.fromkeys(node.names):
                found.setdefault(name, []).append(node)
                if isinstance(node, ast.Nonlocal):
                    unsure.add(name)
        elif isinstance(node, ast.Assign):
            for t in node.targets:
                if isinstance(t, ast.Name):
                    found.setdefault(t.id, []).append(node)
                    own.add(id(t))
                elif (names := _unpacked_names(t)) is not None:
                    # `pl, plt = _modules()`: one value when the call's function returns one tuple
                    for name in dict.fromkeys(names):
                        found.setdefault(name, []).append(node)
                    own.update(id(e) for e in ast.walk(t))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            found.setdefault(node.target.id, []).append(node)
            own.add(id(node.target))
            if node.value is None or isinstance(node, ast.AugAssign):
                unsure.add(node.target.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.setdefault(node.name, []).append(node)
        elif (
            isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)) and id(node) not in own
        ):
            # loop targets, with-as, walrus, tuple unpacking: not one certain value
            unsure.add(node.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            unsure.update(a.asname or a.name.split(".")[0] for a in node.names)
    return {name: (found.get(name, []), name in unsure) for name in (*found, *unsure)}


def _bindings_of(holder: ast.AST, key: str, nodes: Callable[[], Iterable[ast.AST]]) -> _Bindings:
    """The bindings in a statement (key ``stmt``) or a scope's body (``body``), walked once
    and kept on its node."""
    memo: dict[str, _Bindings] = holder.__dict__.setdefault("_jaxtarget_bound", {})
    found = memo.get(key)
    if found is None:
        found = memo[key] = _index_bindings(nodes())
    return found


def _bindings_in(
    holder: ast.AST, key: str, nodes: Callable[[], Iterable[ast.AST]], name: str
) -> tuple[list[ast.AST], bool]:
    """The nodes binding ``name`` in ``holder`` (see _bindings_of), and whether some binding is unsure."""
    found, unsure = _bindings_of(holder, key, nodes).get(name, ((), False))
    return list(found), unsure


def _unpacked_names(target: ast.expr) -> list[str] | None:
    """The names a flat tuple or list target binds, in order (``a, b = ...``); None for other targets."""
    if isinstance(target, (ast.Tuple, ast.List)) and all(isinstance(e, ast.Name) for e in target.elts):
        return [e.id for e in target.elts if isinstance(e, ast.Name)]
    return None


def _is_none_assignment(node: ast.AST) -> bool:
    return isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and node.value.value is None


def _statement_binds(stmt: ast.stmt) -> Iterable[str]:
    """The names a top-level statement may bind at module scope (its own nodes)."""
    return _bindings_of(stmt, "stmt", lambda: _walk_own([stmt])).keys()


#: the values a literal constant is read as
LITERALS = (str, int, float, bool, type(None))


def module_assigned(body: list[ast.stmt]) -> dict[str, ast.expr]:
    """The names that one statement of ``body`` (a module's top level) binds, by an
    assignment to that name alone, and no other statement of it binds: each with the value
    assigned (a function that declares the name ``global`` binds it too)."""
    assigned: dict[str, ast.expr] = {}
    seen: set[str] = set()
    for stmt in body:
        names = set(_statement_binds(stmt)) | declared_globals(stmt)
        value = stmt.value if isinstance(stmt, (ast.Assign, ast.AnnAssign)) else None
        for name in names:
            if name in seen:
                assigned.pop(name, None)
                continue
            seen.add(name)
            if len(names) == 1 and value is not None:
                assigned[name] = value
    return assigned


def module_constants(body: list[ast.stmt]) -> dict[str, object]:
    """The names that one statement of ``body`` (a module's top level) binds, to a literal
    (a str, number, bool or None) and no other statement of it binds (``which_device =
    "cpu"``, ``USE_JAX: bool = True``; a function that declares the name ``global`` binds it
    too)."""
    return {
        name: value.value
        for name, value in module_assigned(body).items()
        if isinstance(value, ast.Constant) and isinstance(value.value, LITERALS)
    }


def _module_bindings_in(stmt: ast.stmt, name: str) -> tuple[list[ast.AST], bool]:
    """Module-scope bindings of ``name`` by a top-level statement (with `global` ones in its functions).

    A bare annotation (``jsp: Any``) binds nothing. An assignment in a function that
    declares the name ``global`` keeps that function's chain (``_jaxtarget_scope``), so
    that its value is read where it is computed (``jsp = libjax.scipy`` after ``import jax``).
    """
    if isinstance(stmt, ast.AnnAssign) and stmt.value is None:
        return [], False
    globals_here = declared_globals(stmt)
    if name not in globals_here and name not in _statement_binds(stmt):
        return [], False
    found, unsure = _bindings_in(stmt, "stmt", lambda: _walk_own([stmt]), name)
    if name in globals_here:
        for func, above in _scopes_of(stmt):
            if any(isinstance(g, ast.Global) and name in g.names for g in _own_nodes(func)):
                more, more_unsure = _bindings_in(func, "body", functools.partial(_own_nodes, func), name)
                for n in more:
                    if not isinstance(n, ast.Global):
                        n.__dict__["_jaxtarget_scope"] = [*above, func]
                        found.append(n)
                unsure = unsure or more_unsure
    return found, unsure


def _scopes_of(stmt: ast.stmt) -> Iterator[tuple[ast.AST, list[ast.AST]]]:
    """The functions inside a top-level statement, each with the defs and classes from ``stmt`` down."""
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(stmt, [])]
    while stack:
        node, above = stack.pop()
        if isinstance(node, _FUNCTIONS):
            yield node, above
        here = [*above, node]
        stack.extend((c, here) for c in _walk_own(list(ast.iter_child_nodes(node))) if isinstance(c, _NESTED))


def _scope_chain(tree: ast.Module, node: ast.AST) -> list[ast.AST]:
    """The chain a module-scope binding is read in: its function's, for one made through ``global``."""
    return [tree, *node.__dict__.get("_jaxtarget_scope", ())]


def body_statements(func: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.stmt]:
    """A function's statements after its docstring."""
    body = func.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        return body[1:]
    return body


class Values:
    """Single assignments and one-expression functions of one (parsed) module."""

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self._bindings: dict[tuple[int, str], object] = {}
        self._binders: dict[int, dict[str, list[ast.stmt]]] = {}

    def _statements_binding(self, module: ast.Module, name: str) -> list[ast.stmt]:
        """The top-level statements of ``module`` that may bind ``name`` (an index built once)."""
        index = self._binders.get(id(module))
        if index is None:
            index = self._binders[id(module)] = {}
            for stmt in module.body:
                for bound in {*_statement_binds(stmt), *declared_globals(stmt)}:
                    index.setdefault(bound, []).append(stmt)
        return index.get(name, [])

    def _binding(self, scope: ast.AST, name: str) -> object:
        """The one node binding ``name`` in ``scope`` (Assign or def), None if none, _UNKNOWN if unsure."""
        key = (id(scope), name)
        if key in self._bindings:
            return self._bindings[key]
        if isinstance(scope, ast.Module):
            # the module is rebuilt per version; its statements are cached with their chunks
            found: list[ast.AST] = []
            unsure = False
            for stmt in self._statements_binding(scope, name):
                memo: dict[str, tuple[list[ast.AST], bool]] = stmt.__dict__.setdefault(
                    "_jaxtarget_values", {}
                )
                hit = memo.get(name)
                if hit is None:
                    hit = memo[name] = _module_bindings_in(stmt, name)
                found.extend(hit[0])
                unsure = unsure or hit[1]
            # `X = None` at module level, set once later by a function declaring `global X`
            if len(found) > 1 and not unsure:
                real = [n for n in found if not _is_none_assignment(n)]
                found = real if len(real) == 1 else found
        else:
            memo = scope.__dict__.setdefault("_jaxtarget_values", {})
            if name not in memo:
                params = _params(scope)
                found, unsure = _bindings_in(scope, "body", lambda: _own_nodes(scope), name)
                unsure = unsure or name in params
                # a function inside that declares it `nonlocal` may bind it too (read only
                # where it would decide: one binding found)
                memo[name] = (found, unsure or (len(found) == 1 and name in declared_nonlocals(scope)))
            found, unsure = memo[name]
            declared: list[ast.AST] = [n for n in found if isinstance(n, ast.Global)]
            if declared and not unsure:
                # `global X` here: its assignments bind the module's X, read there
                found = declared[:1]
        result: object = _UNKNOWN if unsure or len(found) > 1 else (found[0] if found else None)
        self._bindings[key] = result
        return result

    def _lookup(self, name: str, chain: Sequence[ast.AST]) -> tuple[ast.AST, list[ast.AST]] | None:
        """The binding of ``name`` seen from the end of ``chain`` (LEGB; class bodies skipped)."""
        scopes = [i for i, n in enumerate(chain) if isinstance(n, (*_FUNCTIONS, ast.Module))]
        for i in reversed(scopes):
            # the module in a chain may be an older sparse view: use this version's
            scope = self.tree if isinstance(chain[i], ast.Module) else chain[i]
            hit = self._binding(scope, name)
            if hit is _UNKNOWN:
                return None
            if isinstance(hit, (ast.Global,)):
                hit = self._binding(self.tree, name)
                if isinstance(hit, ast.AST) and hit is not _UNKNOWN:
                    return hit, _scope_chain(self.tree, hit)
                return None
            if isinstance(hit, ast.AST):
                return hit, _scope_chain(self.tree, hit) if scope is self.tree else list(chain[: i + 1])
        if not scopes or chain[scopes[0]] is not self.tree:
            hit = self._binding(self.tree, name)
            if isinstance(hit, ast.AST) and not isinstance(hit, ast.Global):
                return hit, _scope_chain(self.tree, hit)
        return None

    def bound_locally(self, name: str, chain: Sequence[ast.AST]) -> bool:
        """Whether a function around the end of ``chain`` binds ``name`` (so no module statement does)."""
        return any(isinstance(n, _FUNCTIONS) and self._binding(n, name) is not None for n in chain)

    def lookup(self, name: str, chain: Sequence[ast.AST]) -> tuple[ast.AST, list[ast.AST]] | None:
        """The one node binding ``name`` seen from the end of ``chain`` (an assignment or a def)."""
        return self._lookup(name, chain)

    def value_of(self, name: ast.Name, chain: Sequence[ast.AST]) -> Found | None:
        """The expression ``name`` was assigned, when one assignment binds it."""
        found = self._lookup(name.id, chain)
        if found is None:
            return None
        node, where = found
        if isinstance(node, ast.Assign) and not any(
            isinstance(t, ast.Name) and t.id == name.id for t in node.targets
        ):
            names = next((n for t in node.targets if name.id in (n := _unpacked_names(t) or [])), None)
            return self._unpacked(node.value, names, names.index(name.id), where) if names else None
        if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
            return node.value, where
        return None

    def _unpacked(self, value: ast.expr, names: list[str], at: int, where: Sequence[ast.AST]) -> Found | None:
        """The element ``at`` of what ``a, b = ...`` unpacks: a tuple or list that long
        (``lax, la = jax.lax, jnp.linalg``), or a call of a function of this module whose one
        ``return`` gives one (``pl, plt = _modules()``), its element one of that function's
        own locals (``pl`` of ``from jax.experimental import pallas as pl``). An element
        that reads a name being bound (``a, b = b, a``) is unknown."""
        if isinstance(value, (ast.Tuple, ast.List)):
            return self._element(value.elts, names, at, None, list(where))
        if not isinstance(value, ast.Call):
            return None
        found = self.function(value.func, where)
        if found is None:
            return None
        func, chain = found
        returns = [n for n in _own_nodes(func) if isinstance(n, ast.Return)]
        if len(returns) != 1 or not isinstance(returns[0].value, (ast.Tuple, ast.List)):
            return None
        return self._element(returns[0].value.elts, names, at, func, chain)

    def _element(
        self, elts: list[ast.expr], names: list[str], at: int, func: ast.AST | None, chain: list[ast.AST]
    ) -> Found | None:
        if len(elts) != len(names) or any(isinstance(e, ast.Starred) for e in elts):
            return None
        elt = elts[at]
        if func is not None and isinstance(elt, ast.Name):
            return (elt, chain) if self._binding(func, elt.id) is not None else None
        if any(isinstance(n, ast.Name) and n.id in names for n in ast.walk(elt)):
            return None
        return elt, chain

    def function(
        self, func: ast.expr, chain: Sequence[ast.AST]
    ) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, list[ast.AST]] | None:
        """The def a call of ``f`` or ``self.f`` runs, with the chain its body is read in."""
        node: ast.AST | None = None
        where: list[ast.AST] = []
        if isinstance(func, ast.Name):
            found = self._lookup(func.id, chain)
            if found is not None:
                node, where = found
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            cls = next((n for n in reversed(chain) if isinstance(n, ast.ClassDef)), None)
            if cls is not None:
                methods = [s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == func.attr]
                if len(methods) == 1:
                    node, where = methods[0], [*chain[: chain.index(cls) + 1]]
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        return node, [*where, node]

    def returned_by(self, func: ast.expr, chain: Sequence[ast.AST]) -> Found | None:
        """The expression a one-statement function returns (``f`` or ``self.f``)."""
        found = self.function(func, chain)
        if found is None:
            return None
        body = body_statements(found[0])
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            return body[0].value, found[1]
        return None

    def class_named(self, name: ast.Name) -> ast.ClassDef | None:
        hit = self._binding(self.tree, name.id)
        return hit if isinstance(hit, ast.ClassDef) else None
