"""unittest and pytest skips that gate backend-limited calls: early exits, decorators, fixtures.

Modelled on jax-ml/jax tests/nn_test.py (``raise unittest.SkipTest`` as an early exit
before the cuDNN attention), apple/axlearn axlearn/common/flash_attention/decoding_test.py
(``if jax.default_backend() == "gpu": ... elif ... == "tpu": ... elif ... else:`` chains),
AI-Hypercomputer/maxtext src/maxtext/optimizers/muon_test.py (``if jax.default_backend() ==
"tpu":`` in a test) and keras-team/keras tests that ``@pytest.mark.skipif(backend() != ...)``.
The code is written for this suite.
"""

from __future__ import annotations

import sys
import unittest

import jax
import jax.numpy as jnp
import jax.scipy.linalg
import pytest
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

RING = [(i, (i + 1) % 4) for i in range(4)]


def _sharded():
    mesh = jax.make_mesh((4,), ("x",))
    return mesh, jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))


def _square():
    return jnp.eye(3) + 0.1 * jnp.arange(9.0).reshape(3, 3)


def _run_sharded(body):
    mesh, x = _sharded()
    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)


class EarlyExitTest(unittest.TestCase):
    def test_skip_test_unless_gpu(self):
        if jax.default_backend() != "gpu":
            self.skipTest("psend needs a GPU")

        def body(a):
            token = lax.psend(a, "x", RING)
            return lax.precv(token, jax.ShapeDtypeStruct.like(a), "x", RING)

        _run_sharded(body)

    def test_raise_skip_on_tpu(self):
        if jax.default_backend() == "tpu":
            raise unittest.SkipTest("eig has no TPU lowering")
        w, _ = jnp.linalg.eig(_square())
        self.assertEqual(w.shape, (3,))

    def test_skip_only_cpu_leaves_tpu(self):
        if jax.default_backend() == "cpu":
            self.skipTest("slow on cpu")
        w, _ = jnp.linalg.eig(_square())  # expect(tpu): JT003 eig
        self.assertEqual(w.shape, (3,))

    def test_skip_on_unrelated_condition(self):
        if sys.maxsize < 2**32:
            self.skipTest("needs a 64-bit interpreter")
        _run_sharded(lambda a: lax.pbroadcast(a, "x", 0))  # expect: JT001 pbroadcast


class DecoratorTest(unittest.TestCase):
    @unittest.skipIf(jax.default_backend() != "gpu", "psend needs a GPU")
    def test_skip_if_not_gpu(self):
        def body(a):
            lax.psend(a, "x", RING)
            return a

        _run_sharded(body)

    @unittest.skipUnless(jax.default_backend() == "cpu", "schur lowers only on CPU")
    def test_skip_unless_cpu(self):
        t, _ = jax.scipy.linalg.schur(_square())
        self.assertEqual(t.shape, (3, 3))

    @unittest.skipIf(jax.default_backend() == "gpu", "flaky on gpu")
    def test_skip_if_gpu_leaves_tpu(self):
        w = jnp.linalg.eigvals(_square())  # expect(tpu): JT003 eigvals
        self.assertEqual(w.shape, (3,))


class SetUpSkipTest(unittest.TestCase):
    def setUp(self):
        super().setUp()
        if jax.default_backend() not in ("gpu", "cuda", "rocm"):
            self.skipTest("point-to-point collectives need a GPU")

    def test_psend(self):
        def body(a):
            lax.psend(a, "x", RING)
            return a

        _run_sharded(body)

    def test_pbroadcast(self):
        _run_sharded(lambda a: lax.pbroadcast(a, "x", 0))


class SetUpClassSkipTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        if jax.default_backend() == "tpu":
            raise unittest.SkipTest("no eigendecomposition on TPU")

    def test_eig(self):
        w, _ = jnp.linalg.eig(_square())
        self.assertEqual(w.shape, (3,))

    def test_roots(self):
        r = jnp.roots(jnp.array([1.0, -3.0, 2.0]))
        self.assertEqual(r.shape, (2,))


class ChainTest(unittest.TestCase):
    def test_elif_chain_else_skips(self):
        backend = jax.default_backend()
        if backend == "cpu":
            rtol = 1e-6
        elif backend == "gpu":
            rtol = 1e-3
        else:
            self.skipTest(f"no eig on {backend}")
        w = jnp.linalg.eigvals(_square())
        self.assertEqual(w.shape, (3,))
        del rtol

    def test_elif_chain_without_skip(self):
        backend = jax.default_backend()
        if backend == "cpu":
            rtol = 1e-6
        elif backend == "gpu":
            rtol = 1e-3
        else:
            rtol = 1e-2
        w = jnp.linalg.eigvals(_square())  # expect(tpu): JT003 eigvals
        self.assertEqual(w.shape, (3,))
        del rtol

    def test_elif_chain_branches(self):
        a = _square()
        if jax.default_backend() == "cpu":
            t, _ = jax.scipy.linalg.schur(a)
        elif jax.default_backend() == "tpu":
            t = a
        else:
            # reached on gpu only: not a checked target
            t, _ = jax.scipy.linalg.schur(a)
        self.assertEqual(t.shape, (3, 3))

    def test_elif_chain_else_reaches_tpu(self):
        a = _square()
        if jax.default_backend() == "cpu":
            t, _ = jax.scipy.linalg.schur(a)
        elif jax.default_backend() == "gpu":
            t = a
        else:
            t, _ = jax.scipy.linalg.schur(a)  # expect(tpu): JT003 schur
        self.assertEqual(t.shape, (3, 3))


def test_pytest_skip_unless_gpu():
    if jax.default_backend() != "gpu":
        pytest.skip("pbroadcast needs a GPU")
    _run_sharded(lambda a: lax.pbroadcast(a, "x", 0))


@pytest.mark.skipif(jax.default_backend() != "gpu", reason="psend needs a GPU")
def test_pytest_mark_skipif_not_gpu():
    def body(a):
        lax.psend(a, "x", RING)
        return a

    _run_sharded(body)


@pytest.mark.skipif(jax.default_backend() == "cpu", reason="too slow on cpu")
def test_pytest_mark_skipif_cpu_leaves_tpu():
    def body(a):
        lax.psend(a, "x", RING)  # expect(tpu): JT001 psend
        return a

    _run_sharded(body)


def test_pytest_unguarded_sqrtm():
    s = jax.scipy.linalg.sqrtm(_square())  # expect(tpu): JT003 sqrtm
    assert s.shape == (3, 3)
