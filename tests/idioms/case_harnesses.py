"""Harness tables and nested test bodies: the skip that gates a call sits where the body runs.

Modelled on jax-ml/jax tests/export_back_compat_test.py (a nested ``func`` defined first,
then ``if jtu.test_device_matches(["cuda"]): ... else: self.skipTest("Unsupported
platform")``, then ``self.run_one_test(func, data)``; and the tests that leave the skip to
``CompatTestBase.run_one_test``, which skips unless the backend is the platform their data
was recorded on) and tests/shape_poly_test.py
(``PolyHarness("eig", ..., lambda x: lax.linalg.eig(x))`` records in a module-level list,
grown with ``.append``, run by one parameterized ``test_harness`` that raises
``SkipTest`` when ``harness.group_name == "eig"`` off CPU). The code is written for this suite.
"""

from __future__ import annotations

import dataclasses
import unittest

import jax.numpy as jnp
import numpy as np
import pytest
from absl.testing import absltest
from jax import lax
from jax._src import test_util as jtu
from jax._src.internal_test_util import export_back_compat_test_util as bctu


def _square():
    return jnp.eye(3) + 0.1 * jnp.arange(9.0).reshape(3, 3)


class Harness:
    def __init__(self, group_name, name, fun):
        self.group_name = group_name
        self.name = name
        self.fun = fun

    def run(self):
        return self.fun(_square())


HARNESSES = [
    Harness("eig", "plain", lambda x: lax.linalg.eig(x, compute_left_eigenvectors=False)),
    *[Harness("schur", f"n={n}", lambda x: lax.linalg.schur(x)) for n in (1, 2)],
    # no skip names this group: it runs on every backend
    Harness("hessenberg", "plain", lambda x: lax.linalg.hessenberg(x)),  # expect(tpu): JT003 hessenberg
    Harness("qr", "plain", lambda x: jnp.linalg.qr(x)),
]
HARNESSES.append(Harness("tridiagonal", "grown", lambda x: lax.linalg.tridiagonal(x)))


@pytest.mark.parametrize("harness", HARNESSES)
def test_harness(harness):
    if harness.group_name in ("eig", "schur") and not jtu.test_device_matches(["cpu"]):
        raise unittest.SkipTest("only implemented on CPU")
    if harness.group_name == "tridiagonal" and jtu.test_device_matches(["tpu"]):
        pytest.skip("not implemented on TPU")
    harness.run()


class NestedBodyTest(jtu.JaxTestCase):
    def _run_one(self, func, data):
        self.assertEqual(data, "cuda")
        return func()

    def test_tridiagonal_with_cuda_data(self):
        def func():
            return lax.linalg.tridiagonal(_square(), lower=True)

        if jtu.test_device_matches(["cuda"]):
            data = "cuda"
        else:
            self.skipTest("Unsupported platform")
        self._run_one(func, data)

    def test_skip_after_the_run_gates_nothing(self):
        def func():
            return lax.linalg.tridiagonal(_square(), lower=True)  # expect(tpu): JT003 tridiagonal

        func()
        if not jtu.test_device_matches(["cuda"]):
            self.skipTest("the rest needs CUDA")


class SerializedDataTest(bctu.CompatTestBase):
    """``run_one_test`` runs ``func`` only on the platform the data was recorded on."""

    def _recorded_on(self, platform):
        return dataclasses.replace(self.starter_data([np.eye(3, dtype=np.float32)]), platform=platform)

    def test_eig_with_data_from_another_backend(self):
        def func(x):
            return lax.linalg.eig(x, compute_left_eigenvectors=False)

        self.run_one_test(func, self._recorded_on("cuda"))

    def test_schur_lambda(self):
        self.run_one_test(lambda x: lax.linalg.schur(x), self._recorded_on("rocm"))

    def test_eig_run_directly(self):
        def func(x):
            return lax.linalg.eig(x, compute_left_eigenvectors=False)  # expect(tpu): JT003 eig

        func(_square())


if __name__ == "__main__":
    absltest.main()
