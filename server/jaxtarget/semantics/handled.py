"""Which failures a use's surroundings handle: ``try``/``except`` around it.

- ``caught``: inside a ``try`` whose handler catches a trace-time error (and does not
  re-raise), also a lambda jitted into a local variable only called inside one;
- ``compiled_caught``: compiled right there (``jax.jit(api)(...)``) inside a ``try`` that
  catches the lowering error;
- ``eagerly_caught``: called eagerly inside such a ``try`` (in its body, or in a local function
  or lambda used only there), in a function nothing in the module stages;
- ``absence_caught``: inside a ``try`` that catches what using an API the installed jax
  lacks raises (``TypeError`` for a keyword, ``AttributeError`` for a name): a version fallback.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Sequence

from .conditions import DEFS
from .guards import Guards
from .module_uses import ModuleUses
from .passing import JIT, PARTIAL, assigned_name, innermost_def, local_loads
from .vocabulary import ABSENCE_CATCHERS, LOWERING_CATCHERS, TRACE_CATCHERS, catches

#: how many callers up a function is followed to see whether something stages it
_STAGED_DEPTH = 4


def caught(ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    """Inside a ``try`` body whose handler catches what a trace-time check raises (and does not re-raise).

    Also a lambda jitted into a local variable that is only called inside such a ``try``.
    """
    if _in_catching_try([*ancestors, node]):
        return True
    for k in range(len(ancestors) - 1, 0, -1):
        if isinstance(ancestors[k], ast.Lambda):
            call, holder = ancestors[k - 1], ancestors[k - 2] if k >= 2 else None
            if not (isinstance(call, ast.Call) and call.args and call.args[0] is ancestors[k]):
                return False
            variable = assigned_name(holder, call)
            loads = local_loads(ancestors[: k - 1], variable) if variable else None
            return bool(loads) and all(
                isinstance(above[-1], ast.Call)
                and above[-1].func is load
                and _in_catching_try([*above, load])
                for load, above in loads or []
            )
    return False


def absence_caught(ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    """Inside a ``try`` body whose handler catches a missing keyword or name (and does not re-raise)."""
    return _in_catching_try([*ancestors, node], ABSENCE_CATCHERS)


def _in_catching_try(chain: Sequence[ast.AST], kinds: frozenset[str] = TRACE_CATCHERS) -> bool:
    for parent, child in itertools.pairwise(chain):
        # ast.Try, and ast.TryStar on Python 3.11+
        if type(parent).__name__ in ("Try", "TryStar") and any(
            c is child for c in getattr(parent, "body", ())
        ):
            handlers: list[ast.ExceptHandler] = getattr(parent, "handlers", [])
            for handler in handlers:
                if catches(handler.type, kinds) and not (
                    handler.body and isinstance(handler.body[-1], ast.Raise) and handler.body[-1].exc is None
                ):
                    return True
    return False


def compiled_caught(g: Guards, ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    """``jax.jit(api)(...)`` or ``jax.jit(api).lower(...)`` inside a ``try`` that catches the lowering error.

    The call compiles right there, so a failed lowering is raised inside the ``try`` (a
    plain call may be traced by an outer ``jit`` and lowered after the ``try`` is left).
    """
    if len(ancestors) < 2:
        return False
    jit, outer = ancestors[-1], ancestors[-2]
    if not (isinstance(jit, ast.Call) and jit.args and jit.args[0] is node and g.callee(jit) == JIT):
        return False
    now = (isinstance(outer, ast.Call) and outer.func is jit) or (
        isinstance(outer, ast.Attribute) and outer.value is jit and outer.attr == "lower"
    )
    return now and _in_catching_try([*ancestors, node], LOWERING_CATCHERS)


def eagerly_caught(module: ModuleUses, ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    """A plain call, run eagerly inside a ``try`` that catches the lowering error.

    Called eagerly, an API is dispatched, lowered and compiled where it is called, so the
    ``try`` sees its lowering error. The call is in the ``try``'s body, or in a local
    function or lambda only used there (called, or handed to a call such as a
    finite-difference check); and nothing in the module stages the function holding the
    ``try`` (a ``jax`` decorator such as ``@jax.jit``, its name handed to anything, a caller
    that is itself staged), since then the ``try`` runs while tracing and the lowering comes
    after it is left. A method is read through every ``.name`` the module loads (``self.step(...)``
    called by a staged method, ``jax.jit(obj.step)``); a dunder such as ``__call__`` is run by
    whatever calls the object, so it is read as staged. And the
    function shows it runs on the host: it turns arrays into host values (``np.asarray(x)``,
    ``float(x)``, ``x.item()``), which no traced function can; a library function without such
    code (a ``dot_general`` a model calls under its own ``jit``) may be traced by a caller
    elsewhere.
    """
    parent = ancestors[-1] if ancestors else None
    if not (isinstance(parent, ast.Call) and parent.func is node):
        return False
    chain = [*ancestors, node]
    inner = _innermost_function(chain)
    if _in_catching_try(chain[(inner or 0) :], LOWERING_CATCHERS):
        holding = chain[: inner + 1] if inner is not None else []
        return _on_host(module.guards.tree, holding) and not _staged(module, holding, frozenset())
    if inner is None or _innermost_function(chain[:inner]) is None:
        return False
    holder = chain[:inner]
    function = chain[inner]
    if isinstance(function, ast.Lambda):
        # `check(lambda x: api(x), x)` in the try, or a lambda kept in a name used only there
        variable = assigned_name(holder[-1], function)
        sites = local_loads(holder, variable) if variable else [(function, list(holder))]
    else:
        assert isinstance(function, DEFS)
        sites = local_loads(holder, function.name)
    outer = _innermost_function(holder)
    return (
        outer is not None
        and bool(sites)
        and all(
            _run_in_place(module.guards, site, above)
            and _in_catching_try([*above[outer:], site], LOWERING_CATCHERS)
            for site, above in sites or []
        )
        and _on_host(module.guards.tree, holder[: outer + 1])
        and not _staged(module, holder[: outer + 1], frozenset())
    )


def _run_in_place(g: Guards, site: ast.AST, above: Sequence[ast.AST]) -> bool:
    """Whether the function at ``site`` runs where it is used: called, handed to a call, or to
    a JAX transform whose result is called right there (``jax.grad(f)(x)``); a transform's
    result kept in a name may be called after the ``try`` is left."""
    # the call is above the site, or above its keyword
    at = len(above) - (2 if above and isinstance(above[-1], ast.keyword) else 1)
    call = above[at] if at >= 0 else None
    if not isinstance(call, ast.Call):
        return False
    if call.func is site or not (g.callee(call) or "").startswith("jax."):
        return True
    outer = above[at - 1] if at > 0 else None
    return isinstance(outer, ast.Call) and outer.func is call


#: builtins and methods that need a concrete value
_HOST_BUILTINS = frozenset({"float", "int", "bool", "complex"})
_HOST_METHODS = frozenset({"item", "tolist", "block_until_ready"})
#: what a value's static parts are read through (fine under ``jit``)
_STATIC_ATTRS = frozenset({"shape", "ndim", "dtype", "size"})


def _on_host(tree: ast.Module, chain: Sequence[ast.AST]) -> bool:
    """Whether the function ending ``chain`` turns a value into a host one (module level: yes):
    a numpy call, ``float``/``int``/``bool``, ``.item()`` or ``.tolist()`` of something that is
    not a constant or a static attribute (``np.prod(x.shape)`` is fine under ``jit``)."""
    if not chain:
        return True
    function = chain[-1]
    numpy = {
        a.asname or a.name
        for s in tree.body
        if isinstance(s, ast.Import)
        for a in s.names
        if a.name == "numpy"
    }
    stack: list[ast.AST] = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        if isinstance(node, (*DEFS, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(node))
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in _HOST_METHODS:
            if _dynamic(func.value):
                return True
        elif (
            (isinstance(func, ast.Name) and func.id in _HOST_BUILTINS)
            or (
                isinstance(func, ast.Attribute)
                and isinstance(func.value, ast.Name)
                and func.value.id in numpy
            )
        ) and any(_dynamic(a) for a in node.args):
            return True
    return False


def _dynamic(node: ast.expr) -> bool:
    """Whether ``node`` reads a variable's value, not only constants or static attributes."""
    if isinstance(node, ast.Attribute) and node.attr in _STATIC_ATTRS:
        return False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "len":
        return False
    if isinstance(node, ast.Name):
        return isinstance(node.ctx, ast.Load)
    return any(_dynamic(c) for c in ast.iter_child_nodes(node) if isinstance(c, ast.expr))


