"""Uses reached through a variable that holds a module or function (semantics/aliases.py).

A function kept on the instance and called through ``self`` (a solver picking its
decomposition once in ``__init__``), a method-style helper written as a module function
taking ``self`` (no class to read the attribute from), a class attribute alias next to a
method's local of the same name (jax-ml/jax tests/linalg_test.py style test classes), a
module global bound by a function through ``global`` to that function's own import
(tensorcircuit/tensorcircuit-ng tensorcircuit/backends/jax_backend.py binds its jax
modules that way), a chain of module aliases (``jsp = jax.scipy`` style), a factory's
step function aliasing the factory's import, and an alias of a module loaded by
``importlib``. The code is written for this suite. Real jedi in the test interpreter,
the real engine on cpu and tpu targets.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn

# the instance holds the function itself: the call through `self` is the use
FUNCTION_ON_THE_INSTANCE = """\
import jax.numpy as jnp


class Solver:
    def __init__(self):
        self.eig = jnp.linalg.eig

    def spectrum(self, a):
        return self.eig(a)
"""


@pytest.mark.parametrize(("target", "lines"), [("cpu", []), ("tpu", [9])])
def test_a_function_kept_on_the_instance_is_read_through_self(
    check: CheckFn, target: str, lines: list[int]
) -> None:
    assert [f.span.line for f in check(FUNCTION_ON_THE_INSTANCE, (target,)).findings] == lines


# `self` is a plain parameter here: no class assigns its attributes, so the first use
# resolves to nothing, and the analysis goes on to the direct use below it
SELF_OUTSIDE_A_CLASS = """\
import jax.numpy as jnp


def spectrum(self, a):
    return self.linalg.eig(a)


def eigenvalues(a):
    return jnp.linalg.eigvals(a)
"""


def test_self_outside_a_class_holds_nothing(check: CheckFn) -> None:
    assert [f.span.line for f in check(SELF_OUTSIDE_A_CLASS, ("tpu",)).findings] == [9]


# the class body binds `linalg` once; the method's own local `linalg` is not a class
# attribute, so `self.linalg` still has one value
CLASS_ATTRIBUTE_AND_A_LOCAL = """\
import unittest

import jax.numpy as jnp
import numpy as np


class EigTest(unittest.TestCase):
    linalg = jnp.linalg

    def reference(self, a):
        linalg = np.linalg
        return linalg.eig(a)

    def test_eig(self):
        w, _ = self.linalg.eig(jnp.eye(2))
        self.assertEqual(w.shape, (2,))
"""


@pytest.mark.parametrize(("target", "lines"), [("cpu", []), ("tpu", [15])])
def test_a_methods_local_is_not_a_class_attribute(check: CheckFn, target: str, lines: list[int]) -> None:
    assert [f.span.line for f in check(CLASS_ATTRIBUTE_AND_A_LOCAL, (target,)).findings] == lines


# the module global is bound by a function to a name that function imports itself: the
# value's names are looked up in the function, where the import is
BOUND_TO_A_FUNCTIONS_IMPORT = """\
from typing import Any

scipy_linalg: Any


def _bind_scipy():
    global scipy_linalg
    from jax.scipy import linalg as sl

    scipy_linalg = sl


def schur(a):
    return scipy_linalg.schur(a)
"""


@pytest.mark.parametrize(("target", "lines"), [("cpu", []), ("tpu", [14])])
def test_a_global_bound_to_a_local_import_is_read_in_that_function(
    check: CheckFn, target: str, lines: list[int]
) -> None:
    assert [f.span.line for f in check(BOUND_TO_A_FUNCTIONS_IMPORT, (target,)).findings] == lines


# module aliases of module aliases (`jsp = jax.scipy` written through a few helper names):
# a use is followed through five names and no further, which bounds a chain that loops
ALIAS_CHAIN = """\
import jax

scipy = jax.scipy
sp = scipy
jsp = sp
s = jsp
t = s


def schur_four(a):
    return jsp.linalg.schur(a)


def schur_five(a):
    return s.linalg.schur(a)


def schur_six(a):
    return t.linalg.schur(a)
"""


@pytest.mark.parametrize(("target", "lines"), [("cpu", []), ("tpu", [11, 15])])
def test_a_chain_of_module_aliases_is_followed_five_names_deep(
    check: CheckFn, target: str, lines: list[int]
) -> None:
    assert [f.span.line for f in check(ALIAS_CHAIN, (target,)).findings] == lines


# a step function built by a factory: its local alias holds the factory's own import,
# looked up in the enclosing function
LOCAL_ALIAS_OF_AN_ENCLOSING_IMPORT = """\
def make_step():
    from jax.scipy import linalg as sl

    def step(a):
        la = sl
        return la.schur(a)

    return step
