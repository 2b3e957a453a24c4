"""How a reference is used: called or only inspected, pinned to a device, in a per-platform branch.

Rule-agnostic facts about the place of one reference, read from the parsed
code and the names the resolver confirmed:

- ``inspected``: a feature probe (``callable(lax.psend)``, ``fn is lax.psend``,
  ``hasattr``), not a use that will be called;
- ``pinned``: the platform the code runs on whatever the targets
  (``with jax.default_device(jax.devices("cpu")[0])``, ``jax.jit(f, backend="cpu")``, an
  input committed with ``jax.device_put(x, cpu)``, ``jax.jit(f, in_shardings=s)`` with the
  devices of ``s`` named by platform, such as a TPU topology compiled for ahead of time);
- ``branch``: the platforms whose branch of ``lax.platform_dependent`` holds it;
- ``keywords``: the keywords the API is called with, read through ``functools.partial``;
- ``reexport_name``: the module-level name a reference that is not called here is
  stored under (``eig = jnp.linalg.eig``, ``eig = wrap(linalg.eig, ...)``).
"""

from __future__ import annotations

import ast
import itertools
import threading
import weakref
from collections.abc import Callable, Sequence

from ..platforms import ALL_PLATFORMS, platforms_of
from .aliases import path_to, static_target
from .conditions import DEFS
from .devices import (
    MESH,
    NAMED_SHARDING,
    SINGLE_DEVICE_SHARDING,
    TOPOLOGY,
    device_platforms,
    shardings_platforms,
)
from .guards import Guards
from .values import call_arg, keyword_value
from .vocabulary import terminal

JIT = "jax.jit"
#: calls that trace a function without lowering it
TRACE_ONLY = frozenset({"jax.make_jaxpr", "jax.eval_shape"})
#: transformations whose result is still the function (traced or lowered as the caller does)
TRANSFORMS = frozenset(
    {"jax.jit", "jax.vmap", "jax.grad", "jax.shard_map", "jax.experimental.shard_map.shard_map"}
)
DEFAULT_DEVICE = "jax.default_device"
DEVICE_PUT = "jax.device_put"
#: registers a function as a primitive's lowering, for one platform with ``platform=``
REGISTER_LOWERING = "jax.interpreters.mlir.register_lowering"
#: turns a function into a lowering rule (``mlir.lower_fun(f, multiple_results=False)``)
LOWER_FUN = "jax.interpreters.mlir.lower_fun"
PLATFORM_DEPENDENT = "jax.lax.platform_dependent"
PARTIAL = "functools.partial"
#: lower a (jitted) function for the platforms named by ``platforms=``, not the backend JAX runs on
EXPORTERS: dict[str, frozenset[str] | None] = {
    "jax.export.export": None,  # without platforms=: the default backend's
    "jax.experimental.pallas.lower_as_mlir": frozenset({"tpu"}),
}
#: compilers that lower every program they are handed for one platform, whatever JAX's backend
#: (Catalyst's ``qjit`` lowers the jaxpr for the host CPU)
HOST_COMPILERS: dict[str, frozenset[str]] = {"catalyst.qjit": frozenset({"cpu"})}
USE_NAMES: frozenset[str] = frozenset(
    {
        DEFAULT_DEVICE,
        DEVICE_PUT,
        PLATFORM_DEPENDENT,
        PARTIAL,
        TOPOLOGY,
        REGISTER_LOWERING,
        LOWER_FUN,
        SINGLE_DEVICE_SHARDING,
        NAMED_SHARDING,
        MESH,
        *TRACE_ONLY,
        *TRANSFORMS,
        *HOST_COMPILERS,
        *EXPORTERS,
    }
)

#: builtins that look at a function without calling it
_INSPECTORS = frozenset(
    {
        "callable",
        "hasattr",
        "getattr",
        "isinstance",
        "issubclass",
        "id",
        "print",
        "repr",
        "str",
        "type",
        "vars",
        "dir",
    }
)
_CONTAINERS = (ast.Tuple, ast.List, ast.Set, ast.Dict)


