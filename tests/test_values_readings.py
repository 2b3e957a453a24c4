"""What a guard's name holds, read where Python's scope rules put it (semantics/values.py).

A local variable computed from another local, a module constant set once by a function
declaring it ``global``, and a test class's own skip helper called as ``self._require()``.
Real jedi in the test interpreter, the real engine on cpu and tpu targets.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn

# the flag is computed from another local: its value is read in the function's own scope
LOCAL_FROM_LOCAL = """\
import jax
import jax.numpy as jnp


def eig_on_cpu(a):
    backend = jax.default_backend()
    on_cpu = backend == "cpu"
    if on_cpu:
        return jnp.linalg.eig(a)
    return a
"""

# the module constant is set by one function through `global`: its value is read there,
# where `backend` is that function's local
SET_THROUGH_GLOBAL = """\
import jax
import jax.numpy as jnp

ON_CPU = None


def init():
    global ON_CPU
    backend = jax.default_backend()
    ON_CPU = backend == "cpu"


def eig_on_cpu(a):
    if ON_CPU:
        return jnp.linalg.eig(a)
    return a
"""

# the flag and a size unpacked together from a tuple, or from a local function returning both
UNPACKED = """\
import jax
import jax.numpy as jnp


def _setup():
    on_cpu = jax.default_backend() == "cpu"
    return on_cpu, 4


def eig_literal(a):
    on_cpu, size = jax.default_backend() == "cpu", 4
    if on_cpu:
        return jnp.linalg.eig(a[:size])
    return a


def eig_returned(a):
    on_cpu, size = _setup()
    if on_cpu:
        return jnp.linalg.eig(a[:size])
    return a
"""


@pytest.mark.parametrize(
    "source", [LOCAL_FROM_LOCAL, SET_THROUGH_GLOBAL, UNPACKED], ids=["local", "global", "unpacked"]
)
@pytest.mark.parametrize(("target", "lines"), [("cpu", []), ("tpu", [])])
def test_a_flag_is_read_in_the_scope_that_computes_it(
    check: CheckFn, source: str, target: str, lines: list[int]
) -> None:
    assert [f.span.line for f in check(source, (target,)).findings] == lines


# the flag belongs to the outer function; the inner one's own `backend` is not the one it reads
READ_FROM_A_NESTED_FUNCTION = """\
import jax
import jax.numpy as jnp


def eig_on_cpu(a):
    backend = jax.default_backend()
    on_cpu = backend == "cpu"

    def inner():
        backend = "cpu"
        if on_cpu:
            return jnp.linalg.eig(a)
        return backend

    return inner()
"""


def test_a_flag_of_the_enclosing_function_is_read_in_that_function(check: CheckFn) -> None:
    assert [f.span.line for f in check(READ_FROM_A_NESTED_FUNCTION, ("tpu",)).findings] == []


def test_a_flag_whose_value_is_unknown_guards_nothing(check: CheckFn) -> None:
    # the same reading with the local bound twice: no one value, so the call may run on tpu
    twice = LOCAL_FROM_LOCAL.replace("    on_cpu = backend", "    on_cpu = False\n    on_cpu = backend")
    assert [f.span.line for f in check(twice, ("tpu",)).findings] == [10]


# unittest style: a helper method that skips the test where the backend is not a cpu,
# called on `self` from the test that needs it (the other test calls no helper)
SELF_HELPER = """\
import unittest

import jax
import jax.numpy as jnp

ON_CPU = jax.default_backend() == "cpu"


class EigTest(unittest.TestCase):
    def _require_cpu(self):
        if not ON_CPU:
            self.skipTest("eig needs a cpu")

    def test_eig(self):
        ON_CPU = True
        self._require_cpu()
        jnp.linalg.eig(jnp.eye(2))

    def test_unguarded(self):
        jnp.linalg.eig(jnp.eye(2))
"""


@pytest.mark.parametrize(("target", "lines"), [("cpu", []), ("tpu", [20])])
def test_a_skip_helper_called_on_self_gates_the_test(check: CheckFn, target: str, lines: list[int]) -> None:
    # the helper reads the module's ON_CPU, not the caller's local of that name
    assert [f.span.line for f in check(SELF_HELPER, (target,)).findings] == lines


def test_a_skip_helper_may_call_another_helper_on_self(check: CheckFn) -> None:
    delegating = SELF_HELPER.replace(
        "    def test_eig(self):",
        "    def _require_eig(self):\n        self._require_cpu()\n\n    def test_eig(self):",
    ).replace("        self._require_cpu()\n        jnp", "        self._require_eig()\n        jnp")
    assert delegating.count("self._require_eig()") == 1
    assert [f.span.line for f in check(delegating, ("tpu",)).findings] == [23]


@pytest.mark.parametrize(
    ("change", "lines"),
    [
        # `other._require_cpu()` is not this class's method
        (("        self._require_cpu()", "        other = self\n        other._require_cpu()"), [18, 21]),
        # two methods of that name: which one runs is not certain
        (
            (
                "    def test_eig(self):",
                "    def _require_cpu(self):\n        pass\n\n    def test_eig(self):",
            ),
            [20, 23],
        ),
    ],
)
def test_a_skip_helper_that_is_not_certainly_the_one_called(
    check: CheckFn, change: tuple[str, str], lines: list[int]
) -> None:
    source = SELF_HELPER.replace(*change)
    assert source != SELF_HELPER
    assert [f.span.line for f in check(source, ("tpu",)).findings] == lines