def _innermost_function(chain: Sequence[ast.AST]) -> int | None:
    """The index of the last function or lambda in ``chain`` (None: none)."""
    return innermost_def(chain, kinds=(*DEFS, ast.Lambda))


def _staged(module: ModuleUses, chain: Sequence[ast.AST], seen: frozenset[int], depth: int = 0) -> bool:
    """Whether the function ending ``chain`` may be traced by a transform (empty chain: module level)."""
    if not chain:
        return False
    function = chain[-1]
    if not isinstance(function, DEFS) or id(function) in seen or depth > _STAGED_DEPTH:
        return True
    g = module.guards
    for decorator in function.decorator_list:
        name = g.callee(decorator) if isinstance(decorator, ast.Call) else g.resolved.get(id(decorator))
        if name is not None and (name.startswith("jax.") or name == PARTIAL):
            return True
    holder = chain[-2] if len(chain) > 1 else None
    sites: Sequence[tuple[ast.expr, list[ast.AST]]]
    if isinstance(holder, ast.Module):
        sites = module.uses_of(function.name)
    elif innermost_def(chain[:-1]) is not None:
        sites = local_loads(chain[:-1], function.name) or []
    elif isinstance(holder, ast.ClassDef) and not function.name.startswith("__"):
        # a method, through every `.name` the module reads (`self.step(...)`, `jax.jit(obj.step)`);
        # a dunder (`__call__`) is run by whatever calls the object, a transform as likely as not
        sites = module.attribute_uses_of(function.name)
    else:
        return True
    seen = seen | {id(function)}
    for site, above in sites:
        call = above[-1] if above else None
        if not (isinstance(call, ast.Call) and call.func is site):
            return True  # handed on: to `jax.jit`, for all the module shows
        caller = innermost_def(above)
        if _staged(module, above[: caller + 1] if caller is not None else [], seen, depth + 1):
            return True
    return False