#: exceptions whose handlers catch what a trace-time check raises (a RuntimeError)
def _only_inspects(g: Guards, call: ast.Call, node: ast.AST, ancestors: Sequence[ast.AST]) -> bool:
    """A call to a function of this module whose parameter receiving ``node`` is only inspected."""
    if not isinstance(call.func, ast.Name):
        return False
    position = next((k for k, a in enumerate(call.args) if a is node), None)
    found = g.values.lookup(call.func.id, ancestors)
    if position is None or found is None or not isinstance(found[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    func = found[0]
    params = [*func.args.posonlyargs, *func.args.args]
    if position >= len(params):
        return False
    name = params[position].arg
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(stmt, [func]) for stmt in func.body]
    while stack:
        here, above = stack.pop()
        if isinstance(here, ast.Name) and here.id == name:
            if not isinstance(here.ctx, ast.Load) or not _inspects(above, here):
                return False
            continue
        stack.extend((child, [*above, here]) for child in ast.iter_child_nodes(here))
    return True


def _lift(
    ancestors: Sequence[ast.AST], node: ast.AST, containers: tuple[type, ...]
) -> tuple[ast.AST, ast.AST | None]:
    """The node as its context sees it: an element of a tuple or list is judged by the container's use."""
    parent = ancestors[-1] if ancestors else None
    if parent is not None and isinstance(parent, containers) and len(ancestors) > 1:
        return parent, ancestors[-2]
    return node, parent


def _inspects_at(parent: ast.AST | None, node: ast.AST) -> bool:
    """Compared (`is`, `in`, `==`), an attribute read (`__name__`), or given to a builtin that looks."""
    if isinstance(parent, ast.Compare) or (isinstance(parent, ast.Attribute) and parent.value is node):
        return True
    return (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Name)
        and parent.func.id in _INSPECTORS
        and any(a is node for a in parent.args)
    )


