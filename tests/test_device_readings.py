"""Where devices and shardings put a computation (semantics/devices.py), read as pins.

A default device held in a module constant and read through a second name, a jit call
pinned by ``device=jax.devices("cpu")[0]``, ``in_shardings`` that mix a cpu and a tpu
device (no one platform), and ``out_shardings`` on a ``jax.local_devices(backend=...)``
device. Modelled on the example of ``jax.default_device``'s docstring
(``with jax.default_device(jax.devices("cpu")[0])``) and the ``device=`` / sharding
placements of ``jax.jit``'s documentation. The code
is written for this suite. Real jedi in the test interpreter, the real engine on the
tpu target: eig lowers on cpu only among these, so a call pinned to the cpu is no
finding.
"""

from __future__ import annotations

from .conftest import CheckFn

PLACEMENTS = """\
import jax
import jax.numpy as jnp

cpu = jax.devices("cpu")[0]
host = cpu


def eig_on_host(a):
    with jax.default_device(host):
        return jnp.linalg.eig(a)


def eig_pinned(a):
    return jax.jit(jnp.linalg.eig, device=jax.devices("cpu")[0])(a)


def eig_mixed(a, mesh):
    on_cpu = jax.sharding.SingleDeviceSharding(cpu)
    on_tpu = jax.sharding.SingleDeviceSharding(jax.devices("tpu")[0])
    return jax.jit(jnp.linalg.eig, in_shardings=(on_cpu, on_tpu))(a)


def eig_out(a):
    here = jax.sharding.SingleDeviceSharding(jax.local_devices(backend="cpu")[0])
    return jax.jit(jnp.linalg.eig, out_shardings=here)(a)
"""


def test_only_the_call_with_no_one_platform_is_a_finding(check: CheckFn) -> None:
    assert [f.span.line for f in check(PLACEMENTS, ("tpu",)).findings] == [20]
