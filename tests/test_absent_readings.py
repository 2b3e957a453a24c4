"""When a use of an API that the installed jax lacks is reported (rules/base.py, ``absent``).

The suite's own jax (0.10.2 or later) has no ``pltpu.TPUCompilerParams`` (removed in
0.7.2), so a ``pallas_call`` given it fails on every platform. Each source marks the
lines where that finding is expected with ``# found``. Read here: a call the test
expects to raise (``assertRaises(AttributeError)``), a call whose ``AttributeError``
a ``try`` catches (a version fallback), and a call no target reaches (pinned to a
device, under a test of a platform outside the targets) are not reported; the same
call alone, or pinned to a device and reached, is (and a TPU kernel's fallback is
reported as what it is). Modelled on Pallas kernels written for older jax
(google/jetstream ``jetstream/core/.../paged_attention.py``) and their version
fallbacks. The code is written for this suite. Real jedi, the real engine.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn, marked_lines

SOURCE = """\
import unittest

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def old_params(x):
    return pl.pallas_call(copy, out_shape=x, compiler_params=pltpu.TPUCompilerParams())(x)  # found


def with_fallback(x):
    try:
        return pl.pallas_call(copy, out_shape=x, compiler_params=pltpu.TPUCompilerParams())(x)
    except AttributeError:
        # the fallback is there, and it is a TPU kernel
        return pl.pallas_call(copy, out_shape=x, compiler_params=pltpu.CompilerParams())(x)  # found


def pinned(x):
    with jax.default_device(jax.devices("cpu")[0]):
        return pl.pallas_call(copy, out_shape=x, compiler_params=pltpu.TPUCompilerParams())(x)  # found


def on_gpu_only(x):
    if jax.default_backend() == "gpu":
        with jax.default_device(jax.devices("cpu")[0]):
            return pl.pallas_call(copy, out_shape=x, compiler_params=pltpu.TPUCompilerParams())(x)
    return x


class OldParamsTest(unittest.TestCase):
    def test_old_params_raise(self):
        with self.assertRaises(AttributeError):
            pl.pallas_call(copy, out_shape=1.0, compiler_params=pltpu.TPUCompilerParams())(1.0)
"""


@pytest.mark.parametrize("targets", [("cpu",), ("cpu", "tpu")])
def test_an_absent_api_is_reported_only_where_its_call_runs_unexpected(
    check: CheckFn, targets: tuple[str, ...]
) -> None:
    analysis = check(SOURCE, targets)
    assert [f.span.line for f in analysis.findings] == marked_lines(SOURCE)
    absent, fallback, pinned = analysis.findings
    for finding in (absent, pinned):
        assert "is not in jax" in finding.message and "removed in 0.7.2" in finding.message
    assert "is not in jax" not in fallback.message and "only lowers on" in fallback.message
