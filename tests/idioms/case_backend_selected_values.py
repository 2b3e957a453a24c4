"""Argument values chosen by a backend test: the cuDNN implementation and QR pivoting.

Modelled on google/praxis praxis/layers/gpu_fast_attention.py (``jax.nn.dot_product_attention(...,
implementation='cudnn')`` passed unconditionally), google/flax flax/nnx/nn/attention.py
(``jax.nn.dot_product_attention`` with the implementation left to JAX) and
AI-Hypercomputer/maxtext src/maxtext/layers/attention_op.py (attention kernels selected per
hardware). The code is written for this suite.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.linalg
from jax import lax

IMPL = "cudnn"
PORTABLE_IMPL = None
PIVOTING = True
CUDNN_IF_GPU = "cudnn" if jax.default_backend() == "gpu" else None


def _qkv():
    q = jnp.ones((1, 8, 2, 16), jnp.float32)
    return q, q, q


def _square():
    return jnp.eye(3) + 0.1 * jnp.arange(9.0).reshape(3, 3)


def test_impl_chosen_by_backend():
    q, k, v = _qkv()
    impl = "cudnn" if jax.default_backend() == "gpu" else "xla"
    out = jax.nn.dot_product_attention(q, k, v, implementation=impl)
    assert out.shape == q.shape


def test_impl_chosen_by_backend_inline():
    q, k, v = _qkv()
    out = jax.nn.dot_product_attention(
        q, k, v, implementation="cudnn" if jax.default_backend() == "gpu" else None
    )
    assert out.shape == q.shape


def test_impl_module_constant_chosen_by_backend():
    q, k, v = _qkv()
    out = jax.nn.dot_product_attention(q, k, v, implementation=CUDNN_IF_GPU)
    assert out.shape == q.shape


def test_impl_chosen_the_wrong_way_round():
    # cudnn everywhere except TPU: cpu still gets it
    q, k, v = _qkv()
    impl = "xla" if jax.default_backend() == "tpu" else "cudnn"
    jax.nn.dot_product_attention(q, k, v, implementation=impl)  # expect(cpu): JT003 dot_product_attention


def test_impl_unconditional_local():
    q, k, v = _qkv()
    impl = "cudnn"
    jax.nn.dot_product_attention(q, k, v, implementation=impl)  # expect: JT003 dot_product_attention


def test_impl_module_constant():
    q, k, v = _qkv()
    jax.nn.dot_product_attention(q, k, v, implementation=IMPL)  # expect: JT003 dot_product_attention


def test_impl_portable_values():
    q, k, v = _qkv()
    a = jax.nn.dot_product_attention(q, k, v, implementation="xla")
    b = jax.nn.dot_product_attention(q, k, v, implementation=PORTABLE_IMPL)
    c = jax.nn.dot_product_attention(q, k, v)
    assert a.shape == b.shape == c.shape


def test_pivoting_chosen_by_backend():
    pivoting = jax.default_backend() != "tpu"
    q, _, _ = jax.scipy.linalg.qr(_square(), pivoting=True) if pivoting else (*jnp.linalg.qr(_square()), None)
    assert q.shape == (3, 3)


def test_pivoting_ifexp_value():
    pivot = True if jax.default_backend() == "cpu" else False  # noqa: SIM210
    out = lax.linalg.qr(_square(), pivoting=pivot)
    assert out[0].shape == (3, 3)


def test_pivoting_module_constant():
    _, _, p = jax.scipy.linalg.qr(_square(), pivoting=PIVOTING)  # expect(tpu): JT003 qr
    assert p.shape == (3,)


def test_pivoting_false():
    q, _ = jax.scipy.linalg.qr(_square(), pivoting=False)
    assert q.shape == (3, 3)
