"""Where devices, meshes and shardings put a computation: the platform they name.

Rule-agnostic readings of device expressions, read from the parsed code and the names the
resolver confirmed: ``jax.devices("cpu")[0]``, the devices of a TPU topology described for
ahead-of-time compilation (``topologies.get_topology_desc(..., platform="tpu").devices``),
reshaped or wrapped into a ``Mesh``, and the ``SingleDeviceSharding`` / ``NamedSharding``
a jit call's ``in_shardings`` / ``out_shardings`` place on (placed.py reads them as pins).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from ..platforms import platforms_of
from .guards import Guards
from .values import call_arg, keyword_value
from .vocabulary import DEVICE_LISTS

#: a description of a platform's devices that need not be attached (ahead-of-time compilation)
TOPOLOGY = "jax.experimental.topologies.get_topology_desc"
SINGLE_DEVICE_SHARDING = "jax.sharding.SingleDeviceSharding"
NAMED_SHARDING = "jax.sharding.NamedSharding"
MESH = "jax.sharding.Mesh"
#: the shardings a jit call places its inputs and outputs with: their devices pin it
SHARDING_KEYWORDS = ("in_shardings", "out_shardings")
#: words of the module-level statements that build such shardings (read before the uses)
PIN_WORDS: tuple[str, ...] = (
    *SHARDING_KEYWORDS,
    *(q.rsplit(".", 1)[1] for q in (TOPOLOGY, SINGLE_DEVICE_SHARDING, NAMED_SHARDING, MESH)),
)

#: how many names and calls a device, mesh or sharding is followed through
_MAX_DEPTH = 12
#: methods that reshape an array of devices
_RESHAPES = ("reshape", "flatten", "ravel", "tolist")


def device_platforms(
    g: Guards, expr: ast.AST | None, chain: Sequence[ast.AST], depth: int = 0
) -> frozenset[str] | None:
    """The platform of a device expression such as ``jax.devices("cpu")[0]`` (None: unknown)."""
    named = g.device_platform(expr)
    if named is not None:
        return named
    if isinstance(expr, ast.Subscript):  # topology.devices[0]
        return devices_platforms(g, expr.value, chain, depth + 1)
    if isinstance(expr, ast.Name) and depth < 4:
        found = g.values.value_of(expr, chain)
        if found is not None:
            return device_platforms(g, found[0], found[1], depth + 1)
    return None


def devices_platforms(
    g: Guards, expr: ast.AST | None, chain: Sequence[ast.AST], depth: int = 0
) -> frozenset[str] | None:
    """The platform of a collection of devices named by platform (None: unknown): ``jax.devices("tpu")``,
    ``get_topology_desc(..., platform="tpu").devices``, reshaped or wrapped
    (``np.array(devices).reshape(2, 2)``, ``create_device_mesh(shape, devices=devices)``)."""
    if depth > _MAX_DEPTH or expr is None:
        return None
    if isinstance(expr, ast.Name):
        found = g.values.value_of(expr, chain)
        return devices_platforms(g, found[0], found[1], depth + 1) if found is not None else None
    if isinstance(expr, ast.Attribute) and expr.attr == "devices":
        return _topology_platforms(g, expr.value, chain, depth + 1)
    if isinstance(expr, ast.Call):
        if g.callee(expr) in DEVICE_LISTS:
            return g.device_platform(ast.Subscript(value=expr, slice=ast.Constant(0), ctx=ast.Load()))
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in _RESHAPES:
            return devices_platforms(g, expr.func.value, chain, depth + 1)
        # np.array(devices), create_device_mesh((2, 2), devices=devices): the devices passed
        shapes = (ast.Constant, ast.Tuple, ast.List)
        passed = next((a for a in expr.args if not isinstance(a, shapes)), None)
        inner = keyword_value(expr, "devices") or passed
        if inner is not None:
            return devices_platforms(g, inner, chain, depth + 1)
    return None


def _topology_platforms(
    g: Guards, expr: ast.AST, chain: Sequence[ast.AST], depth: int
) -> frozenset[str] | None:
    """``get_topology_desc(..., platform="tpu")``, directly or through a name bound to it."""
    if isinstance(expr, ast.Name) and depth < _MAX_DEPTH:
        found = g.values.value_of(expr, chain)
        return _topology_platforms(g, found[0], found[1], depth + 1) if found is not None else None
    if isinstance(expr, ast.Call) and g.callee(expr) == TOPOLOGY:
        platform = call_arg(expr, 1, "platform")
        if isinstance(platform, ast.Constant) and isinstance(platform.value, str):
            return platforms_of(platform.value) or None
    return None


def sharding_platforms(
    g: Guards, expr: ast.AST | None, chain: Sequence[ast.AST], depth: int = 0
) -> frozenset[str] | None:
    """The platform of the devices a sharding places on (None: unknown), for
    ``SingleDeviceSharding(device)``, ``NamedSharding(Mesh(devices, axes), spec)`` and a
    tuple or list of them (all on the same platform)."""
    if depth > _MAX_DEPTH or expr is None:
        return None
    if isinstance(expr, ast.Name):
        found = g.values.value_of(expr, chain)
        return sharding_platforms(g, found[0], found[1], depth + 1) if found is not None else None
    if isinstance(expr, (ast.Tuple, ast.List)):
        each = {sharding_platforms(g, e, chain, depth + 1) for e in expr.elts}
        return each.pop() if len(each) == 1 else None
    if not isinstance(expr, ast.Call):
        return None
    callee = g.callee(expr)
    if callee == SINGLE_DEVICE_SHARDING:
        return device_platforms(g, call_arg(expr, 0, "device"), chain)
    if callee == NAMED_SHARDING:
        return _mesh_platforms(g, call_arg(expr, 0, "mesh"), chain, depth + 1)
    return None


def _mesh_platforms(
    g: Guards, expr: ast.AST | None, chain: Sequence[ast.AST], depth: int
) -> frozenset[str] | None:
    if isinstance(expr, ast.Name) and depth < _MAX_DEPTH:
        found = g.values.value_of(expr, chain)
        return _mesh_platforms(g, found[0], found[1], depth + 1) if found is not None else None
    if isinstance(expr, ast.Call) and g.callee(expr) == MESH:
        return devices_platforms(g, call_arg(expr, 0, "devices"), chain, depth + 1)
    return None


def shardings_platforms(g: Guards, call: ast.Call, chain: Sequence[ast.AST]) -> frozenset[str] | None:
    """The platform of the devices a jit call's ``in_shardings`` or ``out_shardings`` place on."""
    for keyword in SHARDING_KEYWORDS:
        found = sharding_platforms(g, keyword_value(call, keyword), chain)
        if found is not None:
            return found
    return None
