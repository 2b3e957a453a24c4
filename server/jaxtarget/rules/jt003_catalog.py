"""JT003's catalog: the APIs that lower only on some platforms, with their conditions and probes.

Plain data (apis.py types). Facts measured by cross-lowering with every jax the suite
has (0.7.0, 0.8.2, 0.9.1, 0.10.2, 0.12.0.1) and release boundaries read from the
jax sources in between; ``tests/test_catalog_lowering.py`` re-verifies each verifiable
entry. An API may have several entries, one per argument condition.
"""

from __future__ import annotations

from dataclasses import replace

from ..apis import (
    CPU_ONLY,
    NO_TPU,
    Api,
    ArgCondition,
    ArrayDtype,
    Condition,
    Lowering,
    ProbeCase,
    square_probe,
)

MISSING_RULE = "NotImplementedError: MLIR translation rule for primitive not found"
_PIVOTING = ArgCondition("pivoting", True, "with pivoting=True")
_CUDNN = ArgCondition("implementation", "cudnn", 'with implementation="cudnn"')
#: a default lowering exists from jax 0.11.0; rocm lowers in 0.8.2-0.9.0.x and again from 0.10.0
BLOCK_SCALED = (
    Lowering("cuda"),
    Lowering("rocm", since="0.8.2", until="0.9.1"),
    Lowering("rocm", since="0.10.0"),
    Lowering("cpu", since="0.11.0"),
    Lowering("tpu", since="0.11.0"),
)


def limited(
    qualname: str,
    display: str,
    lowers_on: tuple[Lowering, ...],
    probe: ProbeCase | None,
    condition: Condition | None = None,
    trace_time: bool = False,
    public_since: str | None = None,
    error: str = "",
    removed_in: str | None = None,
) -> Api:
    return Api(
        qualname,
        display,
        lowers_on,
        error or MISSING_RULE,
        public_since=public_since,
        removed_in=removed_in,
        condition=condition,
        probe=probe,
        trace_time=trace_time,
    )


def square(
    qualname: str,
    display: str,
    lowers_on: tuple[Lowering, ...],
    call: str,
    n: int = 1,
    public_since: str | None = None,
) -> Api:
    return limited(qualname, display, lowers_on, ProbeCase(square_probe(call, n)), public_since=public_since)


