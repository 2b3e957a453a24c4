"""Backend-limited APIs reached through aliases: module bindings, attributes, partials, constants.

Modelled on qutip/qutip-jax src/qutip_jax/linalg.py (``from jax import jit, lax`` and
``jnp.linalg.eig``), google/praxis praxis/layers/gpu_fast_attention.py (``implementation='cudnn'``),
google/flax flax/nnx/nn/attention.py (``jax.nn.dot_product_attention`` behind a module's own
attention function) and jax-ml/jax tests/linalg_test.py (``from jax._src.lax import linalg as
lax_linalg``; ``jsp = jax.scipy`` style module aliases) and tensorcircuit/tensorcircuit-ng
tensorcircuit/backends/jax_backend.py (module globals declared ``jsp: Any`` and bound in a
backend's ``__init__`` by ``global jsp`` after a local ``import jax``, through ``libjax = jax``)
and DominicJThompson/JaxGME JaxGME/backend.py (a backend class binding ``eig =
staticmethod(jnp.linalg.eig)``, called as ``self.eig``).
The code is written for this suite.
"""

from __future__ import annotations

import functools
import unittest
from typing import Any

import jax
import jax.numpy as jnp
import jax.scipy.linalg
from jax import lax as jlax
from jax.lax import linalg as lax_linalg
from jax.numpy import linalg as la
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

lax = jax.lax
nn = jax.nn
jsp = jax.scipy
linalg = jnp.linalg
IMPL = "cudnn"
PIVOT = True
RING = [(i, (i + 1) % 4) for i in range(4)]

sla = None
libjax: Any
lazy_jsp: Any


def _bind_scipy_linalg():
    global sla
    sla = jax.scipy.linalg


_bind_scipy_linalg()


def _run_sharded(body):
    mesh = jax.make_mesh((4,), ("x",))
    x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)


def _square():
    return jnp.eye(3) + 0.1 * jnp.arange(9.0).reshape(3, 3)


def _qkv():
    q = jnp.ones((1, 8, 2, 16), jnp.float32)
    return q, q, q


def test_lax_module_alias():
    def body(a):
        lax.psend(a, "x", RING)  # expect: JT001 psend
        return a

    _run_sharded(body)


def test_lax_import_alias():
    _run_sharded(lambda a: jlax.pbroadcast(a, "x", 0))  # expect: JT001 pbroadcast


def test_nn_alias_with_module_constant():
    q, k, v = _qkv()
    nn.dot_product_attention(q, k, v, implementation=IMPL)  # expect: JT003 dot_product_attention


def test_nn_alias_portable():
    q, k, v = _qkv()
    assert nn.dot_product_attention(q, k, v, implementation="xla").shape == q.shape


def test_scipy_alias():
    s = jsp.linalg.sqrtm(_square())  # expect(tpu): JT003 sqrtm
    assert s.shape == (3, 3)


def test_numpy_linalg_alias():
    w, _ = linalg.eig(_square())  # expect(tpu): JT003 eig
    assert w.shape == (3,)


def test_from_import_alias():
    w = la.eigvals(_square())  # expect(tpu): JT003 eigvals
    assert w.shape == (3,)


def test_lax_linalg_alias():
    w, _vl, _vr = lax_linalg.eig(_square())  # expect(tpu): JT003 eig
    assert w.shape == (3,)


def test_global_binding():
    t, _ = sla.schur(_square())  # expect(tpu): JT003 schur
    assert t.shape == (3, 3)


def test_module_constant_keyword():
    _, _, p = jsp.linalg.qr(_square(), pivoting=PIVOT)  # expect(tpu): JT003 qr
    assert p.shape == (3,)


def test_partial_with_cudnn():
    attend = functools.partial(
        jax.nn.dot_product_attention,  # expect: JT003 dot_product_attention
        implementation="cudnn",
    )
    q, k, v = _qkv()
    attend(q, k, v)


def test_partial_portable():
    attend = functools.partial(jax.nn.dot_product_attention, implementation="xla")
    q, k, v = _qkv()
    assert attend(q, k, v).shape == q.shape


class AttributeAliasTest(unittest.TestCase):
    linalg = jnp.linalg

    def setUp(self):
        super().setUp()
        self.sp_linalg = jax.scipy.linalg

    def test_class_attribute(self):
        w, _ = self.linalg.eig(_square())  # expect(tpu): JT003 eig
        self.assertEqual(w.shape, (3,))

    def test_instance_attribute(self):
        h = self.sp_linalg.hessenberg(_square())  # expect(tpu): JT003 hessenberg
        self.assertEqual(h.shape, (3, 3))

    def test_gated_alias(self):
        if jax.default_backend() == "tpu":
            self.skipTest("no eig on TPU")
        w = self.linalg.eigvals(_square())
        self.assertEqual(w.shape, (3,))


class LazyBackend:
    """Binds its jax modules when constructed, as module globals."""

    def __init__(self):
        global libjax, lazy_jsp
        import jax
        import jax.scipy

        libjax = jax
        lazy_jsp = libjax.scipy

    def schur(self, a):
        return lazy_jsp.linalg.schur(a)  # expect(tpu): JT003 schur

    def eigvals(self, a):
        return libjax.numpy.linalg.eigvals(a)  # expect(tpu): JT003 eigvals


def test_lazily_bound_globals():
    backend = LazyBackend()
    t, _ = backend.schur(_square())
    assert t.shape == (3, 3)
    assert backend.eigvals(_square()).shape == (3,)


class StaticBackend:
    """Binds the functions it dispatches to as static methods (one backend of a switch)."""

    eig = staticmethod(jnp.linalg.eig)
    schur = staticmethod(jax.scipy.linalg.schur)
    eigen_values = staticmethod(jnp.linalg.eigvals)  # expect(tpu): JT003 eigvals

    def modes(self, a):
        return self.schur(a)  # expect(tpu): JT003 schur


def test_static_method_aliases():
    t, _ = StaticBackend().modes(_square())
    assert t.shape == (3, 3)
