"""Where a function or a value is handed on, read in the function that holds it.

Rule-agnostic helpers shared by the readings of a reference's place:

- ``innermost_def`` / ``local_loads``: the function holding a node, and every load of
  a local variable in it (indexed once per function node);
- ``assigned_name``: the variable a call's value is kept in (``f_j = jax.jit(f)``);
- ``handed_on``: what each call that such a variable is handed to gives it;
- ``passed_function``: for code in a nested function that its scope only passes to
  calls (``jax.jit(body)``, ``lax.platform_dependent(x, cuda=body)``), what each of
  those calls gives it.
"""

from __future__ import annotations

import ast
import threading
import weakref
from collections.abc import Callable, Sequence

from .conditions import DEFS
from .guards import Guards

JIT = "jax.jit"
#: calls that trace a function without lowering it
TRACE_ONLY = frozenset({"jax.make_jaxpr", "jax.eval_shape"})
#: transformations whose result is still the function (traced or lowered as the caller does)
TRANSFORMS = frozenset(
    {"jax.jit", "jax.vmap", "jax.grad", "jax.shard_map", "jax.experimental.shard_map.shard_map"}
)
PARTIAL = "functools.partial"


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


def assigned_name(parent: ast.AST | None, value: ast.AST) -> str | None:
    if isinstance(parent, ast.Assign) and parent.value is value and len(parent.targets) == 1:
        target = parent.targets[0]
        return target.id if isinstance(target, ast.Name) else None
    return None


def handed_on(
    g: Guards,
    call: ast.Call,
    above: Sequence[ast.AST],
    pin_of: Callable[[ast.Call, list[ast.AST]], frozenset[str] | None],
) -> frozenset[str] | None:
    """For ``call`` (``above``: its ancestors) whose value is kept in a local variable, the
    union of what ``pin_of`` reads from each call that variable is handed to as the first
    argument (None: no use, or one that is no such call or pins nothing). A transform that
    rebinds the variable to its own result (``f = jax.vmap(f)``) hands it on under the same
    name, whose other uses are read."""
    variable = assigned_name(above[-1], call)
    loads = local_loads(above, variable) if variable else None
    if not loads:
        return None
    out: frozenset[str] | None = None
    for load, chain in loads:
        holder = chain[-1] if chain else None
        if not (isinstance(holder, ast.Call) and holder.args and holder.args[0] is load):
            return None
        if len(chain) > 1 and g.callee(holder) in TRANSFORMS and assigned_name(chain[-2], holder) == variable:
            continue
        got = pin_of(holder, chain)
        if got is None:
            return None
        out = got if out is None else out | got
    return out


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


#: what a call gives a function passed to it in one role (a position or a keyword): None, nothing
RoleReader = Callable[[Guards, ast.Call, int | str, Sequence[ast.AST]], frozenset[str] | None]


def passed_function(g: Guards, chain: Sequence[ast.AST], role_sets: RoleReader) -> frozenset[str] | None:
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
