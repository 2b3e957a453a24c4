"""JT002 manual-sharding-required: psend/precv must run under shard_map."""

from __future__ import annotations

from collections.abc import Iterator

from .base import SUPPRESS, CheckContext, Example, Rule, Violation
from .jt001_gpu_only_collective import PRECV, PSEND, paired, pairs

#: shard_map entry points, by public name (the experimental one up to its removal).
SHARD_MAP: frozenset[str] = frozenset({"jax.shard_map", "jax.experimental.shard_map.shard_map"})

_FIXED = """\
import jax
from jax import lax


@jax.jit
def step(x):
    return lax.psend(x, "i", [(0, 1)])  # jaxtarget: ignore[JT002]
"""


class ManualShardingRequired(Rule):
    code = "JT002"
    name = "manual-sharding-required"
    summary = "point-to-point collective not visibly run under shard_map"
    message = (
        "`{api}` needs manual sharding: run it under `shard_map`, "
        "otherwise tracing fails with an unbound axis name"
    )
    why = (
        "`psend`/`precv` support only manual sharding: called outside `shard_map` "
        "(for example under plain `jax.jit`), JAX fails at trace time because the "
        "axis name is unbound. The rule looks for a `shard_map` decorator on the "
        "enclosing function, or the function being passed to `jax.shard_map` / "
        "`jax.experimental.shard_map.shard_map` in the same module (directly or "
        "through functions it calls)."
    )
    severity = "information"
    apis = (PSEND, PRECV)
    fixes = (SUPPRESS,)
    context = SHARD_MAP
    hover_note = (
        "**Manual sharding:** must run under `shard_map`; outside it tracing fails "
        "(psend currently only supports manual sharding)."
    )
    invalid = (
        Example(
            "import jax\nfrom jax import lax\n\n\n@jax.jit\ndef step(x):\n"
            '    return lax.psend(x, "i", [(0, 1)])\n',
            ("JT002",),
            fixed=_FIXED,
            targets=("cuda",),
        ),
    )
    valid = (
        Example(
            "from functools import partial\n\nimport jax\nfrom jax import lax\n\n\n"
            "def body(x):\n"
            '    return lax.psend(x, "i", [(0, 1)])\n\n\n'
            'step = jax.jit(jax.shard_map(partial(body), mesh=mesh, in_specs=P("i"), out_specs=P("i")))\n',
            targets=("cuda",),
        ),
    )

    def check(self, ctx: CheckContext) -> Iterator[Violation]:
        # a call no target reaches, or one meant to fail (assertRaises), is no finding
        refs = [
            (ref, api)
            for ref, api in self.references(ctx)
            if ref.call is not None and ctx.reachable(ref) and not ref.expects_error
        ]
        if not refs:
            return
        # a decorator or wrapping call in the call's own statement is enough; only the
        # calls it does not settle need every statement naming shard_map
        near = ctx.module.wrapped(SHARD_MAP, near=[ref.span.line for ref, _ in refs])
        refs = [(ref, api) for ref, api in refs if not near.encloses(ref.ancestors, ref.node)]
        if not refs:
            return
        wrapped = ctx.module.wrapped(SHARD_MAP)
        partner = pairs(ctx.module.references)
        for ref, api in refs:
            if not wrapped.covers(ref.ancestors, ref.node):
                yield paired(Violation(self, ref, api, frozenset()), partner)
