"""try/except around backend-limited calls: which errors a handler really catches.

Modelled on keras-team/keras keras/src/backend/jax/nn.py (``for impl in ["cudnn", "xla"]:
try: return jax.nn.dot_product_attention(..., implementation=impl) except Exception:
logging...``) and its Splash-attention fallback, and on jax-ml/jax tests/shard_map_test.py
(psend/precv under ``jax.jit`` of a ``shard_map``), and on NicholasEhsanRoy/NUDGE
src/nudge/inference/bifurcation.py and src/nudge/core/circuit.py (a private helper that
computes eigenvalues, called only inside ``try: ... except Exception: return None`` by a
function that works on host values). The code is written for this suite.

The cuDNN attention fails while tracing, so a handler around the traced call (or around
the jitted call that traces it) catches it. psend fails while lowering: a handler inside the
traced body never sees that error, and one around the jitted call sees it only if it
catches ``NotImplementedError`` and does not re-raise; the cases here let it escape. A
private helper compiled or run where it is called ends inside its caller's ``try`` when that
caller runs on the host (nothing traces it) and its handler catches the failure.
"""

from __future__ import annotations

import functools
import logging

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

RING = [(i, (i + 1) % 4) for i in range(4)]


def _qkv():
    q = jnp.ones((1, 8, 2, 16), jnp.float32)
    return q, q, q


def _square():
    return jnp.eye(3) + 0.1 * jnp.arange(9.0).reshape(3, 3)


def _sharded():
    mesh = jax.make_mesh((4,), ("x",))
    return mesh, jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))


def keras_style_attention(q, k, v):
    for impl in ["cudnn", "xla"]:
        try:
            return jax.nn.dot_product_attention(q, k, v, implementation=impl)
        except Exception:
            logging.info("Failed to apply %s implementation of jax.nn.dot_product_attention.", impl)
    raise RuntimeError("no attention implementation")


def test_keras_style_loop_fallback():
    q, k, v = _qkv()
    assert keras_style_attention(q, k, v).shape == q.shape


def test_cudnn_then_xla():
    q, k, v = _qkv()
    try:
        out = jax.nn.dot_product_attention(q, k, v, implementation="cudnn")
    except RuntimeError:
        out = jax.nn.dot_product_attention(q, k, v, implementation="xla")
    assert out.shape == q.shape


def test_cudnn_then_default_inside_jit():
    @jax.jit
    def attend(q, k, v):
        try:
            return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")
        except Exception:
            return jax.nn.dot_product_attention(q, k, v, implementation=None)

    q, k, v = _qkv()
    assert attend(q, k, v).shape == q.shape


def test_cudnn_caught_around_jitted_call():
    q, k, v = _qkv()
    attend = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, implementation="cudnn"))
    try:
        out = attend(q, k, v)
    except RuntimeError:
        out = jax.nn.dot_product_attention(q, k, v)
    assert out.shape == q.shape


def test_cudnn_handler_too_narrow():
    q, k, v = _qkv()
    try:
        out = jax.nn.dot_product_attention(  # expect: JT003 dot_product_attention
            q, k, v, implementation="cudnn"
        )
    except ValueError:
        out = jax.nn.dot_product_attention(q, k, v)
    assert out.shape == q.shape


def test_cudnn_handler_reraises():
    q, k, v = _qkv()
    try:
        jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # expect: JT003 dot_product_attention
    except RuntimeError as e:
        logging.info("cudnn attention failed: %s", e)
        raise


def test_psend_try_inside_traced_body():
    mesh, x = _sharded()

    def body(a):
        try:
            token = lax.psend(a, "x", RING)  # expect: JT001 psend
            return lax.precv(token, jax.ShapeDtypeStruct.like(a), "x", RING)  # expect: JT001 precv
        except NotImplementedError:
            # never reached: tracing succeeds, the error comes when jit lowers
            return lax.ppermute(a, "x", RING)

    jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)


def test_psend_try_around_jitted_call_narrow_handler():
    mesh, x = _sharded()

    def body(a):
        lax.psend(a, "x", RING)  # expect: JT001 psend
        return a

    step = jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
    try:
        step(x)
    except (ValueError, TypeError):
        step = jax.jit(jax.shard_map(lambda a: a, mesh=mesh, in_specs=P("x"), out_specs=P("x")))


def test_psend_try_around_jitted_call_reraises():
    mesh, x = _sharded()
    shift = functools.partial(lax.pbroadcast, axis_name="x", source=0)  # expect: JT001 pbroadcast
    step = jax.jit(jax.shard_map(shift, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
    try:
        step(x)
    except NotImplementedError as e:
        raise RuntimeError("pbroadcast needs a GPU backend") from e


def test_eig_try_inside_jit_does_not_catch_lowering():
    @jax.jit
    def eigvals_real(a):
        try:
            return jnp.linalg.eigvals(a).real  # expect(tpu): JT003 eigvals
        except NotImplementedError:
            return jnp.diagonal(a)

    assert eigvals_real(_square()).shape == (3,)


def _stable_eig_reals(states):
    """NUDGE-style helper: eigenvalues computed eagerly, one state at a time."""
    return [jnp.real(jnp.linalg.eigvals(s)) for s in states]


def _broadcast_from_first(x, mesh):
    return jax.jit(
        jax.shard_map(lambda a: lax.pbroadcast(a, "x", 0), mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    )(x)


def _eig_reals_anywhere(a):
    return jnp.real(jnp.linalg.eigvals(a))  # expect(tpu): JT003 eigvals


def test_private_helpers_only_called_inside_a_handling_try():
    mesh, x = _sharded()
    try:
        reals = _stable_eig_reals([_square()])
    except Exception:
        reals = None
    try:
        spread = _broadcast_from_first(x, mesh)
    except Exception:
        spread = None
    assert reals is None or float(reals[0].min()) > 0
    assert spread is None or float(spread.sum()) >= 0


def test_private_helper_called_inside_a_traced_try():
    @jax.jit
    def smallest(a):
        try:
            return _eig_reals_anywhere(a).min()
        except Exception:
            return jnp.diagonal(a).min()

    assert float(smallest(_square())) > 0
