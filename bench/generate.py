"""Generate a large, realistic JAX module for benchmarks.

Shaped like real library code (about 37 characters a line on average, as in
jax's own sources): docstrings, comments, blank lines, short assignments and
many ordinary calls, with ``uses`` psend/precv references spread through it.
"""

from __future__ import annotations

_BODY = [
    "    # project onto the hidden space",
    "    h = jnp.dot(x, w)",
    "    h = jax.nn.relu(h + b)",
    "    scale = jnp.sqrt(h.shape[-1])",
    "",
    "    logits = h / scale",
    "    probs = jax.nn.softmax(logits, axis=-1)",
    "    if training:",
    "        probs = dropout(probs, rate, key)",
    "    out = jnp.einsum('ij,jk->ik', probs, v, precision=lax.Precision.HIGHEST)",
    "    out = layer_norm(out, gamma, beta)",
    "",
    "    # residual connection",
    "    total = jnp.sum(out, axis=0)",
    "    stats = {'mean': total.mean(), 'variance': jnp.var(out, axis=0), 'count': n}",
]


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
    while len(body) + len(_BODY) + 8 < budget:
        fn += 1
        sharded = fn % 3 == 0
        body.append("")
        if sharded:
            body.append('@partial(jax.shard_map, mesh=mesh, in_specs=P("i"))')
        body.append(f"def block_{fn}(x, w, b, v, n, training=False):")
        body.append(f'    """Block {fn} of the model."""')
        body.extend(_BODY)
        if sharded and placed < uses:
            body.append('    token = lax.psend(h, "i", [(0, 1)])')
            body.append('    h = lax.precv(token, h, "i", [(0, 1)])')
            placed += 2
        body.append("    return out + h, stats")
        body.append("")
    body += ["# end of generated module"] * (budget - len(body))
    return "\n".join(header + body) + "\n"
