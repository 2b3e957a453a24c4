"""Tests that look like platform checks but are not JAX backend tests: the OS, the interpreter.

Modelled on ott-jax/ott tests/solvers/linear/sinkhorn_test.py (``sys.platform == "darwin"``
skips), AI-Hypercomputer/maxtext src/maxtext/eval/runner/debug_utils.py (``sys.platform ==
"darwin"``) and the ``os.name`` / ``platform.system()`` checks common in test helpers. The
operating system says nothing about the accelerator JAX runs on, so the calls stay findings.
The conditions here hold on the Linux machines this suite runs on. The code is written for
this suite.
"""

from __future__ import annotations

import os
import platform
import sys
import unittest

import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

RING = [(i, (i + 1) % 4) for i in range(4)]
IS_LINUX = sys.platform.startswith("linux")


def _run_sharded(body):
    mesh = jax.make_mesh((4,), ("x",))
    x = jax.device_put(jnp.arange(8.0), NamedSharding(mesh, P("x")))
    return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x")))(x)


def _square():
    return jnp.eye(3) + 0.1 * jnp.arange(9.0).reshape(3, 3)


def test_sys_platform_linux():
    if sys.platform == "linux":

        def body(a):
            lax.psend(a, "x", RING)  # expect: JT001 psend
            return a

        _run_sharded(body)


def test_os_name_posix():
    if os.name == "posix":
        w, _ = jnp.linalg.eig(_square())  # expect(tpu): JT003 eig
        assert w.shape == (3,)


def test_platform_system_linux():
    if platform.system() == "Linux":
        _run_sharded(lambda a: lax.pbroadcast(a, "x", 0))  # expect: JT001 pbroadcast


def test_platform_machine_variable():
    machine = platform.machine()
    if machine in ("x86_64", "aarch64", "arm64", "AMD64"):
        t, _ = jax.scipy.linalg.schur(_square())  # expect(tpu): JT003 schur
        assert t.shape == (3, 3)


def test_module_constant_from_sys_platform():
    if IS_LINUX:

        def body(a):
            token = lax.psend(a, "x", RING)  # expect: JT001 psend
            return lax.precv(token, jax.ShapeDtypeStruct.like(a), "x", RING)  # expect: JT001 precv

        _run_sharded(body)


def test_early_exit_on_windows():
    if sys.platform == "win32":
        return
    jnp.roots(jnp.array([1.0, -3.0, 2.0]))  # expect(tpu): JT003 roots


class OsSkipTest(unittest.TestCase):
    @unittest.skipIf(sys.platform == "darwin", "flaky on macOS")
    def test_skip_if_darwin(self):
        _run_sharded(lambda a: lax.pbroadcast(a, "x", 1))  # expect: JT001 pbroadcast

    def test_skip_test_unless_posix(self):
        if os.name != "posix":
            self.skipTest("posix only")
        w = jnp.linalg.eigvals(_square())  # expect(tpu): JT003 eigvals
        self.assertEqual(w.shape, (3,))


def test_real_backend_test_next_to_os_test():
    # the OS test adds nothing, the backend test gates the call
    if sys.platform == "linux" and jax.default_backend() == "gpu":
        _run_sharded(lambda a: lax.pbroadcast(a, "x", 0))
