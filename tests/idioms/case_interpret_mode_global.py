"""TPU interpret mode set for the whole process when the module is imported on CPU.

Modelled on tom-pollak/trix pallas/ref_reduce_scatter.py (``if jax.default_backend() ==
"cpu": pltpu.set_tpu_interpret_mode(pltpu.InterpretParams(...))`` at module level, then
kernels whose ``pallas_call`` passes no ``interpret=``). The code is written for this suite.

On CPU every later ``pallas_call`` of the process is interpreted, so it lowers; on TPU
the statement does not run and the kernel is compiled, which TPU lowers too: nothing is
reported on either target.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

if jax.default_backend() == "cpu":
    pltpu.set_tpu_interpret_mode(pltpu.InterpretParams())


def add_one_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0


def add_one(x):
    return pl.pallas_call(add_one_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def test_kernel_in_a_module_that_set_interpret_mode():
    np.testing.assert_allclose(add_one(jnp.zeros(8)), np.ones(8))
