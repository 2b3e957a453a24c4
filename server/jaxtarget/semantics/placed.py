"""The platforms the code at a reference lowers for, whatever the targets.

Rule-agnostic facts about the place of one reference, read from the parsed code
and the names the resolver confirmed:

- ``pinned``: the platform the code runs on whatever the targets
  (``with jax.default_device(jax.devices("cpu")[0])``, ``jax.jit(f, backend="cpu")``, an
  input committed with ``jax.device_put(x, cpu)``, ``jax.jit(f, in_shardings=s)`` with the
  devices of ``s`` named by platform, such as a TPU topology compiled for ahead of time),
  or the platforms it is exported for (``jax.export.export(jax.jit(f), platforms=[...])``),
  or the GPU a cloud app runs a function on (Modal's ``@app.function(gpu="H100")``);
- ``pinned_call``: the same for a function handed to such a call;
- ``branch``: the platforms whose branch of ``lax.platform_dependent`` holds it.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Sequence

from ..platforms import ALL_PLATFORMS, platforms_of
from .aliases import path_to
from .devices import device_platforms, shardings_platforms
from .guards import Guards
from .passing import JIT, PARTIAL, TRANSFORMS, handed_on, innermost_def, passed_function
from .values import call_arg, keyword_value

DEFAULT_DEVICE = "jax.default_device"
DEVICE_PUT = "jax.device_put"
PLATFORM_DEPENDENT = "jax.lax.platform_dependent"
#: lower a (jitted) function for the platforms named by ``platforms=``, not the backend JAX runs on
EXPORTERS: dict[str, frozenset[str] | None] = {
    "jax.export.export": None,  # without platforms=: the default backend's
    "jax.experimental.pallas.lower_as_mlir": frozenset({"tpu"}),
}
#: compilers that lower every program they are handed for one platform, whatever JAX's backend
#: (Catalyst's ``qjit`` lowers the jaxpr for the host CPU)
HOST_COMPILERS: dict[str, frozenset[str]] = {"catalyst.qjit": frozenset({"cpu"})}
#: apps whose ``@app.function(gpu=...)`` / ``@app.cls(gpu=...)`` runs the function, or the
#: class's methods, in a container with that GPU: Modal's, whose GPUs are all NVIDIA's
REMOTE_APPS: dict[str, frozenset[str]] = {"modal.App": frozenset({"cuda"}), "modal.Stub": frozenset({"cuda"})}
_REMOTE_DECORATORS = frozenset({"function", "cls"})
#: words of the module-level statements that make such apps (read before the uses)
APP_WORDS: tuple[str, ...] = tuple(sorted({q.rsplit(".", 1)[1] for q in REMOTE_APPS}))


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
    return handed_on(g, call, above, lambda holder, _: _exported_by(g, holder))


def _exported_by(g: Guards, call: ast.Call) -> frozenset[str] | None:
    """The platforms ``call`` lowers its first argument for, if it is an exporter."""
    name = g.callee(call)
    return _exported_platforms(call, name) if name is not None and name in EXPORTERS else None


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


def _remote_host(g: Guards, dec: ast.Call, chain: Sequence[ast.AST]) -> frozenset[str] | None:
    """``@app.function(gpu="H100")`` of ``app = modal.App(...)``: the platform of the GPU the
    app runs the function on (None: no such decorator, or no GPU asked for)."""
    func = dec.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return None
    if func.attr not in _REMOTE_DECORATORS:
        return None
    gpu = keyword_value(dec, "gpu")
    if gpu is None or (isinstance(gpu, ast.Constant) and not gpu.value):
        return None
    found = g.values.value_of(func.value, chain)
    app = g.callee(found[0]) if found is not None else None
    return REMOTE_APPS.get(app) if app is not None else None


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
        elif isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
            c is child for c in parent.body
        ):
            for dec in parent.decorator_list:
                if isinstance(dec, ast.Call):
                    found = _pinned_by_call(g, dec, above) or _remote_host(g, dec, above) or found
                else:
                    found = HOST_COMPILERS.get(g.resolved.get(id(dec), "")) or found
    if found is None:
        found = passed_function(g, chain, _pin_role)
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
    return handed_on(
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
    passed = passed_function(g, chain, _branch_role)
    return out & passed if passed is not None else out
