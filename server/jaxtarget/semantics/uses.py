"""How a reference is used: called or only inspected, with which keywords, re-exported.

Rule-agnostic facts about the place of one reference, read from the parsed
code and the names the resolver confirmed:

- ``inspected``: a feature probe (``callable(lax.psend)``, ``fn is lax.psend``,
  ``hasattr``), not a use that will be called;
- ``keywords``: the keywords the API is called with, read through ``functools.partial``;
- ``reexport_name``: the module-level name a reference that is not called here is
  stored under (``eig = jnp.linalg.eig``, ``eig = wrap(linalg.eig, ...)``).

Where the code at a reference lowers for (device pins, exports, per-platform
branches) is read in ``placed``; ``USE_NAMES`` lists every call either reading needs
resolved.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from .aliases import static_target
from .devices import MESH, NAMED_SHARDING, SINGLE_DEVICE_SHARDING, TOPOLOGY
from .guards import Guards
from .passing import PARTIAL, TRACE_ONLY, TRANSFORMS, assigned_name, local_loads
from .placed import DEFAULT_DEVICE, DEVICE_PUT, EXPORTERS, HOST_COMPILERS, PLATFORM_DEPENDENT, REMOTE_APPS
from .scopes import dotted_spelling
from .vocabulary import terminal

#: registers a function as a primitive's lowering, for one platform with ``platform=``
REGISTER_LOWERING = "jax.interpreters.mlir.register_lowering"
#: turns a function into a lowering rule (``mlir.lower_fun(f, multiple_results=False)``)
LOWER_FUN = "jax.interpreters.mlir.lower_fun"
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
        *REMOTE_APPS,
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


def _in_module_table(ancestors: Sequence[ast.AST], at: int) -> bool:
    """Whether the node at index ``at`` of ``ancestors`` (``len(ancestors)``: the reference
    itself) is an element of a container outside every function and lambda."""
    return (
        at > 0
        and isinstance(ancestors[at - 1], _CONTAINERS)
        and not any(
            isinstance(a, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) for a in ancestors[:at]
        )
    )


def inspected(g: Guards, ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    """A reference that is only compared or inspected, or stored in a module-level table,
    as such or in the body of a lambda that is.

    Where an entry of a module-level table of functions is called is not visible
    here (the test that calls it holds its guards), so storing it is no finding.
    """
    if _in_module_table(ancestors, len(ancestors)):
        return True
    lam = next((i for i in range(len(ancestors) - 1, -1, -1) if isinstance(ancestors[i], ast.Lambda)), None)
    if lam is not None and _in_module_table(ancestors, lam):
        # `{"callable": lambda x: jax.lax.linalg.eig(x), ...}` in a plugin's test-case table
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
    """The keywords a use calls the API with: its own call's, a ``partial``'s, or those every
    call of the local variable it is stored in passes (``fn = pl.pallas_call``; ``fn(kernel, ...)``)."""
    parent = ancestors[-1] if ancestors else None
    if isinstance(parent, ast.Call):
        if parent.func is node:
            return parent.keywords
        if g.callee(parent) == PARTIAL and parent.args and parent.args[0] is node:
            return parent.keywords
    variable = assigned_name(parent, node)
    calls: list[ast.Call] = []
    for load, chain in (local_loads(ancestors, variable) or []) if variable else []:
        holder = chain[-1] if chain else None
        if _restores(holder, load, node):
            continue
        if not (isinstance(holder, ast.Call) and holder.func is load):
            return []
        calls.append(holder)
    if calls and len({tuple(ast.dump(k) for k in c.keywords) for c in calls}) == 1:
        return calls[0].keywords  # every call of the variable passes the same keywords
    return []


def _restores(holder: ast.AST | None, load: ast.Name, node: ast.AST) -> bool:
    """``load`` is put back where the API was read from (``pl.pallas_call = orig`` after
    ``orig = pl.pallas_call`` and a monkeypatch): undoing the patch, not a use."""
    if not (isinstance(holder, ast.Assign) and holder.value is load and len(holder.targets) == 1):
        return False
    spelled = dotted_spelling(node)
    return spelled is not None and dotted_spelling(holder.targets[0]) == spelled


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
