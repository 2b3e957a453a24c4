"""Settings a script keeps in constants at its top, choosing which branches run.

Modelled on google-research/jax3d jax3d/projects/mobilenerf/stage1.py (``scene_type =
"synthetic"`` at the top, then ``if scene_type == "synthetic": ... elif scene_type ==
"forwardfacing" or scene_type == "real360":``, the other scenes' code, ``np.linalg.eig``
among it, never running) and the ``DEBUG = False`` / ``if DEBUG:`` switches of training
scripts. A test of constants has the same value on every platform: the branches it rules
out never run, and the one it takes runs everywhere. The code is written for this suite.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import PartitionSpec as P

SCENE_TYPE = "synthetic"
SCENES_WITH_POSES = ("forwardfacing", "real360")
DEBUG_COLLECTIVES = False
RING = [(i, (i + 1) % 4) for i in range(4)]


def _on_ring(collective):
    """Run ``collective`` under ``shard_map`` over a ring of four devices."""
    spec = P("x")
    step = jax.shard_map(collective, mesh=jax.make_mesh((4,), ("x",)), in_specs=spec, out_specs=spec)
    return jax.jit(step)(jnp.arange(8.0))


#: a non-symmetric matrix with real eigenvalues 1, 2, 3
POSES = jnp.diag(jnp.arange(1.0, 4.0)) + jnp.eye(3, k=1)


def test_scene_branches():
    if SCENE_TYPE == "synthetic":
        w = jnp.linalg.eigvals(POSES)  # expect(tpu): JT003 eigvals
        assert w.shape == (3,)
    elif SCENE_TYPE == "forwardfacing" or SCENE_TYPE == "real360":

        def principal_axes(t):
            return jnp.linalg.eig(t.T @ t)

        principal_axes(POSES)
        _on_ring(lambda a: lax.pbroadcast(a, "x", 0))


def test_scene_in_a_tuple():
    if SCENE_TYPE in SCENES_WITH_POSES:
        _on_ring(lambda a: lax.pbroadcast(a, "x", 0))
    else:
        t, _ = jax.scipy.linalg.schur(POSES)  # expect(tpu): JT003 schur
        assert t.shape == (3, 3)


def test_debug_switch_off():
    if DEBUG_COLLECTIVES:
        _on_ring(functools.partial(lax.psend, axis_name="x", perm=RING))


def test_debug_switch_read_the_other_way():
    if not DEBUG_COLLECTIVES:
        _on_ring(lambda a: lax.pbroadcast(a, "x", 0))  # expect: JT001 pbroadcast