ENTRIES: tuple[Api, ...] = (
    square("jax.numpy.linalg.eig", "jnp.linalg.eig", NO_TPU, "jnp.linalg.eig(*a)"),
    square("jax.numpy.linalg.eigvals", "jnp.linalg.eigvals", NO_TPU, "jnp.linalg.eigvals(*a)"),
    square("jax.lax.linalg.eig", "lax.linalg.eig", NO_TPU, "lax.linalg.eig(*a)"),
    limited(
        "jax.numpy.roots",
        "jnp.roots",
        NO_TPU,
        ProbeCase(
            "f = jax.jit(lambda p: jnp.roots(p, strip_zeros=False))\n"
            "args = (jax.ShapeDtypeStruct((4,), jnp.float32),)\n"
        ),
    ),
    square("jax.scipy.linalg.rsf2csf", "jax.scipy.linalg.rsf2csf", NO_TPU, "jax.scipy.linalg.rsf2csf(*a)", 2),
    square("jax.scipy.linalg.schur", "jax.scipy.linalg.schur", CPU_ONLY, "jax.scipy.linalg.schur(*a)"),
    square("jax.scipy.linalg.sqrtm", "jax.scipy.linalg.sqrtm", CPU_ONLY, "jax.scipy.linalg.sqrtm(*a)"),
    square(
        "jax.scipy.linalg.funm", "jax.scipy.linalg.funm", CPU_ONLY, "jax.scipy.linalg.funm(a[0], jnp.exp)"
    ),
    square(
        "jax.scipy.linalg.solve_sylvester",
        "jax.scipy.linalg.solve_sylvester",
        CPU_ONLY,
        "jax.scipy.linalg.solve_sylvester(*a)",
        3,
        public_since="0.8.0",
    ),
    square("jax.lax.linalg.schur", "lax.linalg.schur", CPU_ONLY, "lax.linalg.schur(*a)"),
    square(
        "jax.scipy.linalg.hessenberg",
        "jax.scipy.linalg.hessenberg",
        CPU_ONLY,
        "jax.scipy.linalg.hessenberg(*a)",
    ),
    square("jax.lax.linalg.hessenberg", "lax.linalg.hessenberg", CPU_ONLY, "lax.linalg.hessenberg(*a)"),
    limited(
        "jax.lax.linalg.qr",
        "lax.linalg.qr",
        NO_TPU,
        ProbeCase(square_probe("lax.linalg.qr(a[0], pivoting=True)")),
        condition=_PIVOTING,
    ),
    limited(
        "jax.scipy.linalg.qr",
        "jax.scipy.linalg.qr",
        NO_TPU,
        ProbeCase(square_probe("jax.scipy.linalg.qr(a[0], pivoting=True)")),
        condition=_PIVOTING,
    ),
    square("jax.lax.linalg.tridiagonal", "lax.linalg.tridiagonal", NO_TPU, "lax.linalg.tridiagonal(a[0])"),
    limited(
        "jax.nn.scaled_matmul",
        "jax.nn.scaled_matmul",
        BLOCK_SCALED,
        ProbeCase(
            "f = jax.jit(jax.nn.scaled_matmul)\n"
            "args = (jax.ShapeDtypeStruct((1, 128, 64), jnp.float8_e4m3fn),\n"
            "        jax.ShapeDtypeStruct((1, 128, 64), jnp.float8_e4m3fn),\n"
            "        jax.ShapeDtypeStruct((1, 128, 2), jnp.float8_e8m0fnu),\n"
            "        jax.ShapeDtypeStruct((1, 128, 2), jnp.float8_e8m0fnu))\n"
        ),
    ),
    limited(
        "jax.nn.scaled_dot_general",
        "jax.nn.scaled_dot_general",
        BLOCK_SCALED,
        ProbeCase(
            'cfg = jax.nn.get_scaled_dot_general_config("mxfp8")\n'
            "f = jax.jit(lambda a, b: jax.nn.scaled_dot_general(\n"
            "    a, b, (((2,), (2,)), ((0,), (0,))), configs=[cfg, cfg, cfg]))\n"
            "args = (jax.ShapeDtypeStruct((1, 128, 64), jnp.bfloat16),\n"
            "        jax.ShapeDtypeStruct((1, 128, 64), jnp.bfloat16))\n"
        ),
        condition=ArgCondition("configs", None, "with block-scale configs"),
    ),
    limited(
        "jax.nn.dot_product_attention",
        "jax.nn.dot_product_attention",
        (Lowering("cuda"),),
        ProbeCase(
            "f = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v,"
            ' implementation="cudnn"))\n'
            "args = tuple(jax.ShapeDtypeStruct((1, 8, 2, 16), jnp.bfloat16) for _ in range(3))\n",
            verifiable=False,
            reason="the cuDNN implementation fails at trace time on a machine without cuDNN",
        ),
        condition=_CUDNN,
        trace_time=True,
    ),
    # the XLA attention asks for float32 accumulation of float16 inputs (F16_F16_F32),
    # which CPU's dot_general lacks: under jit it fails to lower for cpu (bfloat16 is fine)
    limited(
        "jax.nn.dot_product_attention",
        "jax.nn.dot_product_attention",
        (Lowering("cuda"), Lowering("rocm"), Lowering("tpu")),
        ProbeCase(
            "f = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v))\n"
            "args = tuple(jax.ShapeDtypeStruct((1, 8, 2, 16), jnp.float16) for _ in range(3))\n"
        ),
        condition=ArgCondition(
            "query",
            ArrayDtype(
                tuple(f"{m}.{t}" for m in ("jax.numpy", "numpy") for t in ("float16", "half")), ("float16",)
            ),
            "of float16 arrays",
            position=0,
        ),
        error="ValueError: The precision 'F16_F16_F32' is not supported by dot_general on CPU",
    ),
    limited(
        "jax.experimental.sparse.linalg.spsolve",
        "sparse.linalg.spsolve",
        (Lowering("cpu"), Lowering("cuda")),
        ProbeCase(
            "from jax.experimental.sparse.linalg import spsolve\n"
            "f = jax.jit(spsolve)\n"
            "args = (jax.ShapeDtypeStruct((3,), jnp.float32), jax.ShapeDtypeStruct((3,), jnp.int32),\n"
            "        jax.ShapeDtypeStruct((4,), jnp.int32), jax.ShapeDtypeStruct((3,), jnp.float32))\n"
            "# the 3x3 identity in CSR form, for running it\n"
            "run_args = (jnp.ones(3), jnp.arange(3, dtype=jnp.int32), jnp.arange(4, dtype=jnp.int32), jnp.ones(3))\n",
            # the cpu lowering is a host callback, which a process whose default backend is
            # a GPU cannot lower for another platform
            artifacts=("is different from the lowering platform",),
        ),
    ),
    limited(
        "jax.experimental.rnn.lstm",
        "rnn.lstm",
        (Lowering("cuda"), Lowering("rocm")),
        ProbeCase(
            "from jax.experimental import rnn\n"
            "f = jax.jit(lambda x, h, c, w, s: rnn.lstm(x, h, c, w, s, input_size=4, hidden_size=8,\n"
            "    num_layers=1, dropout=0.0, bidirectional=False))\n"
            "args = (jax.ShapeDtypeStruct((2, 5, 4), jnp.float32), jax.ShapeDtypeStruct((1, 2, 8), jnp.float32),\n"
            "        jax.ShapeDtypeStruct((1, 2, 8), jnp.float32), jax.ShapeDtypeStruct((448,), jnp.float32),\n"
            "        jax.ShapeDtypeStruct((2,), jnp.int32))\n",
            verifiable=False,
            reason=(
                "a CPU-only jaxlib fails while tracing (its GPU RNN module is a stub); "
                "`probe --scan` reads the platforms from the lowering registry instead"
            ),
        ),
    ),
)