def _inspects(ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    node, parent = _lift(ancestors, node, (ast.Tuple, ast.List, ast.Set))
    return _inspects_at(parent, node)


def inspected(g: Guards, ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    """A reference that is only compared or inspected, or stored in a module-level table.

    Where an entry of a module-level table of functions is called is not visible
    here (the test that calls it holds its guards), so storing it is no finding.
    """
    if isinstance(ancestors[-1] if ancestors else None, _CONTAINERS) and not any(
        isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) for a in ancestors
    ):
        return True
    node, parent = _lift(ancestors, node, _CONTAINERS)
    if _inspects_at(parent, node):
        # also `lax.psend.__name__`, `jnp.linalg.eig.__doc__`
        return True
    if (
        isinstance(parent, ast.Call)
        and isinstance(parent.func, ast.Attribute)
        and isinstance(parent.func.value, ast.Name)
        and parent.func.value.id == "inspect"
    ):
        return True
    if (
        isinstance(parent, ast.Call)
        and static_target(parent) is node
        and len(ancestors) > 2
        and isinstance(ancestors[-2], ast.Assign)
        and isinstance(ancestors[-3], ast.ClassDef)
    ):
        # `eig = staticmethod(jnp.linalg.eig)` in a class body: judged as the alias it makes
        node, parent = parent, ancestors[-2]
    if isinstance(parent, ast.Assign) and parent.value is node:
        # an alias under the same name (`eig = jnp.linalg.eig`, `self.eig = ...`): its uses
        # are found through it; under another name the assignment itself is reported
        name = terminal(node.args[0] if isinstance(node, ast.Call) else node)
        return all(
            (isinstance(t, ast.Name) and t.id == name)
            or (isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.attr == name)
            for t in parent.targets
        )
    return isinstance(parent, ast.Call) and _only_inspects(g, parent, node, ancestors[:-1])


def keywords(g: Guards, ancestors: Sequence[ast.AST], node: ast.AST) -> list[ast.keyword]:
    """The keywords a use calls the API with: its own call's, or a ``partial``'s."""
    parent = ancestors[-1] if ancestors else None
    if isinstance(parent, ast.Call):
        if parent.func is node:
            return parent.keywords
        if g.callee(parent) == PARTIAL and parent.args and parent.args[0] is node:
            return parent.keywords
    return []


def innermost_def(
    chain: Sequence[ast.AST], below: int = -1, kinds: tuple[type[ast.AST], ...] = DEFS
) -> int | None:
    """The index of the last function definition (or node of ``kinds``) in ``chain`` after
    index ``below`` (None: none)."""
    return next((k for k in range(len(chain) - 1, below, -1) if isinstance(chain[k], kinds)), None)


def local_loads(where: Sequence[ast.AST], name: str) -> list[tuple[ast.Name, list[ast.AST]]] | None:
    """Loads of a local variable in the function holding ``where`` (None: not in a function)."""
    at = innermost_def(where)
    if at is None:
        return None
    above = list(where[:at])
    return [(load, [*above, *chain]) for load, chain in _loads_in(where[at]).get(name, ())]


#: function node -> each name loaded in it, with the nodes from the function down to each load;
#: a document's unchanged functions keep their nodes from version to version, and their index
_LOADS: weakref.WeakKeyDictionary[ast.AST, dict[str, list[tuple[ast.Name, list[ast.AST]]]]] = (
    weakref.WeakKeyDictionary()
)
_LOADS_LOCK = threading.Lock()


def _loads_in(function: ast.AST) -> dict[str, list[tuple[ast.Name, list[ast.AST]]]]:
    with _LOADS_LOCK:
        found = _LOADS.get(function)
    if found is not None:
        return found
    found = {}
    # each node visited with the index of its parent; a load's chain is built only for it
    nodes: list[ast.AST] = []
    parents: list[int] = []
    stack: list[tuple[ast.AST, int]] = [(function, -1)]
    while stack:
        node, parent = stack.pop()
        index = len(nodes)
        nodes.append(node)
        parents.append(parent)
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            chain: list[ast.AST] = []
            while parent >= 0:
                chain.append(nodes[parent])
                parent = parents[parent]
            chain.reverse()
            found.setdefault(node.id, []).append((node, chain))
        stack.extend((child, index) for child in ast.iter_child_nodes(node))
    with _LOADS_LOCK:
        _LOADS[function] = found
    return found


def reexport_name(ancestors: Sequence[ast.AST], node: ast.AST) -> str | None:
    """The module-level name ``node`` is stored under, as such or through calls that take it as an argument.

    ``eig = jnp.linalg.eig`` and ``eig = _wrap(linalg.eig, module="linalg.")`` name
    the API for importers; the API runs where they call it, not here. None when the
    reference is called, or is anything but such a statement's value.
    """
    if len(ancestors) < 2 or not isinstance(ancestors[0], ast.Module):
        return None
    stmt = ancestors[1]
    if not isinstance(stmt, (ast.Assign, ast.AnnAssign)) or stmt.value is None:
        return None
    targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
    if len(targets) != 1 or not isinstance(targets[0], ast.Name):
        return None
    child: ast.AST = node
    for parent in reversed(ancestors[2:]):
        # up through calls that take it as an argument, never as the callee
        if not isinstance(parent, (ast.Call, ast.keyword)) or getattr(parent, "func", None) is child:
            return None
        child = parent
    return targets[0].id if stmt.value is child else None


def assigned_name(parent: ast.AST | None, value: ast.AST) -> str | None:
    if isinstance(parent, ast.Assign) and parent.value is value and len(parent.targets) == 1:
        target = parent.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    return None


def _jit_platforms(g: Guards, call: ast.Call, chain: Sequence[ast.AST]) -> frozenset[str] | None:
    backend = keyword_value(call, "backend")
    if isinstance(backend, ast.Constant) and isinstance(backend.value, str):
        return platforms_of(backend.value) or None
    device = keyword_value(call, "device")
    if device is not None:
        return device_platforms(g, device, chain)
    return shardings_platforms(g, call, chain)


def _exported_platforms(call: ast.Call, name: str) -> frozenset[str] | None:
    """The platforms ``jax.export.export(f, platforms=[...])`` lowers ``f`` for (None: not read)."""
    value = keyword_value(call, "platforms")
    if value is None:
        return EXPORTERS[name]
    if not isinstance(value, (ast.List, ast.Tuple)) or not value.elts:
        return None
    out: frozenset[str] = frozenset()
    for element in value.elts:
        if not (isinstance(element, ast.Constant) and isinstance(element.value, str)):
            return None
        out |= platforms_of(element.value)
    return out or None


def _jit_consumed(g: Guards, call: ast.Call, above: Sequence[ast.AST]) -> frozenset[str] | None:
    """For ``jax.jit(f)`` or another transform (``above``: its ancestors), the platforms an
    exporter it is handed to lowers it for: ``export(jax.jit(f), platforms=["tpu"])``, also
    through more transforms (``jax.jit(jax.vmap(f))``) or a local variable every use of which
    is such a call (``f_j = jax.jit(f)``; ``export(f_j, platforms=["tpu"])``)."""
    if g.callee(call) not in TRANSFORMS:
        return None
    # up through transforms (`jax.jit(jax.vmap(f))`) to the exporter, if any
    while above and isinstance(above[-1], ast.Call) and above[-1].args and above[-1].args[0] is call:
        call, above = above[-1], above[:-1]
        if g.callee(call) not in TRANSFORMS:
            return _exported_by(g, call)
    if not above:
        return None
    return _handed_on(g, call, above, lambda holder, _: _exported_by(g, holder))


def _exported_by(g: Guards, call: ast.Call) -> frozenset[str] | None:
    """The platforms ``call`` lowers its first argument for, if it is an exporter."""
    name = g.callee(call)
    return _exported_platforms(call, name) if name is not None and name in EXPORTERS else None


def _handed_on(
    g: Guards,
    call: ast.Call,
    above: Sequence[ast.AST],
    pin_of: Callable[[ast.Call, list[ast.AST]], frozenset[str] | None],
) -> frozenset[str] | None:
    """For ``call`` (``above``: its ancestors) whose value is kept in a local variable, the
    union of what ``pin_of`` reads from each call that variable is handed to as the first
    argument (None: no use, or one that is no such call or pins nothing)."""
    variable = assigned_name(above[-1], call)
    loads = local_loads(above, variable) if variable else None
    if not loads:
        return None
    out: frozenset[str] = frozenset()
    for load, chain in loads:
        holder = chain[-1] if chain else None
        if not (isinstance(holder, ast.Call) and holder.args and holder.args[0] is load):
            return None
        got = pin_of(holder, chain)
        if got is None:
            return None
        out |= got
    return out


def _pinned_by_call(g: Guards, call: ast.Call, chain: Sequence[ast.AST]) -> frozenset[str] | None:
    """``jax.jit(f, backend=...)``, ``partial(jax.jit, backend=...)``, ``qjit(f)``,
    ``jax.export.export(f, platforms=[...])``: the platform it pins."""
    name = g.callee(call)
    if name in HOST_COMPILERS:
        return HOST_COMPILERS[name]
    if name is not None and name in EXPORTERS:
        return _exported_platforms(call, name)
    if name == JIT:
        return _jit_platforms(g, call, chain)
    if name == PARTIAL and call.args and g.resolved.get(id(call.args[0])) == JIT:
        return _jit_platforms(g, call, chain)
    return None


def _committed_platforms(g: Guards, call: ast.Call, chain: Sequence[ast.AST]) -> frozenset[str] | None:
    """The platform of an argument committed by ``jax.device_put(x, device)``: the call runs there."""
    for arg in (*call.args, *(k.value for k in call.keywords)):
        if isinstance(arg, ast.Call) and g.callee(arg) == DEVICE_PUT:
            found = device_platforms(g, call_arg(arg, 1, "device"), chain)
            if found is not None:
                return found
    return None


def _committed_call(g: Guards, ancestors: Sequence[ast.AST], node: ast.AST) -> frozenset[str] | None:
    """``api(jax.device_put(x, cpu))``, ``jax.jacrev(api)(jax.device_put(x, cpu))``: pinned to that device."""
    parent = ancestors[-1] if ancestors else None
    if not isinstance(parent, ast.Call):
        return None
    if parent.func is node:
        return _committed_platforms(g, parent, ancestors)
    outer = ancestors[-2] if len(ancestors) > 1 else None
    if parent.args and parent.args[0] is node and isinstance(outer, ast.Call) and outer.func is parent:
        return _committed_platforms(g, outer, ancestors[:-1])
    return None


def _function_roles(
    g: Guards, func: ast.FunctionDef | ast.AsyncFunctionDef, scope: ast.AST
) -> list[tuple[ast.Call, int | str]] | None:
    """Every use of ``func``'s name in ``scope``, as (call, position or keyword); None if used otherwise."""
    roles: list[tuple[ast.Call, int | str]] = []
    for node in ast.walk(scope):
        if not isinstance(node, ast.Call):
            continue
        for i, arg in enumerate(node.args):
            if isinstance(arg, ast.Name) and arg.id == func.name:
                roles.append((node, i))
        for kw in node.keywords:
            if isinstance(kw.value, ast.Name) and kw.value.id == func.name and kw.arg:
                roles.append((node, kw.arg))
    loads = sum(
        1
        for n in ast.walk(scope)
        if isinstance(n, ast.Name) and n.id == func.name and isinstance(n.ctx, ast.Load)
    )
    return roles if roles and loads == len(roles) else None


def _enclosing_function(
    chain: Sequence[ast.AST],
) -> tuple[int, ast.FunctionDef | ast.AsyncFunctionDef] | None:
    for i in range(len(chain) - 1, 0, -1):
        node = chain[i]
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return i, node
    return None


def pinned(g: Guards, ancestors: Sequence[ast.AST], node: ast.AST) -> frozenset[str] | None:
    """The platform the code at ``node`` is pinned to, whatever the targets (None: not pinned)."""
    found: frozenset[str] | None = _committed_call(g, ancestors, node)
    chain = [*ancestors, node]
    for i, (parent, child) in enumerate(itertools.pairwise(chain)):
        above = chain[: i + 1]
        if isinstance(parent, (ast.With, ast.AsyncWith)) and any(c is child for c in parent.body):
            for item in parent.items:
                ctx = item.context_expr
                if isinstance(ctx, ast.Call) and g.callee(ctx) == DEFAULT_DEVICE and ctx.args:
                    found = device_platforms(g, ctx.args[0], above) or found
        elif isinstance(parent, ast.Call) and parent.args and parent.args[0] is child:
            found = _pinned_by_call(g, parent, above) or _jit_consumed(g, parent, above[:-1]) or found
        elif isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
            c is child for c in parent.body
        ):
            for dec in parent.decorator_list:
                if isinstance(dec, ast.Call):
                    found = _pinned_by_call(g, dec, above) or found
                else:
                    found = HOST_COMPILERS.get(g.resolved.get(id(dec), "")) or found
    if found is None:
        found = _passed_function(g, chain, _pin_role)
    if found is None:
        found = _exported_result(g, ancestors, node)
    return found


