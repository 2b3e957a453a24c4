"""Backend tests stored in values: module constants, locals, ``any(...)`` over devices, predicates.

Modelled on google/praxis praxis/py_utils.py (``def is_tpu(): return
jax.local_devices()[0].platform == 'tpu'`` used as a guard elsewhere),
AI-Hypercomputer/maxtext src/maxtext/common/emergency_checkpointing.py (``if
...devices.flatten()[0].platform == "gpu":``), apple/axlearn
axlearn/common/flash_attention/decoding_test.py (module-level backend branches) and
qutip/qutip-jax src/qutip_jax/linalg.py (``jnp.linalg.eig`` for non-Hermitian data) and
keras-team/keras keras/src/backend/jax/rnn.py (``if not cudnn_ok(activation, ...): raise
NotImplementedError``, a predicate taking arguments whose ``and`` chain ends in a backend test).
The code is written for this suite.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import rnn
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

ON_TPU = jax.default_backend() == "tpu"
ON_CPU = jax.local_devices()[0].platform == "cpu"
RING = [(i, (i + 1) % 4) for i in range(4)]


def _accelerator_is_nvidia() -> bool:
    return jax.default_backend() in ("cuda", "gpu")


def running_on_tpu():
    """praxis-style predicate: the platform of the first local device."""
    return jax.local_devices()[0].platform == "tpu"


def _sharded():
    mesh = jax.make_mesh((4,), ("x",))
    return mesh, jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))


def _run_sharded(body):
    mesh, x = _sharded()
    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)


def _square():
    return jnp.eye(3) + 0.1 * jnp.arange(9.0).reshape(3, 3)


def _qkv():
    q = jnp.ones((1, 8, 2, 16), jnp.float32)
    return q, q, q


def nonhermitian_eigs(a):
    if ON_TPU:
        raise NotImplementedError("no eig on TPU")
    return jnp.linalg.eig(a)


def test_module_constant_early_raise():
    w, _ = nonhermitian_eigs(_square())
    assert w.shape == (3,)


def test_module_constant_negated():
    if not ON_TPU:
        assert jnp.linalg.eigvals(_square()).shape == (3,)


def test_module_constant_true_branch_on_tpu():
    # the branch runs only on TPU, which is exactly where eig does not lower
    if ON_TPU:
        jnp.linalg.eigvals(_square())  # expect(tpu): JT003 eigvals


def test_module_constant_from_local_devices():
    if ON_CPU:
        t, _ = jax.scipy.linalg.schur(_square())
        assert t.shape == (3, 3)


def test_local_platform_variable():
    platform = jax.devices()[0].platform
    if platform == "gpu":
        _run_sharded(lambda a: lax.pbroadcast(a, "x", 0))
    else:
        _run_sharded(lambda a: lax.ppermute(a, "x", RING))


def test_local_platform_variable_wrong_branch():
    platform = jax.devices()[0].platform
    if platform == "gpu":
        _run_sharded(lambda a: lax.ppermute(a, "x", RING))
    else:
        _run_sharded(lambda a: lax.pbroadcast(a, "x", 0))  # expect: JT001 pbroadcast


def test_any_device_is_gpu():
    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    if has_gpu:

        def body(a):
            token = lax.psend(a, "x", RING)
            return lax.precv(token, jax.ShapeDtypeStruct.like(a), "x", RING)

        _run_sharded(body)


def test_any_device_is_gpu_early_return():
    has_gpu = any(d.platform == "gpu" for d in jax.devices())
    if not has_gpu:
        return

    def body(a):
        lax.psend(a, "x", RING)
        return a

    _run_sharded(body)


def test_predicate_function_guard():
    q, k, v = _qkv()
    if _accelerator_is_nvidia():
        out = jax.nn.dot_product_attention(q, k, v, implementation="cudnn")
    else:
        out = jax.nn.dot_product_attention(q, k, v)
    assert out.shape == q.shape


def test_predicate_function_inverted():
    q, k, v = _qkv()
    if not _accelerator_is_nvidia():
        jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # expect: JT003 dot_product_attention


def test_praxis_style_predicate():
    a = _square()
    if running_on_tpu():
        w = jnp.linalg.eigvalsh(a @ a.T)
        assert w.shape == (3,)
    else:
        w, _ = jnp.linalg.eig(a)
        assert w.shape == (3,)


def test_predicate_stored_in_variable():
    on_tpu = running_on_tpu()
    if on_tpu:
        return
    r = jnp.roots(jnp.array([1.0, -3.0, 2.0]))
    assert r.shape == (2,)


def _cudnn_usable(activation, use_bias=True):
    """keras-style: checks of the arguments and a backend predicate in one ``and`` chain."""
    return activation is jnp.tanh and use_bias and _accelerator_is_nvidia()


def _shapes_usable(x):
    return x.ndim == 3


def _lstm(x):
    h = jnp.zeros((1, x.shape[0], 8), x.dtype)
    weights = jnp.zeros((448,), x.dtype)
    seq = jnp.full((x.shape[0],), x.shape[1], jnp.int32)
    return h, weights, seq


def fused_lstm(x, activation):
    if not _cudnn_usable(activation):
        raise NotImplementedError
    h, weights, seq = _lstm(x)
    y, _, _ = rnn.lstm(x, h, h, weights, seq, 4, 8, 1, 0.0, False)
    return y


def fused_lstm_of_any_backend(x):
    if not _shapes_usable(x):
        raise NotImplementedError
    h, weights, seq = _lstm(x)
    y, _, _ = rnn.lstm(x, h, h, weights, seq, 4, 8, 1, 0.0, False)  # expect: JT003 lstm
    return y


def test_predicate_with_arguments():
    x = jnp.ones((2, 5, 4), jnp.float32)
    try:
        y = fused_lstm(x, jnp.tanh)
    except NotImplementedError:
        y = x[..., :8]
    assert y.shape[:2] == (2, 5)
