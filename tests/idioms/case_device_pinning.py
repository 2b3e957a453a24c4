"""Pinning a backend-limited computation to the host CPU, wherever the program runs.

Modelled on jax-ml/jax tests/api_test.py (``with jax.default_device(...)`` around computations
in ``test_jit_default_device``), jax-ml/jax jax/_src/api.py's ``jit(..., backend=...)`` and
qutip/qutip-jax src/qutip_jax/linalg.py (``jnp.linalg.eig`` for non-Hermitian operators, which
such code moves to the CPU because it has no TPU lowering), and jax-ml/jax
tests/pallas/pallas_shape_poly_test.py (kernels exported for TPU with ``jax.export.export(...,
platforms=["tpu"])`` and ``pl.lower_as_mlir``, also through ``jax.vmap`` and a variable). The
code is written for this suite.
"""

from __future__ import annotations

import warnings

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

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


# Lowered for named platforms, whatever the backend: ``jax.export.export(f, platforms=[...])``
# and Pallas's ``lower_as_mlir`` (for tpu unless told otherwise).


def _copy_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def _like(x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


TILE = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def _copy(x):
    return pl.pallas_call(_copy_kernel, out_shape=_like(x))(x)


def test_module_kernel_exported_for_tpu():
    exported = jax.export.export(jax.jit(_copy), platforms=["tpu"])(TILE)
    assert "tpu_custom_call" in exported.mlir_module()


def test_kernel_exported_for_tpu():
    def copy(x):
        return pl.pallas_call(_copy_kernel, out_shape=_like(x))(x)

    exported = jax.export.export(jax.jit(copy), platforms=["tpu"])(TILE)
    assert "tpu_custom_call" in exported.mlir_module()


def test_kernel_exported_through_a_variable_and_vmap():
    def copy(x):
        return pl.pallas_call(_copy_kernel, out_shape=_like(x))(x)

    batched = jax.jit(jax.vmap(copy))
    exported = jax.export.export(batched, platforms=("tpu",))(jax.ShapeDtypeStruct((2, 8, 128), jnp.float32))
    assert "tpu_custom_call" in exported.mlir_module()


def test_kernel_lowered_as_mlir():
    copy = pl.pallas_call(_copy_kernel, out_shape=TILE)
    assert "tpu_custom_call" in pl.lower_as_mlir(jax.jit(copy), TILE)


def test_kernel_compiled_for_the_backend():
    def copy(x):
        return pl.pallas_call(_copy_kernel, out_shape=_like(x))(x)  # expect(cpu): JT003 pallas_call

    jax.jit(copy)(jnp.ones((8, 128)))


def test_eig_exported_for_tpu():
    def decompose(a):
        return jnp.linalg.eig(a)  # expect: JT003 eig

    jax.export.export(jax.jit(decompose), platforms=["tpu"])(jax.ShapeDtypeStruct((3, 3), jnp.float32))