#: the primitives each entry binds whose lowerings are platform-specific
_PRIMITIVES = {
    "jax.numpy.linalg.eig": ("eig",),
    "jax.numpy.linalg.eigvals": ("eig",),
    "jax.lax.linalg.eig": ("eig",),
    "jax.numpy.roots": ("eig",),
    "jax.scipy.linalg.schur": ("schur",),
    "jax.scipy.linalg.sqrtm": ("schur",),
    "jax.scipy.linalg.funm": ("schur",),
    "jax.scipy.linalg.solve_sylvester": ("schur",),
    "jax.lax.linalg.schur": ("schur",),
    "jax.scipy.linalg.hessenberg": ("hessenberg",),
    "jax.lax.linalg.hessenberg": ("hessenberg",),
    "jax.lax.linalg.qr": ("geqp3",),
    "jax.scipy.linalg.qr": ("geqp3",),
    "jax.lax.linalg.tridiagonal": ("tridiagonal",),
    "jax.nn.scaled_matmul": ("scaled_matmul",),
    "jax.nn.scaled_dot_general": ("scaled_matmul",),
    "jax.experimental.sparse.linalg.spsolve": ("spsolve",),
    "jax.experimental.rnn.lstm": ("rnn_fwd", "rnn_bwd"),
    "jax.experimental.fused.fused": ("fused_call",),
    "jax._src.cudnn.scaled_matmul_stablehlo.scaled_matmul_wrapper": ("scaled_matmul",),
    "jax._src.cudnn.scaled_matmul_stablehlo.scaled_dot_general_wrapper": ("scaled_matmul",),
    "jax.nn.dot_product_attention": (
        "dot_product_attention_fwd",
        "dot_product_attention_bwd",
        "dot_product_attention_fp8_fwd",
        "dot_product_attention_fp8_bwd",
    ),
}
#: the primitives of entries with a condition (by key): only where the condition is all of the limit
_CONDITIONED_PRIMITIVES = {
    "jax.lax.linalg.qr[with pivoting=True]": ("geqp3",),
    "jax.scipy.linalg.qr[with pivoting=True]": ("geqp3",),
    "jax.nn.scaled_dot_general[with block-scale configs]": ("scaled_matmul",),
    'jax.nn.dot_product_attention[with implementation="cudnn"]': _PRIMITIVES["jax.nn.dot_product_attention"],
    "jax.numpy.poly[of a 2-D array]": ("eig",),
}


