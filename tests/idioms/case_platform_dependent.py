"""``lax.platform_dependent``: per-platform branches, of which only the needed one is lowered.

Modelled on jax-ml/jax jax/_src/lax/control_flow/conditionals.py (``platform_dependent``:
every branch is traced, only the branches for the lowering platforms are lowered) and its uses
in jax/_src/numpy/lax_numpy.py (``platform_dependent(a, default=..., mosaic=...)``) and
jax/_src/random.py (per-platform PRNG implementations). The code is written for this suite.

Because every branch is traced, a call that fails at trace time (the cuDNN attention checks
for cuDNN while tracing) fails on every platform even in a ``cuda=`` branch.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

RING = [(i, (i + 1) % 4) for i in range(4)]


def _sharded_jit(body):
    mesh = jax.make_mesh((4,), ("x",))
    x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
    # check_vma=False: precv's result and ppermute's are typed alike in the switch
    f = jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"), check_vma=False)
    return jax.jit(f)(x)


def _square():
    return jnp.eye(3) + 0.1 * jnp.arange(9.0).reshape(3, 3)


def _fp8_operands():
    a = jnp.ones((1, 128, 64), jnp.float8_e4m3fn)
    s = jnp.ones((1, 128, 2), jnp.float8_e8m0fnu)
    return a, a, s, s


def _portable_matmul(a, b, a_scales, b_scales):
    return jnp.zeros((1, 128, 128), jnp.float32)


def test_psend_precv_in_cuda_branch():
    def gpu_shift(a):
        token = lax.psend(a, "x", RING)
        return lax.precv(token, jax.ShapeDtypeStruct(a.shape, a.dtype), "x", RING)

    def body(a):
        return lax.platform_dependent(a, cuda=gpu_shift, default=lambda a: lax.ppermute(a, "x", RING))

    assert _sharded_jit(body).shape == (8,)


def test_pbroadcast_in_cuda_and_rocm_branches():
    def body(a):
        return lax.platform_dependent(
            a,
            cuda=lambda a: lax.pbroadcast(a, "x", 0),
            rocm=lambda a: lax.pbroadcast(a, "x", 0),
            default=lambda a: a * 2,
        )

    _sharded_jit(body)


def test_pbroadcast_in_default_branch():
    def body(a):
        return lax.platform_dependent(
            a,
            cuda=lambda a: a * 2,
            default=lambda a: lax.pbroadcast(a, "x", 0),  # expect: JT001 pbroadcast
        )

    _sharded_jit(body)


def test_pbroadcast_default_with_cpu_branch():
    # cpu has its own branch; tpu falls through to the default
    def body(a):
        return lax.platform_dependent(
            a,
            cpu=lambda a: a * 2,
            default=lambda a: lax.pbroadcast(a, "x", 0),  # expect(tpu): JT001 pbroadcast
        )

    _sharded_jit(body)


def test_scaled_matmul_in_cuda_branch():
    @jax.jit
    def dispatch(*ops):
        return lax.platform_dependent(*ops, cuda=jax.nn.scaled_matmul, default=_portable_matmul)

    assert dispatch(*_fp8_operands()).shape == (1, 128, 128)


def test_scaled_matmul_in_default_branch():
    @jax.jit
    def dispatch(*ops):
        return lax.platform_dependent(
            *ops,
            tpu=_portable_matmul,
            default=jax.nn.scaled_matmul,  # expect(cpu): JT003 scaled_matmul
        )

    dispatch(*_fp8_operands())


def test_eig_everywhere_but_tpu():
    def eigvals_real(a):
        return lax.platform_dependent(
            a,
            tpu=lambda a: jnp.linalg.eigvalsh(a @ a.T),
            default=lambda a: jnp.linalg.eigvals(a).real,
        )

    assert jax.jit(eigvals_real)(_square()).shape == (3,)


def test_eig_in_cpu_branch():
    def eigvals_real(a):
        return lax.platform_dependent(a, cpu=lambda a: jnp.linalg.eigvals(a).real, default=jnp.diagonal)

    assert jax.jit(eigvals_real)(_square()).shape == (3,)


def test_eig_in_default_next_to_cuda():
    def eigvals_real(a):
        return lax.platform_dependent(
            a,
            cuda=jnp.diagonal,
            default=lambda a: jnp.linalg.eigvals(a).real,  # expect(tpu): JT003 eigvals
        )

    assert jax.jit(eigvals_real)(_square()).shape == (3,)


def test_cudnn_attention_in_cuda_branch_is_still_traced():
    q = jnp.ones((1, 8, 2, 16), jnp.float32)

    def cudnn_attend(q):
        return jax.nn.dot_product_attention(  # expect: JT003 dot_product_attention
            q, q, q, implementation="cudnn"
        )

    def attend(q):
        return lax.platform_dependent(
            q, cuda=cudnn_attend, default=lambda q: jax.nn.dot_product_attention(q, q, q)
        )

    jax.jit(attend)(q)
