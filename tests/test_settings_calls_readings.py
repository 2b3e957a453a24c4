"""Where a call that sets Pallas's TPU interpret mode is in force (semantics/settings_calls.py).

A ``pallas_call`` that passes no ``interpret=`` only lowers where Pallas has a compiler
(cuda, tpu); on cpu and rocm it is reported unless a setter visibly gives it interpret
mode. Each source marks the lines where a finding is expected with ``# found``; every
other ``pallas_call`` in it must stay silent. Read here:

- a setter is recognised by what its load resolves to: the project's own function
  spelled ``force_tpu_interpret_mode`` sets nothing, jax's imported by name or under
  another (``as forced``) does, unless it is given ``None`` (by position or ``params=``);
- ``pltpu.set_tpu_interpret_mode()`` is in force only where it runs at import: in a
  function (which may never be called) it is not, and a ``with`` block at module level
  is over before any function of the module runs;
- a setter under ``if jax.default_backend() == ...:`` at module level is in force only
  on the platforms that statement runs on.

Modelled on jax-ml/jax tests/pallas/tpu_pallas_interpret_test.py (kernels under
``with pltpu.force_tpu_interpret_mode():``, their ``pallas_call`` passing no
``interpret=``) and tom-pollak/trix pallas/ref_reduce_scatter.py (``if
jax.default_backend() == "cpu": pltpu.set_tpu_interpret_mode(...)`` at module level).
The code is written for this suite. Real jedi in the test interpreter, the real engine.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn, found_lines, marked_lines

HEAD = """\
import contextlib

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0
"""

#: what binds the name ``force_tpu_interpret_mode``, and whether the kernel under
#: ``with force_tpu_interpret_mode():`` is then interpreted
BINDINGS = [
    ("from jax.experimental.pallas.tpu import force_tpu_interpret_mode\n", True),
    (
        "from jax.experimental.pallas.tpu import force_tpu_interpret_mode as forced\n"
        "force_tpu_interpret_mode = forced\n",
        True,
    ),
    ("def force_tpu_interpret_mode():\n    return contextlib.nullcontext()\n", False),
    ("force_tpu_interpret_mode = contextlib.nullcontext\n", False),
]


@pytest.mark.parametrize(("binding", "in_force"), BINDINGS)
def test_a_setter_is_what_its_name_resolves_to(check: CheckFn, binding: str, in_force: bool) -> None:
    mark = "" if in_force else "  # found"
    source = (
        HEAD
        + "\n"
        + binding
        + "\n\ndef run(x, shape):\n    with force_tpu_interpret_mode():\n"
        + f"        return pl.pallas_call(kernel, out_shape=shape)(x){mark}\n"
    )
    assert found_lines(check, source, "cpu") == marked_lines(source), source


#: where ``set_tpu_interpret_mode()`` (or a ``with`` of the context manager) stands, and
#: whether it is in force for a kernel called in a later function
PLACES = [
    ("pltpu.set_tpu_interpret_mode()\n", True),
    ("pltpu.set_tpu_interpret_mode(pltpu.InterpretParams())\n", True),
    ("def enable_interpret():\n    pltpu.set_tpu_interpret_mode()\n", False),
    ("class Interpreted:\n    pltpu.set_tpu_interpret_mode()\n", False),
    ("with pltpu.force_tpu_interpret_mode():\n    pass\n", False),
    ("pltpu.set_tpu_interpret_mode(None)\n", False),
]


@pytest.mark.parametrize(("place", "in_force"), PLACES)
def test_a_process_wide_setter_counts_where_it_runs_at_import(
    check: CheckFn, place: str, in_force: bool
) -> None:
    mark = "" if in_force else "  # found"
    source = (
        HEAD
        + "\n"
        + place
        + f"\n\ndef run(x, shape):\n    return pl.pallas_call(kernel, out_shape=shape)(x){mark}\n"
    )
    assert found_lines(check, source, "cpu") == marked_lines(source), source


#: the backend a module-level ``if`` runs the setter on, the target checked, and whether
#: the kernel is then interpreted there
GUARDED = [
    ("cpu", "cpu", True),
    ("cpu", "rocm", False),
    ("tpu", "cpu", False),
]


@pytest.mark.parametrize(("backend", "target", "in_force"), GUARDED)
def test_a_guarded_setter_counts_on_the_platforms_it_runs_on(
    check: CheckFn, backend: str, target: str, in_force: bool
) -> None:
    mark = "" if in_force else "  # found"
    source = (
        HEAD
        + f'\nif jax.default_backend() == "{backend}":\n    pltpu.set_tpu_interpret_mode()\n'
        + f"\n\ndef run(x, shape):\n    return pl.pallas_call(kernel, out_shape=shape)(x){mark}\n"
    )
    assert found_lines(check, source, target) == marked_lines(source), (target, source)


# the setter under another name, and a setter given `None` (by position or as `params=`),
# which sets nothing
ARGUMENTS = """\
from jax.experimental.pallas.tpu import force_tpu_interpret_mode as forced


def run(x, shape):
    with forced():
        a = pl.pallas_call(kernel, out_shape=shape)(x)
    with forced(pltpu.InterpretParams()):
        b = pl.pallas_call(kernel, out_shape=shape)(x)
    with pltpu.force_tpu_interpret_mode(params=pltpu.InterpretParams()):
        c = pl.pallas_call(kernel, out_shape=shape)(x)
    with forced(None):
        d = pl.pallas_call(kernel, out_shape=shape)(x)  # found
    with pltpu.force_tpu_interpret_mode(params=None):
        e = pl.pallas_call(kernel, out_shape=shape)(x)  # found
    return a, b, c, d, e
"""


def test_a_setter_under_an_alias_and_one_given_none(check: CheckFn) -> None:
    source = HEAD + "\n" + ARGUMENTS
    assert found_lines(check, source, "cpu") == marked_lines(source)
