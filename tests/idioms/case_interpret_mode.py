"""TPU interpret mode given by a context manager instead of ``interpret=``.

Modelled on jax-ml/jax tests/pallas/tpu_pallas_interpret_test.py and
tests/pallas/tpu_pallas_interpret_distributed_test.py (kernels run under
``with pltpu.force_tpu_interpret_mode():`` on CPU, their ``pallas_call`` passing no
``interpret=``). The code is written for this suite.

Inside the block every ``pallas_call`` traced is interpreted, so it lowers on CPU; the
same call outside it, or under ``force_tpu_interpret_mode(None)`` (which sets nothing),
is compiled and only lowers where Pallas has a compiler (tpu here).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0


def test_kernel_under_interpret_mode():
    x = jnp.arange(8.0)
    with pltpu.force_tpu_interpret_mode():
        out = pl.pallas_call(double_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)
    np.testing.assert_allclose(out, np.arange(8.0) * 2)


def test_kernel_under_a_mode_that_sets_nothing():
    x = jnp.arange(8.0)
    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    with pltpu.force_tpu_interpret_mode(None):
        out = pl.pallas_call(double_kernel, out_shape=shape)(x)  # expect(cpu): JT003 pallas_call
    np.testing.assert_allclose(out, np.arange(8.0) * 2)


def test_kernel_outside_interpret_mode():
    x = jnp.arange(8.0)
    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    out = pl.pallas_call(double_kernel, out_shape=shape)(x)  # expect(cpu): JT003 pallas_call
    np.testing.assert_allclose(out, np.arange(8.0) * 2)
