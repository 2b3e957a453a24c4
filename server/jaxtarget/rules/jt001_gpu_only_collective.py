"""JT001 gpu-only-collective: psend, precv and pbroadcast lower only on GPUs."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from ..apis import GPU, Api, ArgCondition, ArrayDtype, Lowering, ProbeCase, sharded_probe
from ..fixes.guard import guard_fix
from ..fixes.layout import HELPER_NAME, FixContext
from ..model import Fix
from ..semantics.module import Reference
from ..semantics.values import call_arg
from .base import GUARD, SKIP_TEST, SUPPRESS, CheckContext, Example, FixSpec, Rule, Violation

_NOTE = (
    "Lowering is registered only for the 'gpu' platform; every other platform "
    "hits a default rule that raises."
)

PSEND = Api(
    "jax.lax.psend",
    "lax.psend",
    (Lowering("cuda"), Lowering("rocm", since="0.8.2")),
    "NotImplementedError: psend is currently only implemented on GPU",
    public_since="0.7.0",
    probe=ProbeCase(sharded_probe('def body(x):\n    lax.psend(x, "i", perm)\n    return x\n')),
    note=_NOTE,
)
PRECV = Api(
    "jax.lax.precv",
    "lax.precv",
    GPU,
    "NotImplementedError: precv is currently only implemented on GPU",
    public_since="0.7.0",
    probe=ProbeCase(
        sharded_probe(
            "def body(x):\n"
            "    return lax.precv(lax.create_token(), jax.ShapeDtypeStruct(x.shape, x.dtype),"
            ' "i", perm)\n'
        )
    ),
    note=_NOTE,
)
PBROADCAST = Api(
    "jax.lax.pbroadcast",
    "lax.pbroadcast",
    GPU,
    "NotImplementedError: MLIR translation rule for primitive 'pbroadcast' not found",
    public_since="0.6.1",
    primitives=("pbroadcast", "pbroadcast_start"),
    probe=ProbeCase(sharded_probe('def body(x):\n    return lax.pbroadcast(x, "i", 0)\n')),
)
#: a source given as an int32 array (``jnp.int32(i)``): a broadcast with a dynamic root
PBROADCAST_DYNAMIC = Api(
    "jax.lax.pbroadcast",
    "lax.pbroadcast",
    GPU,
    "NotImplementedError: MLIR translation rule for primitive 'pbroadcast_dynamic' not found",
    # before 0.12.0 the source must be a Python int (TypeError: parameters must be hashable)
    public_since="0.12.0",
    condition=ArgCondition(
        "source",
        ArrayDtype(("jax.numpy.int32", "numpy.int32"), ("int32",)),
        "with a source array",
        position=2,
    ),
    primitives=("pbroadcast_dynamic",),
    probe=ProbeCase(
        sharded_probe('def body(x):\n    return lax.pbroadcast(x, "i", jnp.int32(0))\n'),
        requires=("jax._src.lax.parallel.pbroadcast_dynamic_p",),
    ),
)

#: The headline probe: the pair, and the portable collective the fallback uses.
PAIR_PROBE = ProbeCase(
    sharded_probe(
        "def body(x):\n"
        '    token = lax.psend(x, "i", perm)\n'
        '    return lax.precv(token, jax.ShapeDtypeStruct(x.shape, x.dtype), "i", perm)\n'
    ),
    requires=("jax.lax.psend", "jax.lax.precv"),
)
PPERMUTE_PROBE = ProbeCase(sharded_probe('def body(x):\n    return lax.ppermute(x, "i", perm)\n'))


def pairs(refs: list[Reference]) -> dict[int, Reference]:
    """Each precv linked to the psend whose token it receives, or with the same axis and perm.

    Returns id(reference) -> partner, both ways.
    """
    sends = [r for r in refs if r.qualname == PSEND.qualname and r.call is not None]
    recvs = [r for r in refs if r.qualname == PRECV.qualname and r.call is not None]
    partner: dict[int, Reference] = {}
    for recv in recvs:
        assert recv.call is not None
        token = call_arg(recv.call, 0, "token")
        where = _axis_and_perm(recv.call, 2)
        for send in sends:
            if id(send) in partner or send.function is not recv.function:
                continue
            assert send.call is not None
            linked = token is send.call
            stmt = send.statement
            if isinstance(token, ast.Name) and isinstance(stmt, ast.Assign) and stmt.value is send.call:
                linked = any(isinstance(t, ast.Name) and t.id == token.id for t in stmt.targets)
            if not linked and where is not None:
                linked = _axis_and_perm(send.call, 1) == where
            if linked:
                partner[id(send)], partner[id(recv)] = recv, send
                break
    return partner


def _axis_and_perm(call: ast.Call, axis_at: int) -> tuple[str, str] | None:
    """The ``axis_name`` and ``perm`` arguments, positional from ``axis_at`` or by keyword."""
    axis = call_arg(call, axis_at, "axis_name")
    perm = call_arg(call, axis_at + 1, "perm")
    if axis is None or perm is None:
        return None
    return ast.dump(axis), ast.dump(perm)


def paired(v: Violation, partner: dict[int, Reference]) -> Violation:
    """``v`` with its psend/precv partner as companion and related location."""
    other = partner.get(id(v.ref))
    if other is None:
        return v
    v.companions = (other,)
    display = PRECV.display if other.qualname == PRECV.qualname else PSEND.display
    v.related = ((other.span, f"paired `{display}`"),)
    return v


def _ppermute_fallback(ctx: FixContext, v: Violation, prefix: str) -> str | None:
    """``lax.ppermute`` over the psend's arguments, bound as the precv's result was."""
    if not v.companions:
        return None
    send, recv = (v.ref, v.companions[0]) if v.ref.qualname == PSEND.qualname else (v.companions[0], v.ref)
    if send.call is None or recv.call is None:
        return None
    x = call_arg(send.call, 0, "x")
    axis = call_arg(send.call, 1, "axis_name")
    perm = call_arg(send.call, 2, "perm")
    if x is None or axis is None or perm is None:
        return None
    spelled = ctx.expr_text(send.node)
    module = spelled.rsplit(".", 1)[0] if "." in spelled else "jax.lax"
    call = f"{module}.ppermute({ctx.expr_text(x)}, {ctx.expr_text(axis)}, {ctx.expr_text(perm)})"
    nl = ctx.newline
    stmt = recv.statement
    if isinstance(stmt, ast.Assign) and stmt.value is recv.call:
        targets = " = ".join(ctx.expr_text(t) for t in stmt.targets)
        return f"{prefix}{targets} = {call}{nl}"
    if isinstance(stmt, ast.Return) and stmt.value is recv.call:
        return f"{prefix}return {call}{nl}"
    if isinstance(stmt, ast.AnnAssign) and stmt.value is recv.call and stmt.target is not None:
        return f"{prefix}{ctx.expr_text(stmt.target)} = {call}{nl}"
    return None


def _ppermute(ctx: FixContext, v: Violation) -> Fix | None:
    pair = " and ".join(f"`{r.display}`" for r in (PSEND, PRECV))
    title = f"Fall back to lax.ppermute off GPU: run {pair} only where {HELPER_NAME}()"
    return guard_fix(
        ctx,
        v.rule.code,
        v,
        fallback=lambda prefix: _ppermute_fallback(ctx, v, prefix),
        title=title,
        kind="ppermute",
    )


PPERMUTE = FixSpec(
    "ppermute",
    _ppermute,
    "for a psend/precv pair in one block: guard the pair with `has_gpu_backend()` and fall back "
    "to `lax.ppermute` over the same axis and permutation, which gives the same values",
    # other backends now run ppermute instead of raising: a change of behaviour
    "unsafe",
)

_PAIR = """\
from functools import partial

