"""Backend-limited APIs named without being lowered (probes, identity tests, tracing only),
and APIs passed as values to transformations or call tables that do call them.

Modelled on keras-team/keras keras/src/backend/jax/nn.py (``if hasattr(jax.nn,
"dot_product_attention"):`` feature probes), jax-ml/jax jax/_src/lax/parallel.py and
tests/shard_map_test.py (``jax.make_jaxpr`` of sharded bodies to inspect the collectives they
bind) and qutip/qutip-jax src/qutip_jax/linalg.py (a table of eigensolvers picked by
Hermiticity and whether vectors are wanted) and brainpy/BrainPy brainpy/math/linalg.py
(module-level re-exports through a wrapping helper, ``eig = _compatible_with_brainpy_array(
linalg.eig, module="linalg.")``) and pymc-devs/pytensor pytensor/tensor/rewriting/linalg/solvers.py
(``_load_solve_sylvester()``, a loader returning the API, called in a ``try`` only to see that
the import works). The code is written for this suite.
"""

from __future__ import annotations

import inspect

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

try:
    from jax.lax import psend  # noqa: F401  # feature probe
except ImportError:
    HAS_PSEND = False
else:
    HAS_PSEND = True

RING = [(i, (i + 1) % 4) for i in range(4)]
GPU_ONLY_COLLECTIVES = (lax.psend, lax.precv, lax.pbroadcast)

_EIGENSOLVERS = {
    "general": jnp.linalg.eig,  # expect(tpu): JT003 eig
    "hermitian": jnp.linalg.eigh,
}
#: names only: the table is listed, never called
_DOCUMENTED = {"eigvals": jnp.linalg.eigvals, "eigvalsh": jnp.linalg.eigvalsh}


def _compatible(fn, module):
    def wrapped(*args, **kwargs):
        return fn(*args, **kwargs)

    wrapped.__qualname__ = f"{module}{fn.__name__}"
    return wrapped


#: re-exports, through a wrapping helper or as such: the APIs run where importers call them
eigvals = _compatible(jnp.linalg.eigvals, module="linalg.")
roots = jnp.roots
__all__ = ["eigvals", "roots"]
#: an alias the module calls itself: reported where the API is named
_eig_alias = jnp.linalg.eig  # expect(tpu): JT003 eig


def _square():
    return jnp.eye(3) + 0.1 * jnp.arange(9.0).reshape(3, 3)


def _sharded():
    mesh = jax.make_mesh((4,), ("x",))
    return mesh, jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))


def is_gpu_only(fn) -> bool:
    return fn in (lax.psend, lax.precv) or fn is lax.pbroadcast


def test_feature_probes():
    assert HAS_PSEND
    assert hasattr(jax.lax, "psend")
    assert callable(lax.psend)
    assert callable(jax.lax.precv)
    assert getattr(lax, "pbroadcast") is lax.pbroadcast  # noqa: B009
    assert hasattr(jax.nn, "dot_product_attention")


def test_identity_and_membership():
    assert is_gpu_only(lax.psend)
    assert not is_gpu_only(lax.ppermute)
    assert lax.pbroadcast in GPU_ONLY_COLLECTIVES


def test_introspection():
    assert "perm" in inspect.signature(lax.psend).parameters
    assert lax.precv.__name__ == "precv"
    assert sorted(_DOCUMENTED) == ["eigvals", "eigvalsh"]
    assert jnp.linalg.eig.__doc__


def test_make_jaxpr_traces_without_lowering():
    mesh, x = _sharded()

    def body(a):
        token = lax.psend(a, "x", RING)
        return lax.precv(token, jax.ShapeDtypeStruct.like(a), "x", RING)

    jaxpr = jax.make_jaxpr(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)
    assert "psend" in str(jaxpr)


def test_trace_without_lowering():
    mesh, x = _sharded()

    def body(a):
        return lax.pbroadcast(a, "x", 0)

    step = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
    assert "pbroadcast" in str(step.trace(x).jaxpr)


def test_eval_shape_only():
    w, _ = jax.eval_shape(jnp.linalg.eig, _square())
    assert w.shape == (3,)


def test_lower_does_lower():
    mesh, x = _sharded()

    def body(a):
        return lax.pbroadcast(a, "x", 0)  # expect: JT001 pbroadcast

    step = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
    step.lower(x)


def test_jit_of_eig():
    w, _ = jax.jit(jnp.linalg.eig)(_square())  # expect(tpu): JT003 eig
    assert w.shape == (3,)


def test_vmap_of_eigvals():
    a = jnp.stack([_square(), _square().T])
    w = jax.vmap(jnp.linalg.eigvals)(a)  # expect(tpu): JT003 eigvals
    assert w.shape == (2, 3)


def test_call_table_entry():
    solve = _EIGENSOLVERS["general"]
    w, _ = solve(_square())
    assert w.shape == (3,)


def test_alias_called_here():
    w, _ = _eig_alias(_square())
    assert w.shape == (3,)


def _load_solve_sylvester():
    # a loader its module only calls to see that the import works
    from jax.scipy.linalg import solve_sylvester

    return solve_sylvester


def _load_schur():
    from jax.scipy.linalg import schur

    return schur  # expect(tpu): JT003 schur


def test_import_probe_through_a_loader():
    try:
        _load_solve_sylvester()
        have = True
    except ImportError:
        have = False
    assert have


def test_loaded_function_is_called():
    t, _ = _load_schur()(jnp.eye(3))
    assert t.shape == (3, 3)
