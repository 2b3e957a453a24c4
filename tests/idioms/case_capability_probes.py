"""Capability probes, skip helpers, backend flags and inputs committed to a device.

Modelled on google/qwix tests/_src/core/mxfp_dot_test.py (a cached probe that jits
``jax.nn.scaled_matmul`` inside ``try/except NotImplementedError`` and returns whether it
worked, and a module helper ``_skip_if_scaled_matmul_unsupported(self)`` that skips the
test calling it) and qwix/_src/core/mxfp_dot.py (a library function whose ``try/except
Exception`` does not see a failed lowering once an outer ``jit`` traces it); on
mlcommons/algorithmic-efficiency algoperf/workloads/librispeech_deepspeech/librispeech_jax/
models.py (``if jax.devices()[0].platform != "gpu": use_cuda = False`` before ``if use_cuda:
rnn.lstm(...)``); and on facebookresearch/fmmax src/fmmax/utils.py and tests/fmmax/
test_utils.py (``if jax.devices()[0] == jax.devices("cpu")[0]:`` and
``jnp.linalg.eig(jax.device_put(x, device=jax.devices("cpu")[0]))``). The code is written
for this suite.
"""

from __future__ import annotations

import functools
import unittest

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import rnn


def _operands():
    x = jnp.ones((1, 32, 64), jnp.float32)
    scale = jnp.ones((1, 32, 2), jnp.float32)
    return x, x, scale, scale


def _square():
    return jnp.eye(3) + 0.1 * jnp.arange(9.0).reshape(3, 3)


@functools.cache
def _scaled_matmul_supported() -> bool:
    """Whether the backend lowers scaled_matmul: compiled inside the try, so the error is caught."""
    x = jnp.zeros((1, 1, 32), jnp.float32)
    scale = jnp.ones((1, 1, 1), jnp.float32)
    try:
        jax.jit(jax.nn.scaled_matmul)(x, x, scale, scale).block_until_ready()
        return True
    except NotImplementedError:
        return False


def _skip_if_scaled_matmul_unsupported(test_case: unittest.TestCase) -> None:
    if not _scaled_matmul_supported():
        test_case.skipTest("jax.nn.scaled_matmul has no lowering for this platform")


def mxfp_dot(lhs, rhs, lhs_scale, rhs_scale):
    """A library function: its handler sees an eager failure, not one an outer jit lowers later."""
    try:
        return jax.nn.scaled_matmul(lhs, rhs, lhs_scale, rhs_scale)  # expect: JT003 scaled_matmul
    except Exception:
        return None


class ScaledMatmulTest(unittest.TestCase):
    def test_after_the_skip_helper(self):
        _skip_if_scaled_matmul_unsupported(self)
        out = jax.nn.scaled_matmul(*_operands())
        self.assertEqual(out.shape, (1, 32, 32))

    def test_without_the_helper(self):
        out = jax.nn.scaled_matmul(*_operands())  # expect: JT003 scaled_matmul
        self.assertEqual(out.shape, (1, 32, 32))


def test_library_try_does_not_catch_a_lowering_under_jit():
    with pytest.raises(NotImplementedError):
        jax.jit(mxfp_dot)(*_operands())


def lstm_or_reference(x, use_cuda=True):
    """Only GPUs keep the flag set; elsewhere the reference path runs."""
    if jax.devices()[0].platform != "gpu":
        use_cuda = False
    if use_cuda:
        h = jnp.zeros((1, x.shape[0], 8), x.dtype)
        weights = jnp.zeros((448,), x.dtype)
        seq = jnp.full((x.shape[0],), x.shape[1], jnp.int32)
        y, _, _ = rnn.lstm(x, h, h, weights, seq, 4, 8, 1, 0.0, False)
        return y
    return x


def test_flag_cleared_off_gpu():
    x = jnp.ones((2, 5, 4), jnp.float32)
    assert lstm_or_reference(x).shape == (2, 5, 4)


def eig_on_host(matrix):
    """Eigenvalues where the default device is a CPU; elsewhere another path."""
    if jax.devices()[0] == jax.devices("cpu")[0]:
        return jnp.linalg.eig(matrix)
    raise NotImplementedError("only on a CPU host")


def test_eig_when_the_default_device_is_the_cpu():
    w, _ = eig_on_host(_square())
    assert w.shape == (3,)


def test_eig_of_an_input_committed_to_the_cpu():
    w, v = jnp.linalg.eig(jax.device_put(_square(), device=jax.devices("cpu")[0]))
    assert w.shape == (3,) and v.shape == (3, 3)


def test_jacobian_of_an_input_committed_to_the_cpu():
    host = jax.devices("cpu")[0]
    jac = jax.jacrev(jnp.linalg.eigvals, holomorphic=True)(jax.device_put(_square() + 0j, host))
    assert jac.shape == (3, 3, 3)


def test_eig_of_an_uncommitted_input():
    w, _ = jnp.linalg.eig(_square())  # expect(tpu): JT003 eig
    assert w.shape == (3,)