import jax
from jax import lax
from jax.sharding import PartitionSpec as P


@partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
def step(x):
    token = lax.psend(x, "i", [(0, 1)])
    return lax.precv(token, x, "i", [(0, 1)])
"""

_PAIR_FIXED = '''\
from functools import partial

import jax
from jax import lax
from jax.sharding import PartitionSpec as P


def has_gpu_backend() -> bool:
    """True when JAX runs on a GPU backend (cuda or rocm)."""
    return jax.default_backend() in ("gpu", "cuda", "rocm")


@partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
def step(x):
    if has_gpu_backend():
        token = lax.psend(x, "i", [(0, 1)])
        return lax.precv(token, x, "i", [(0, 1)])
    else:
        return lax.ppermute(x, "i", [(0, 1)])
'''
_BROADCAST = """\
import jax


def spread(x):
    return jax.lax.pbroadcast(x, "i", source=0)
"""
_BROADCAST_FIXED = '''\
import jax


def has_gpu_backend() -> bool:
    """True when JAX runs on a GPU backend (cuda or rocm)."""
    return jax.default_backend() in ("gpu", "cuda", "rocm")


def spread(x):
    if has_gpu_backend():
        return jax.lax.pbroadcast(x, "i", source=0)
    else:
        raise NotImplementedError("lax.pbroadcast requires a GPU backend (cuda or rocm)")
'''
_GUARDED = """\
import jax
from jax import lax


def exchange(x, perm):
    if jax.default_backend() != "gpu":
        return lax.ppermute(x, "i", perm)
    token = lax.psend(x, "i", perm)
    return lax.precv(token, x, "i", perm)
"""


class GpuOnlyCollective(Rule):
    code = "JT001"
    name = "gpu-only-collective"
    summary = "GPU-only collective used while a target backend cannot lower it"
    message = "`{api}` only lowers on {lowers}; {failing} would raise {error}"
    why = (
        "`jax.lax.psend`, `jax.lax.precv` and `jax.lax.pbroadcast` register a lowering "
        "only for the GPU platforms (cuda, rocm). Compiling them for cpu or tpu raises "
        "`NotImplementedError` at lowering time, which typically shows up only when the "
        "program first runs on a laptop or in CI without a GPU. Guard the call with a "
        "backend check, provide a portable fallback such as `lax.ppermute`, or skip the "
        "test on non-GPU backends."
    )
    severity = "error"
    apis = (PSEND, PRECV, PBROADCAST, PBROADCAST_DYNAMIC)
    fixes = (PPERMUTE, GUARD, SKIP_TEST, SUPPRESS)
    autofix = "guard"
    probe_cases = (("psend+precv", PAIR_PROBE), ("ppermute", PPERMUTE_PROBE))
    invalid = (
        Example(_PAIR, ("JT001", "JT001"), fixed=_PAIR_FIXED),
        Example(_BROADCAST, ("JT001",), fixed=_BROADCAST_FIXED, targets=("tpu",)),
    )
    valid = (Example(_PAIR, targets=("gpu",)), Example(_GUARDED))

    def check(self, ctx: CheckContext) -> Iterator[Violation]:
        partner = pairs(ctx.module.references)
        for v in self.limited_calls(ctx):
            yield paired(v, partner)
