"""JT003 backend-limited-api: linear algebra, scaled matmuls and cuDNN attention limited to some platforms."""

from __future__ import annotations

from collections.abc import Iterator

from .base import GUARD, SKIP_TEST, SUPPRESS, CheckContext, Example, Rule, Violation
from .jt003_catalog import ENTRIES, PRIVATE, with_primitives
from .jt003_conditional import ALGORITHMS, EXPERIMENTAL, PRESETS

APIS = with_primitives((*ENTRIES, *PRESETS, *ALGORITHMS, *EXPERIMENTAL, *PRIVATE))

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

_PRESET = """\
from jax import lax

PRECISION = lax.DotAlgorithmPreset.TF32_TF32_F32


def project(a, b):
    return lax.dot(a, b, precision=PRECISION)
"""
_PRESET_FIXED = """\
from jax import lax
import jax

PRECISION = lax.DotAlgorithmPreset.TF32_TF32_F32


def project(a, b):
    if jax.default_backend() in ("tpu", "gpu", "cuda", "rocm"):
        return lax.dot(a, b, precision=PRECISION)
    else:
        raise NotImplementedError("lax.dot requires one of: cuda, rocm, tpu")
"""
_PALLAS = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

add_one = pl.pallas_call(kernel, out_shape=out, compiler_params=pltpu.CompilerParams())
"""
_PALLAS_FIXED = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import jax

if jax.default_backend() in ("tpu",):
    add_one = pl.pallas_call(kernel, out_shape=out, compiler_params=pltpu.CompilerParams())
else:
    raise NotImplementedError("pallas_call requires one of: tpu")
"""
_SVD = """\
from jax import lax
from jax.lax.linalg import SvdAlgorithm

u, s, vt = lax.linalg.svd(a, algorithm=SvdAlgorithm.QR)
"""
_SVD_FIXED = """\
from jax import lax
from jax.lax.linalg import SvdAlgorithm
import jax

if jax.default_backend() in ("cpu", "gpu", "cuda", "rocm"):
    u, s, vt = lax.linalg.svd(a, algorithm=SvdAlgorithm.QR)
else:
    raise NotImplementedError("lax.linalg.svd requires one of: cpu, cuda, rocm")
"""
_POLY = "import jax.numpy as jnp\n\ncoeffs = jnp.poly(jnp.eye(n))\n"
_POLY_FIXED = """\
import jax.numpy as jnp
import jax

if jax.default_backend() in ("cpu", "gpu", "cuda", "rocm"):
    coeffs = jnp.poly(jnp.eye(n))
else:
    raise NotImplementedError("jnp.poly requires one of: cpu, cuda, rocm")
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
        "Others are limited only by an argument: a dot-algorithm preset CPU has no "
        "algorithm for, a decomposition's `algorithm=`/`implementation=`, Pallas kernels "
        "outside interpret mode or with another platform's `compiler_params`. Those are "
        "reported only where the call visibly passes that argument (read through "
        "`functools.partial`, variables, module constants and import aliases). "
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
        # a preset through a module constant: CPU has no TF32 algorithm
        Example(_PRESET, ("JT003",), fixed=_PRESET_FIXED, targets=("cpu",)),
        # TPU compiler params outside interpret mode: neither CPU nor a GPU lowers it
        Example(_PALLAS, ("JT003",), fixed=_PALLAS_FIXED, targets=("cpu", "cuda")),
        # an enum member through an import alias: only POLAR runs on TPU (jax 0.8.1+)
        Example(_SVD, ("JT003",), fixed=_SVD_FIXED, targets=("tpu",)),
        # roots of a visibly square matrix's characteristic polynomial: an eig
        Example(_POLY, ("JT003",), fixed=_POLY_FIXED, targets=("tpu",)),
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
        # presets CPU has, and a precision that is not visible here
        Example(
            "import jax.numpy as jnp\n\n\ndef project(a, b, precision):\n"
            '    c = jnp.dot(a, b, precision="BF16_BF16_F32")\n'
            "    return jnp.matmul(c, b, precision=precision)\n",
            targets=("cpu",),
        ),
        # interpret mode, also when chosen by the backend
        Example(
            "import jax\nfrom jax.experimental import pallas as pl\n\n"
            "debug = pl.pallas_call(kernel, out_shape=out, interpret=True)\n"
            'fast = pl.pallas_call(kernel, out_shape=out, interpret=jax.default_backend() == "cpu")\n',
            targets=("cpu",),
        ),
        # the default algorithm, and a polynomial's roots of coefficients whose shape is not visible
        Example(
            "import jax.numpy as jnp\nfrom jax import lax\n\n"
            "u, s, vt = lax.linalg.svd(a, algorithm=lax.linalg.SvdAlgorithm.DEFAULT)\n"
            "coeffs = jnp.poly(zeros)\n",
            targets=("tpu",),
        ),
    )

    def check(self, ctx: CheckContext) -> Iterator[Violation]:
        yield from self.limited_calls(ctx)
