"""JT003 backend-limited-api: linear algebra, scaled matmuls and cuDNN attention limited to some platforms."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from ..apis import CPU_ONLY, NO_TPU, Api, ArgCondition, Lowering, ProbeCase, square_probe
from .base import GUARD, SKIP_TEST, SUPPRESS, CheckContext, Example, Rule, Violation

_MISSING_RULE = "NotImplementedError: MLIR translation rule for primitive not found"
_PIVOTING = ArgCondition("pivoting", True, "with pivoting=True")
_CUDNN = ArgCondition("implementation", "cudnn", 'with implementation="cudnn"')
#: a default lowering exists from jax 0.11.0; rocm lowers in 0.8.2-0.9.0.x and again from 0.10.0
_BLOCK_SCALED = (
    Lowering("cuda"),
    Lowering("rocm", since="0.8.2", until="0.9.1"),
    Lowering("rocm", since="0.10.0"),
    Lowering("cpu", since="0.11.0"),
    Lowering("tpu", since="0.11.0"),
)


def _limited(
    qualname: str,
    display: str,
    lowers_on: tuple[Lowering, ...],
    probe: ProbeCase | None,
    condition: ArgCondition | None = None,
    trace_time: bool = False,
    public_since: str | None = None,
) -> Api:
    return Api(
        qualname,
        display,
        lowers_on,
        _MISSING_RULE,
        public_since=public_since,
        condition=condition,
        probe=probe,
        trace_time=trace_time,
    )


def _square(
    qualname: str,
    display: str,
    lowers_on: tuple[Lowering, ...],
    call: str,
    n: int = 1,
    public_since: str | None = None,
) -> Api:
    return _limited(qualname, display, lowers_on, ProbeCase(square_probe(call, n)), public_since=public_since)


_ENTRIES: tuple[Api, ...] = (
    _square("jax.numpy.linalg.eig", "jnp.linalg.eig", NO_TPU, "jnp.linalg.eig(*a)"),
    _square("jax.numpy.linalg.eigvals", "jnp.linalg.eigvals", NO_TPU, "jnp.linalg.eigvals(*a)"),
    _square("jax.lax.linalg.eig", "lax.linalg.eig", NO_TPU, "lax.linalg.eig(*a)"),
    _limited(
        "jax.numpy.roots",
        "jnp.roots",
        NO_TPU,
        ProbeCase(
            "f = jax.jit(lambda p: jnp.roots(p, strip_zeros=False))\n"
            "args = (jax.ShapeDtypeStruct((4,), jnp.float32),)\n"
        ),
    ),
    _square(
        "jax.scipy.linalg.rsf2csf", "jax.scipy.linalg.rsf2csf", NO_TPU, "jax.scipy.linalg.rsf2csf(*a)", 2
    ),
    _square("jax.scipy.linalg.schur", "jax.scipy.linalg.schur", CPU_ONLY, "jax.scipy.linalg.schur(*a)"),
    _square("jax.scipy.linalg.sqrtm", "jax.scipy.linalg.sqrtm", CPU_ONLY, "jax.scipy.linalg.sqrtm(*a)"),
    _square(
        "jax.scipy.linalg.funm", "jax.scipy.linalg.funm", CPU_ONLY, "jax.scipy.linalg.funm(a[0], jnp.exp)"
    ),
    _square(
        "jax.scipy.linalg.solve_sylvester",
        "jax.scipy.linalg.solve_sylvester",
        CPU_ONLY,
        "jax.scipy.linalg.solve_sylvester(*a)",
        3,
        public_since="0.8.0",
    ),
    _square("jax.lax.linalg.schur", "lax.linalg.schur", CPU_ONLY, "lax.linalg.schur(*a)"),
    _square(
        "jax.scipy.linalg.hessenberg",
        "jax.scipy.linalg.hessenberg",
        CPU_ONLY,
        "jax.scipy.linalg.hessenberg(*a)",
    ),
    _square("jax.lax.linalg.hessenberg", "lax.linalg.hessenberg", CPU_ONLY, "lax.linalg.hessenberg(*a)"),
    _limited(
        "jax.lax.linalg.qr",
        "lax.linalg.qr",
        NO_TPU,
        ProbeCase(square_probe("lax.linalg.qr(a[0], pivoting=True)")),
        condition=_PIVOTING,
    ),
    _limited(
        "jax.scipy.linalg.qr",
        "jax.scipy.linalg.qr",
        NO_TPU,
        ProbeCase(square_probe("jax.scipy.linalg.qr(a[0], pivoting=True)")),
        condition=_PIVOTING,
    ),
    _square("jax.lax.linalg.tridiagonal", "lax.linalg.tridiagonal", NO_TPU, "lax.linalg.tridiagonal(a[0])"),
    _limited(
        "jax.nn.scaled_matmul",
        "jax.nn.scaled_matmul",
        _BLOCK_SCALED,
        ProbeCase(
            "f = jax.jit(jax.nn.scaled_matmul)\n"
            "args = (jax.ShapeDtypeStruct((1, 128, 64), jnp.float8_e4m3fn),\n"
            "        jax.ShapeDtypeStruct((1, 128, 64), jnp.float8_e4m3fn),\n"
            "        jax.ShapeDtypeStruct((1, 128, 2), jnp.float8_e8m0fnu),\n"
            "        jax.ShapeDtypeStruct((1, 128, 2), jnp.float8_e8m0fnu))\n"
        ),
    ),
    _limited(
        "jax.nn.scaled_dot_general",
        "jax.nn.scaled_dot_general",
        _BLOCK_SCALED,
        ProbeCase(
            'cfg = jax.nn.get_scaled_dot_general_config("mxfp8")\n'
            "f = jax.jit(lambda a, b: jax.nn.scaled_dot_general(\n"
            "    a, b, (((2,), (2,)), ((0,), (0,))), configs=[cfg, cfg, cfg]))\n"
            "args = (jax.ShapeDtypeStruct((1, 128, 64), jnp.bfloat16),\n"
            "        jax.ShapeDtypeStruct((1, 128, 64), jnp.bfloat16))\n"
        ),
        condition=ArgCondition("configs", None, "with block-scale configs"),
    ),
    _limited(
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
    _limited(
        "jax.experimental.sparse.linalg.spsolve",
        "sparse.linalg.spsolve",
        (Lowering("cpu"), Lowering("cuda")),
        ProbeCase(
            "from jax.experimental.sparse.linalg import spsolve\n"
            "f = jax.jit(spsolve)\n"
            "args = (jax.ShapeDtypeStruct((4,), jnp.float32), jax.ShapeDtypeStruct((4,), jnp.int32),\n"
            "        jax.ShapeDtypeStruct((4,), jnp.int32), jax.ShapeDtypeStruct((3,), jnp.float32))\n"
        ),
    ),
    _limited(
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
    "jax.nn.dot_product_attention": (
        "dot_product_attention_fwd",
        "dot_product_attention_bwd",
        "dot_product_attention_fp8_fwd",
        "dot_product_attention_fp8_bwd",
    ),
}
APIS: tuple[Api, ...] = tuple(replace(a, primitives=_PRIMITIVES.get(a.qualname, ())) for a in _ENTRIES)

_EIG = "import jax.numpy as jnp\n\nw, v = jnp.linalg.eig(a)\n"
_EIG_FIXED = """\
import jax.numpy as jnp
import jax