def _exported_result(g: Guards, ancestors: Sequence[ast.AST], node: ast.AST) -> frozenset[str] | None:
    """A call whose result is a function kept in a local variable (``f = pl.pallas_call(kernel,
    ...)``) that is only handed to exporters, as such or transformed (``lower_as_mlir(jax.jit(f),
    platforms=["tpu"])``): lowered for the platforms they name."""
    call = ancestors[-1] if ancestors else None
    if not (isinstance(call, ast.Call) and call.func is node and len(ancestors) > 1):
        return None
    return _handed_on(
        g,
        call,
        ancestors[:-1],
        lambda holder, chain: _pinned_by_call(g, holder, chain) or _jit_consumed(g, holder, chain[:-1]),
    )


def pinned_call(g: Guards, call: ast.Call, arg: ast.AST, where: Sequence[ast.AST]) -> frozenset[str] | None:
    """The platform ``jax.jit(arg, backend=...)`` pins ``arg`` to (None: not such a call);
    ``where``: the call's ancestors."""
    if not (call.args and call.args[0] is arg):
        return None
    return _pinned_by_call(g, call, where) or _jit_consumed(g, call, where)


def _pin_role(g: Guards, call: ast.Call, role: int | str, chain: Sequence[ast.AST]) -> frozenset[str] | None:
    if role != 0:
        return None
    found = _pinned_by_call(g, call, chain)
    at = innermost_def(chain)
    if found is None and at is not None:
        # `jax.jit(f)` handed on: read where it goes, from the function that uses it
        found = _jit_consumed(g, call, [*chain[:at], *path_to(chain[at], call)])
    return found


