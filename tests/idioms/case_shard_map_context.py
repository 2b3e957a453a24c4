"""Where psend/precv run under shard_map (JT002 silent) and where not; JT001 holds either way.

Modelled on jax-ml/jax tests/shard_map_test.py (``@jax.jit @partial(shard_map, mesh=...,
in_specs=..., out_specs=...)`` around psend/precv, ``@jtu.run_on_devices("gpu")``) and the
pipeline-parallel loops of AI-Hypercomputer/maxtext and apple/axlearn (collectives inside
``lax.fori_loop`` / ``lax.scan`` bodies of a sharded stage function). The code is written for
this suite.

Without shard_map, psend fails while tracing (unbound axis name), so it never reaches
lowering on any platform; it is still a JT001 finding (the call cannot run on cpu or tpu).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax._src import test_util as jtu
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

RING = [(i, (i + 1) % 4) for i in range(4)]


def _sharded():
    mesh = jax.make_mesh((4,), ("x",))
    return mesh, jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))


def test_partial_entry_passed_to_shard_map():
    mesh, x = _sharded()

    def body(a, axis):
        token = lax.psend(a, axis, RING)  # expect: JT001 psend
        return lax.precv(token, jax.ShapeDtypeStruct.like(a), axis, RING)  # expect: JT001 precv

    entry = functools.partial(body, axis="x")
    step = jax.shard_map(entry, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    jax.jit(step)(x)


def test_decorated_shard_map():
    mesh, x = _sharded()

    @jax.jit
    @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    def step(a):
        lax.psend(a, "x", RING)  # expect: JT001 psend
        return a

    step(x)


def test_fori_loop_body_inside_sharded_function():
    mesh, x = _sharded()

    def stage(a):
        def hop(i, carry):
            token = lax.psend(carry, "x", RING)  # expect: JT001 psend
            return lax.precv(token, jax.ShapeDtypeStruct.like(carry), "x", RING)  # expect: JT001 precv

        return lax.fori_loop(0, 3, hop, a)

    # check_vma=False: precv's result is typed like the carry
    jax.jit(jax.shard_map(stage, mesh=mesh, in_specs=P("x"), out_specs=P("x"), check_vma=False))(x)


def test_scan_body_inside_sharded_function():
    mesh, x = _sharded()

    def stage(a):
        def hop(carry, _):
            lax.psend(carry, "x", RING)  # expect: JT001 psend
            return carry, None

        out, _ = lax.scan(hop, a, None, length=2)
        return out

    jax.jit(jax.shard_map(stage, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)


def test_cond_branch_inside_sharded_function():
    mesh, x = _sharded()

    def send(a):
        lax.psend(a, "x", RING)  # expect: JT001 psend
        return a

    def stage(a):
        return lax.cond(a[0] >= 0, send, lambda a: a, a)

    jax.jit(jax.shard_map(stage, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)


def test_helper_called_from_sharded_body():
    mesh, x = _sharded()

    def exchange(a, axis):
        token = lax.psend(a, axis, RING)  # expect: JT001 psend
        return lax.precv(token, jax.ShapeDtypeStruct.like(a), axis, RING)  # expect: JT001 precv

    def body(a):
        return exchange(a, "x") + 1

    jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)


def test_jitted_helper_called_from_sharded_body():
    mesh, x = _sharded()

    @jax.jit
    def exchange(a):
        lax.psend(a, "x", RING)  # expect: JT001 psend
        return a

    jax.jit(jax.shard_map(lambda a: exchange(a) * 2, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)


def test_plain_jit_without_shard_map():
    @jax.jit
    def step(a):
        return lax.psend(a, "x", RING)  # expect: JT001 psend  # expect: JT002 psend

    step(jnp.arange(8.0))


def test_plain_jit_precv_without_shard_map():
    def step(a):
        token, spec = lax.create_token(), jax.ShapeDtypeStruct.like(a)
        return lax.precv(token, spec, "x", RING)  # expect: JT001 precv  # expect: JT002 precv

    jax.jit(step)(jnp.arange(8.0))


class GatedShardMapTest(jtu.JaxTestCase):
    @jtu.run_on_devices("gpu")
    def test_sharded_on_gpu_only(self):
        mesh, x = _sharded()

        def body(a, axis):
            token = lax.psend(a, axis, RING)
            return lax.precv(token, jax.ShapeDtypeStruct.like(a), axis, RING)

        step = jax.shard_map(functools.partial(body, axis="x"), mesh=mesh, in_specs=P("x"), out_specs=P("x"))
        self.assertEqual(jax.jit(step)(x).shape, x.shape)

    @jtu.run_on_devices("gpu")
    def test_unsharded_on_gpu_only(self):
        # never runs on cpu or tpu; it would fail on a GPU (unbound axis name), not a checked target
        with self.assertRaises(NameError):
            jax.jit(lambda a: lax.psend(a, "x", RING))(jnp.arange(8.0))


class ExpectedTraceErrorTest(jtu.JaxTestCase):
    def test_psend_outside_shard_map_raises(self):
        # the test asserts the very error JT002 warns about: tracing stops before lowering
        with self.assertRaisesRegex(NameError, "unbound axis name"):
            jax.jit(lambda a: lax.psend(a, "x", RING))(jnp.arange(8.0))