_SCALED_STABLEHLO = "jax._src.cudnn.scaled_matmul_stablehlo"

#: the private cuDNN entry points real code calls directly
PRIVATE: tuple[Api, ...] = (
    limited(
        f"{_SCALED_STABLEHLO}.scaled_matmul_wrapper",
        "scaled_matmul_stablehlo.scaled_matmul_wrapper",
        BLOCK_SCALED,
        ProbeCase(
            "from jax._src.cudnn import scaled_matmul_stablehlo as s\n"
            "f = jax.jit(s.scaled_matmul_wrapper)\n"
            "args = (jax.ShapeDtypeStruct((1, 128, 64), jnp.float8_e4m3fn),\n"
            "        jax.ShapeDtypeStruct((1, 128, 64), jnp.float8_e4m3fn),\n"
            "        jax.ShapeDtypeStruct((1, 128, 2), jnp.float8_e8m0fnu),\n"
            "        jax.ShapeDtypeStruct((1, 128, 2), jnp.float8_e8m0fnu))\n"
        ),
    ),
    limited(
        f"{_SCALED_STABLEHLO}.scaled_dot_general_wrapper",
        "scaled_matmul_stablehlo.scaled_dot_general_wrapper",
        BLOCK_SCALED,
        ProbeCase(
            "from jax._src.cudnn import scaled_matmul_stablehlo as s\n"
            'cfg = jax.nn.get_scaled_dot_general_config("mxfp8")\n'
            "f = jax.jit(lambda a, b: s.scaled_dot_general_wrapper(\n"
            "    a, b, (((2,), (2,)), ((0,), (0,))), configs=[cfg, cfg, cfg]))\n"
            "args = (jax.ShapeDtypeStruct((1, 128, 64), jnp.bfloat16),\n"
            "        jax.ShapeDtypeStruct((1, 128, 64), jnp.bfloat16))\n"
        ),
    ),
    limited(
        "jax._src.cudnn.fused_attention_stablehlo.dot_product_attention",
        "fused_attention_stablehlo.dot_product_attention",
        (Lowering("cuda"),),
        ProbeCase(
            "from jax._src.cudnn import fused_attention_stablehlo as fa\n"
            "f = jax.jit(lambda q, k, v: fa.dot_product_attention(q, k, v))\n"
            "args = tuple(jax.ShapeDtypeStruct((1, 8, 2, 16), jnp.bfloat16) for _ in range(3))\n",
            verifiable=False,
            reason="the cuDNN attention fails at trace time on a machine without cuDNN",
        ),
        trace_time=True,
        error="RuntimeError: cuDNN is not detected.",
    ),
)


def with_primitives(entries: tuple[Api, ...]) -> tuple[Api, ...]:
    """The entries with the primitives whose platform-specific lowerings make their limit."""
    return tuple(
        replace(a, primitives=_PRIMITIVES.get(a.key, ()) or _CONDITIONED_PRIMITIVES.get(a.key, ()))
        for a in entries
    )
