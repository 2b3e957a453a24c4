"""Code that is traced but never lowered: handed only to ``jax.make_jaxpr``/``jax.eval_shape``.

A kernel ``pallas_call`` builds, a lambda or a local function is read as only traced when
every way it is used hands it to a tracer: directly, through a local name, through a
transform that is itself only traced, a local function only handed to tracers, or a
function of the module or of the project that only traces its parameter.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from .guards import Guards
from .passing import PARTIAL, TRACE_ONLY, TRANSFORMS, assigned_name, innermost_def, local_loads
from .predicates import only_traces, project_traces, static_callee


def _traced_by(g: Guards, call: ast.Call, where: Sequence[ast.AST]) -> bool:
    """Whether ``call`` (given a function first) only traces it: make_jaxpr/eval_shape, through transforms."""
    name = g.callee(call)
    if name in TRACE_ONLY:
        return True
    if name not in TRANSFORMS and name != PARTIAL:
        return False
    parent = where[-1] if where else None
    if isinstance(parent, ast.Attribute) and parent.value is call and parent.attr == "trace":
        # `jax.jit(f).trace(x)`, not followed by `.lower()`
        traced = where[-2] if len(where) > 1 else None
        after = where[-3] if len(where) > 2 else None
        lowered = isinstance(after, ast.Attribute) and after.attr == "lower"
        return isinstance(traced, ast.Call) and traced.func is parent and not lowered
    # `step = jax.jit(...)` used only as `step.trace(x)` (never `.lower()`ed or called)
    variable = assigned_name(parent, call)
    if variable is not None:
        loads = local_loads(where, variable)
        return bool(loads) and all(
            isinstance(above[-1], ast.Attribute)
            and above[-1].attr == "trace"
            and not (len(above) > 2 and isinstance(above[-3], ast.Attribute) and above[-3].attr == "lower")
            for _, above in loads or []
        )
    # the transformed function is itself only traced: `jax.make_jaxpr(jax.shard_map(body, ...))(x)`
    return (
        isinstance(parent, ast.Call)
        and bool(parent.args)
        and parent.args[0] is call
        and _traced_by(g, parent, where[:-1])
    )


def _passed_roles(chain: Sequence[ast.AST]) -> list[tuple[ast.Call, int | str, list[ast.AST]]] | None:
    """The calls a nested function (``chain[-1]``) is passed to in its scope, with their ancestors
    (None: it is not nested, or its name is also used otherwise)."""
    func = chain[-1]
    assert isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef))
    scope_at = innermost_def(chain[:-1])
    if scope_at is None:
        return None
    roles: list[tuple[ast.Call, int | str, list[ast.AST]]] = []
    for load, above in local_loads(chain[: scope_at + 1], func.name) or []:
        parent = above[-1] if above else None
        if isinstance(parent, ast.Call) and any(a is load for a in parent.args):
            roles.extend((parent, k, above[:-1]) for k, a in enumerate(parent.args) if a is load)
        elif (
            isinstance(parent, ast.keyword)
            and parent.arg
            and len(above) > 1
            and isinstance(above[-2], ast.Call)
        ):
            roles.append((above[-2], parent.arg, above[:-2]))
        else:
            return None
    return roles or None


def _hands_to_tracer(g: Guards, call: ast.Call, position: int, where: Sequence[ast.AST]) -> bool:
    """Whether ``call`` only traces what it is given at ``position``: ``jax.make_jaxpr(f)``, or a
    function of this module or of the project that hands that parameter only to such a call
    (``def trace(fn, *args): return jax.make_jaxpr(fn)(*args)``)."""
    if position == 0 and _traced_by(g, call, where):
        return True
    if isinstance(call.func, ast.Name):
        found = g.values.function(call.func, where)
        if found is not None:
            tree = g.tree
            return only_traces(found[0], position, lambda c: g.callee(c) or static_callee(tree, c))
    root = call.func
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or g.values.bound_locally(root.id, where):
        return False
    # a function of another project module: `trace(f)`, `palladium.trace(f)`
    return project_traces(g.path, g.tree, call.func, position)


def _built_traced_only(g: Guards, built: ast.Call, where: Sequence[ast.AST]) -> bool:
    """What an API call builds (``pl.pallas_call(kernel, ...)``, a function) is only traced:
    handed straight to a tracer, or stored in a local name only handed to tracers."""
    holder = where[-1] if where else None
    if isinstance(holder, ast.Call):
        at = next((i for i, a in enumerate(holder.args) if a is built), None)
        return at is not None and _hands_to_tracer(g, holder, at, where[:-1])
    variable = assigned_name(holder, built)
    loads = local_loads(where, variable) if variable is not None else None
    if not loads:
        return False
    for load, above in loads:
        call = above[-1] if above else None
        if not isinstance(call, ast.Call):
            return False
        if call.func is load and _in_traced_function(g, above, where):
            continue  # `f(x)` inside a local function that is itself only traced
        at = next((i for i, a in enumerate(call.args) if a is load), None)
        if at is None or not _hands_to_tracer(g, call, at, above[:-1]):
            return False
    return True


def _in_traced_function(g: Guards, above: Sequence[ast.AST], where: Sequence[ast.AST]) -> bool:
    """Whether the code at ``above`` is in a function nested in the one holding ``where`` that
    is only handed to tracers (``def two_calls(x): return f(x) + f(x)``, then ``trace(two_calls, x)``)."""
    outer = innermost_def(where)
    at = innermost_def(above, len(above) if outer is None else outer)
    if at is None:
        return False
    roles = _passed_roles(above[: at + 1])
    return roles is not None and all(
        isinstance(k, int) and _hands_to_tracer(g, call, k, chain) for call, k, chain in roles
    )


def traced_only(g: Guards, ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    """Code that is traced but never lowered: passed only to ``jax.make_jaxpr``/``jax.eval_shape``."""
    parent = ancestors[-1] if ancestors else None
    if isinstance(parent, ast.Call) and parent.func is node and _built_traced_only(g, parent, ancestors[:-1]):
        return True
    if isinstance(parent, ast.Call) and parent.args and parent.args[0] is node:
        return _traced_by(g, parent, ancestors[:-1])
    # the innermost lambda or local function around it that is only traced; code in a function
    # that is only traced is only traced too, whatever it does with it inside
    chain = [*ancestors, node]
    for i in range(len(chain) - 1, 0, -1):
        here = chain[i]
        if isinstance(here, ast.Lambda):
            outer = chain[i - 1]
            if (
                isinstance(outer, ast.Call)
                and bool(outer.args)
                and outer.args[0] is here
                and _hands_to_tracer(g, outer, 0, chain[: i - 1])
            ):
                return True
        elif isinstance(here, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roles = _passed_roles(chain[: i + 1])
            if roles is not None and all(
                isinstance(role, int) and _hands_to_tracer(g, c, role, w) for c, role, w in roles
            ):
                return True
    return False
