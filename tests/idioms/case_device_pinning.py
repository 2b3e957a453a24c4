"""Pinning a backend-limited computation to the host CPU, wherever the program runs.

Modelled on jax-ml/jax tests/api_test.py (``with jax.default_device(...)`` around computations
in ``test_jit_default_device``), jax-ml/jax jax/_src/api.py's ``jit(..., backend=...)`` and
qutip/qutip-jax src/qutip_jax/linalg.py (``jnp.linalg.eig`` for non-Hermitian operators, which
such code moves to the CPU because it has no TPU lowering). The code is written for this suite.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp

CPU = jax.devices("cpu")[0]


def _square():
    return jnp.eye(3) + 0.1 * jnp.arange(9.0).reshape(3, 3)


def test_default_device_cpu():
    with jax.default_device(jax.devices("cpu")[0]):
        w, _ = jnp.linalg.eig(_square())
    assert w.shape == (3,)


def test_default_device_module_constant():
    with jax.default_device(CPU):
        w = jnp.linalg.eigvals(_square())
    assert w.shape == (3,)


def _eig_values(a):
    return jnp.linalg.eigvals(a)


def test_jit_backend_cpu():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        f = jax.jit(_eig_values, backend="cpu")
        w = f(_square())
    assert w.shape == (3,)


def test_jit_backend_cpu_lambda():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        w, _ = jax.jit(lambda a: jnp.linalg.eig(a), backend="cpu")(_square())
    assert w.shape == (3,)


def test_unpinned_eig():
    w, _ = jnp.linalg.eig(_square())  # expect(tpu): JT003 eig
    assert w.shape == (3,)


def test_default_device_not_cpu():
    # the default backend's first device: a TPU on a TPU host
    with jax.default_device(jax.devices()[0]):
        w = jnp.linalg.eigvals(_square())  # expect(tpu): JT003 eigvals
    assert w.shape == (3,)


def test_after_pinned_block():
    with jax.default_device(CPU):
        a = _square()
    # the block has ended: this runs on the default backend
    w = jnp.linalg.eigvals(a)  # expect(tpu): JT003 eigvals
    assert w.shape == (3,)


def test_jit_without_backend():
    w = jax.jit(_eig_values_default)(_square())
    assert w.shape == (3,)


def _eig_values_default(a):
    return jnp.linalg.eigvals(a)  # expect(tpu): JT003 eigvals
