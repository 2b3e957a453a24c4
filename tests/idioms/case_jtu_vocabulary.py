"""JAX's own test vocabulary (``jax._src.test_util``) gating backend-limited calls.

Modelled on jax-ml/jax tests/shard_map_test.py (``@jtu.run_on_devices("gpu")`` on the
psend/precv tests), tests/linalg_test.py (``@jtu.run_on_devices("cpu", "gpu")`` and
``@jtu.skip_on_devices("tpu")`` on the eig tests), tests/nn_test.py (``raise
unittest.SkipTest`` after ``jtu.is_device_rocm()`` / ``jtu.is_cuda_compute_capability_at_least``
checks before the cuDNN attention) and tests/fused_attention_stablehlo_multigpu_test.py
(``if not jtu.is_cuda_compute_capability_at_least("9.0")``). The code is written for this suite.
"""

from __future__ import annotations

import unittest

import jax
import jax.numpy as jnp
from absl.testing import absltest
from jax import lax
from jax._src import test_util as jtu
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

RING = [(i, (i + 1) % 4) for i in range(4)]


def _sharded():
    mesh = jax.make_mesh((4,), ("x",))
    return mesh, jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))


def _run_sharded(body):
    mesh, x = _sharded()
    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)


def _qkv():
    q = jnp.ones((1, 8, 2, 16), jnp.float32)
    return q, q, q


def _square():
    return jnp.eye(3) + 0.1 * jnp.arange(9.0).reshape(3, 3)


class RunOnDevicesTest(jtu.JaxTestCase):
    @jtu.run_on_devices("gpu")
    def test_psend_precv_only_on_gpu(self):
        mesh, x = _sharded()

        @jax.jit
        @jax.shard_map(mesh=mesh, in_specs=P("x"), out_specs=P("x"))
        def shift(a):
            token = lax.psend(a, "x", RING)
            return lax.precv(token, jax.ShapeDtypeStruct.like(a), "x", RING)

        self.assertEqual(shift(x).shape, x.shape)

    @jtu.run_on_devices("cuda")
    def test_cudnn_attention_only_on_cuda(self):
        q, k, v = _qkv()
        out = jax.nn.dot_product_attention(q, k, v, implementation="cudnn")
        self.assertEqual(out.shape, q.shape)

    @jtu.run_on_devices("cpu", "gpu")
    def test_eig_on_cpu_and_gpu(self):
        w, _ = jnp.linalg.eig(_square())
        self.assertEqual(w.shape, (3,))

    @jtu.run_on_devices("cpu", "gpu")
    def test_pbroadcast_on_cpu_and_gpu(self):
        # cpu is among the enabled devices, so the GPU-only collective lowers there
        mesh, x = _sharded()
        f = jax.shard_map(
            lambda a: lax.pbroadcast(a, "x", 0),  # expect(cpu): JT001 pbroadcast
            mesh=mesh,
            in_specs=P("x"),
            out_specs=P("x"),
        )
        jax.jit(f)(x)

    @jtu.skip_on_devices("tpu")
    def test_eigvals_skipped_on_tpu(self):
        self.assertEqual(jnp.linalg.eigvals(_square()).shape, (3,))

    @jtu.skip_on_devices("tpu")
    def test_psend_skipped_only_on_tpu(self):
        mesh, x = _sharded()

        def body(a):
            lax.psend(a, "x", RING)  # expect(cpu): JT001 psend
            return a

        jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)

    def test_eig_unguarded(self):
        w, _ = jnp.linalg.eig(_square())  # expect(tpu): JT003 eig
        self.assertEqual(w.shape, (3,))

    def test_pbroadcast_unguarded(self):
        _run_sharded(lambda a: lax.pbroadcast(a, "x", 0))  # expect: JT001 pbroadcast


class DeviceMatchesTest(absltest.TestCase):
    def test_skip_test_unless_gpu(self):
        if not jtu.test_device_matches(["gpu"]):
            self.skipTest("psend/precv need a GPU")
        mesh, x = _sharded()

        def body(a):
            token = lax.psend(a, "x", RING)
            return lax.precv(token, jax.ShapeDtypeStruct.like(a), "x", RING)

        jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)

    def test_raise_skip_unless_cpu_or_gpu(self):
        if not jtu.test_device_matches(["cpu", "gpu"]):
            raise unittest.SkipTest("eig has no TPU lowering")
        w = jax.jit(jnp.linalg.eigvals)(_square())
        self.assertEqual(w.shape, (3,))

    def test_raise_skip_on_tpu_leaves_cpu(self):
        if jtu.test_device_matches(["tpu"]):
            raise unittest.SkipTest("not on TPU")
        _run_sharded(lambda a: lax.pbroadcast(a, "x", 1))  # expect(cpu): JT001 pbroadcast

    def test_device_under_test_branch(self):
        if jtu.device_under_test() == "gpu":
            out = _run_sharded(lambda a: lax.pbroadcast(a, "x", 0))
        else:
            out = _run_sharded(lambda a: lax.ppermute(a, "x", RING))
        self.assertEqual(out.shape, (8,))

    def test_device_under_test_not_tpu(self):
        if jtu.device_under_test() != "tpu":
            w, _ = jnp.linalg.eig(_square())
            self.assertEqual(w.shape, (3,))


class CudaPredicatesTest(jtu.JaxTestCase):
    def test_is_device_cuda(self):
        q, k, v = _qkv()
        if jtu.is_device_cuda():
            out = jax.nn.dot_product_attention(q, k, v, implementation="cudnn")
        else:
            out = jax.nn.dot_product_attention(q, k, v, implementation="xla")
        self.assertEqual(out.shape, q.shape)

    def test_is_device_rocm_skip(self):
        # like nn_test: rocm is skipped, but cpu and tpu still reach the cuDNN call
        if jtu.is_device_rocm():
            raise unittest.SkipTest("cuDNN not available on ROCm.")
        q, k, v = _qkv()
        jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # expect: JT003 dot_product_attention

    def test_compute_capability_true_branch_only_on_cuda(self):
        q, k, v = _qkv()
        if jtu.is_cuda_compute_capability_at_least("9.0"):
            out = jax.nn.dot_product_attention(q, k, v, implementation="cudnn")
        else:
            # the false branch runs everywhere, cuda below sm90 included
            jnp.linalg.eig(_square())  # expect(tpu): JT003 eig
            out = jax.nn.dot_product_attention(q, k, v)
        self.assertEqual(out.shape, q.shape)

    def test_compute_capability_early_skip(self):
        if not jtu.is_cuda_compute_capability_at_least("8.0"):
            self.skipTest("Needs compute capability 8.0 or higher.")
        q, k, v = _qkv()
        jax.nn.dot_product_attention(q, k, v, implementation="cudnn")


if __name__ == "__main__":
    absltest.main(testLoader=jtu.JaxTestLoader())