if jax.default_backend() in ("cpu", "gpu", "cuda", "rocm"):
    w, v = jnp.linalg.eig(a)
else:
    raise NotImplementedError("jnp.linalg.eig requires one of: cpu, cuda, rocm")
"""
_SCHUR = """\
import jax.scipy.linalg


def test_schur_is_upper_triangular(a):
    t, z = jax.scipy.linalg.schur(a)
    assert (t == t.triu()).all()
"""
_SCHUR_FIXED = """\
import jax.scipy.linalg
import pytest


@pytest.mark.skipif(not jax.default_backend() in ("cpu",), reason="jax.scipy.linalg.schur requires one of: cpu")
def test_schur_is_upper_triangular(a):
    t, z = jax.scipy.linalg.schur(a)
    assert (t == t.triu()).all()
"""


class BackendLimitedApi(Rule):
    code = "JT003"
    name = "backend-limited-api"
    summary = "API that lowers only on some platforms used while a target cannot lower it"
    message = "`{api}`{condition} only lowers on {lowers}; {failing} would fail to lower"
    why = (
        "Some public JAX APIs have lowering rules for only some platforms: eigen-"
        "decompositions have no TPU lowering, `schur`, `sqrtm` and `hessenberg` lower "
        "only on CPU, the block-scaled matmuls and the cuDNN attention need a GPU. "
        "The failure appears only when the program is compiled for that platform."
    )
    severity = "warning"
    apis = APIS
    fixes = (GUARD, SKIP_TEST, SUPPRESS)
    autofix = "guard"
    invalid = (
        Example(_EIG, ("JT003",), fixed=_EIG_FIXED, targets=("tpu",)),
        Example(
            _SCHUR,
            ("JT003",),
            fixed=_SCHUR_FIXED,
            fix="skip-test",
            targets=("cpu", "gpu"),
            path="tests/test_schur.py",
        ),
    )
    valid = (
        Example(_EIG, targets=("cpu", "cuda")),
        # a re-export (here through a wrapping helper): the API runs where importers call it
        Example(
            "from jax.numpy import linalg\n\nfrom ._compat import wrap\n\n"
            'eig = wrap(linalg.eig, module="linalg.")\n__all__ = ["eig"]\n',
            targets=("tpu",),
        ),
        Example("from jax import lax\n\nq, r = lax.linalg.qr(a, pivoting=False)\n", targets=("tpu",)),
    )

    def check(self, ctx: CheckContext) -> Iterator[Violation]:
        yield from self.limited_calls(ctx)