"""


@pytest.mark.parametrize(("target", "lines"), [("cpu", []), ("tpu", [6])])
def test_a_local_alias_reads_the_enclosing_functions_import(
    check: CheckFn, target: str, lines: list[int]
) -> None:
    assert [f.span.line for f in check(LOCAL_ALIAS_OF_AN_ENCLOSING_IMPORT, (target,)).findings] == lines


# a module loaded by name: the alias is an attribute of a call, which spells no import,
# so it resolves to nothing (numpy's eig is no jax API) and the analysis goes on
ALIAS_OF_A_CALLS_ATTRIBUTE = """\
import importlib

import jax.numpy as jnp

la = importlib.import_module("numpy").linalg


def host_eig(a):
    return la.eig(a)


def device_eig(a):
    return jnp.linalg.eig(a)
"""


def test_an_alias_of_a_calls_attribute_resolves_to_nothing(check: CheckFn) -> None:
    assert [f.span.line for f in check(ALIAS_OF_A_CALLS_ATTRIBUTE, ("tpu",)).findings] == [13]


# modules handed out by a function that imports them lazily (LiquidGunay/nano-vllm-jax
# nanovllm_jax/kernels/decode_reductions.py keeps Pallas optional that way), a literal
# tuple of aliases, and unpackings that give no one value: a function with two returns,
# a function returning the module's own globals, a swap, a starred target
UNPACKED = """\
import jax
import jax.numpy as jnp


def _pallas_modules():
    try:
        from jax.experimental import pallas as pl
        from jax.experimental.pallas import triton as plt
    except ImportError as exc:
        raise RuntimeError("Pallas is not installed") from exc
    return pl, plt


def add(x):
    pl, _plt = _pallas_modules()
    return pl.pallas_call(_kernel, out_shape=x)(x)


la, lax = jnp.linalg, jax.lax


def spectrum(a):
    return la.eig(a)


def _either(flag):
    if flag:
        return jnp.linalg, 1
    return jax.scipy.linalg, 2


def spectrum_either(a, flag):
    one, _ = _either(flag)
    return one.eig(a)


def _globals():
    return g1, g2


g1, g2 = _globals()


def spectrum_globals(a):
    return g1.eig(a)


s1, s2 = jnp.linalg, jnp.fft
s1, s2 = s2, s1


def spectrum_swapped(a):
    return s1.eig(a)


first, *rest = jnp.linalg, jax.lax


def spectrum_starred(a):
    return first.eig(a)
"""


@pytest.mark.parametrize(("target", "lines"), [("cpu", [16]), ("tpu", [23])])
def test_modules_unpacked_from_a_function_or_a_tuple_are_read(
    check: CheckFn, target: str, lines: list[int]
) -> None:
    """``pl`` of ``pl, _plt = _pallas_modules()`` is the function's own import (a compiled
    ``pallas_call``: cpu), ``la`` of ``la, lax = jnp.linalg, jax.lax`` is ``jnp.linalg``
    (``eig``: tpu); the other unpackings hold no one certain value and give nothing."""
    assert [f.span.line for f in check(UNPACKED, (target,)).findings] == lines


# Python's scope rules, which name resolution follows: a class body's names are not
# visible in its methods, a comprehension's variable does not leak into the function,
# and a name a function declares `global` is the module's
SCOPE_RULES = """\
import jax.numpy as jnp


class Solver:
    jnp = None

    def spectrum(self, a):
        return jnp.linalg.eig(a)


def spectra(items):
    found = [jnp for jnp in items]
    return jnp.linalg.eig(found[0])


def setup():
    global la
    from jax.numpy import linalg as la


def spectrum_global(a):
    return la.eig(a)
"""


@pytest.mark.parametrize(("target", "lines"), [("cpu", []), ("tpu", [8, 13, 22])])
def test_class_bodies_comprehensions_and_globals_scope_names_as_python_does(
    check: CheckFn, target: str, lines: list[int]
) -> None:
    assert [f.span.line for f in check(SCOPE_RULES, (target,)).findings] == lines


STAR_IMPORT = """\
from jax.numpy.linalg import *


def spectrum(a):
    return eig(a)
"""


def test_a_name_only_a_star_import_binds_comes_from_it(check: CheckFn) -> None:
    assert [f.span.line for f in check(STAR_IMPORT, ("tpu",)).findings] == [5]
