"""Generate a realistic large JAX module for benchmarks."""

from __future__ import annotations


def module(lines: int = 5000, uses: int = 40) -> str:
    header = [
        '"""Generated benchmark module."""',
        "from functools import partial",
        "",
        "import jax",
        "import jax.numpy as jnp",
        "from jax import lax",
        "from jax.sharding import PartitionSpec as P",
        "",
    ]
    body: list[str] = []
    fn = 0
    placed = 0
    budget = lines - len(header)
    while len(body) < budget:
        fn += 1
        sharded = fn % 3 == 0
        if sharded:
            body.append('@partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))')
        body.append(f"def block_{fn}(x, w):")
        for k in range(20):
            body.append(f"    h{k} = jnp.tanh(jnp.dot(x, w) + {k}) * jnp.sum(x, axis=0) + helper_{k % 7}(x)")
        if sharded and placed < uses:
            body.append('    token = lax.psend(h0, "i", [(0, 1)])')
            body.append('    h0 = lax.precv(token, jax.ShapeDtypeStruct(h0.shape, h0.dtype), "i", [(0, 1)])')
            placed += 2
        body.append("    return h0 + h1")
        body.append("")
    return "\n".join(header + body[:budget]) + "\n"