def _branch_role(
    g: Guards, call: ast.Call, role: int | str, chain: Sequence[ast.AST]
) -> frozenset[str] | None:
    if g.callee(call) != PLATFORM_DEPENDENT or not isinstance(role, str):
        return None
    return _branch_of(call, role)


def _branch_of(call: ast.Call, keyword: str) -> frozenset[str]:
    if keyword == "default":
        named: set[str] = set()
        for kw in call.keywords:
            if kw.arg and kw.arg != "default":
                named |= platforms_of(kw.arg)
        return ALL_PLATFORMS - named
    return platforms_of(keyword)


#: what a call gives a function passed to it in one role (a position or a keyword): None, nothing
RoleReader = Callable[[Guards, ast.Call, int | str, Sequence[ast.AST]], frozenset[str] | None]


def _passed_function(g: Guards, chain: Sequence[ast.AST], role_sets: RoleReader) -> frozenset[str] | None:
    """For code in a function that its scope only passes to calls: the union of what each call gives."""
    enclosing = _enclosing_function(chain)
    if enclosing is None:
        return None
    i, func = enclosing
    scope = next(
        (
            n
            for n in reversed(chain[:i])
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module))
        ),
        None,
    )
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
        # a module-level function may be used in statements not parsed: no conclusion
        return None
    roles = _function_roles(g, func, scope)
    if roles is None:
        return None
    out: set[str] = set()
    for call, role in roles:
        got = role_sets(g, call, role, chain[:i])
        if got is None:
            return None
        out |= got
    return frozenset(out)


def branch(g: Guards, ancestors: Sequence[ast.AST], node: ast.AST) -> frozenset[str]:
    """The platforms whose ``lax.platform_dependent`` branch holds ``node`` (all when in none)."""
    out = ALL_PLATFORMS
    chain = [*ancestors, node]
    for grand, parent in itertools.pairwise(chain):
        if (
            isinstance(parent, ast.keyword)
            and parent.arg
            and isinstance(grand, ast.Call)
            and g.callee(grand) == PLATFORM_DEPENDENT
        ):
            out &= _branch_of(grand, parent.arg)
    passed = _passed_function(g, chain, _branch_role)
    return out & passed if passed is not None else out
