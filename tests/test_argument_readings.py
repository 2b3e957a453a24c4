"""Whether a call visibly passes the argument that makes an API platform-limited (rules/arguments.py).

Read here: a keyword's value followed through names (at most four steps, ``_MAX_DEPTH``),
a flag chosen by a test that is not a backend test (``interpret=False if debug else True``),
a dtype named by ``astype(dtype=...)``, and an array's rank from an empty literal, a
``shape=`` keyword or a literal reached through names inside ``jnp.asarray``. Each source is
code written for this suite, modelled on a real idiom: attention that picks its cuDNN
implementation from a config constant, Pallas kernels with a debug switch for interpret
mode, mixed-precision attention casting its query, and the characteristic polynomial of a
matrix (``jnp.poly``) next to the polynomial of a list of roots. Real jedi in the test
interpreter, the real engine on cpu, cuda and tpu targets.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn


def _lines(check: CheckFn, source: str, target: str) -> list[int]:
    return [f.span.line for f in check(source, (target,)).findings if f.code == "JT003"]


# the implementation comes from a config constant, renamed on its way to the call
# (modelled on attention layers reading `config.attention_impl`); four steps from the call
# to the literal: `c`, `b`, `a` and the constant
IMPL_THROUGH_NAMES = """\
import jax

IMPL = "cudnn"


def attend(q, k, v):
    a = IMPL
    b = a
    c = b
    return jax.nn.dot_product_attention(q, k, v, implementation=c)
"""
# one name more: the literal is five steps away, past what the reader follows
IMPL_TOO_FAR = IMPL_THROUGH_NAMES.replace("    c = b\n", "    c0 = b\n    c = c0\n")


@pytest.mark.parametrize(("target", "lines"), [("cpu", [10]), ("tpu", [10]), ("cuda", [])])
def test_a_value_is_followed_through_four_names(check: CheckFn, target: str, lines: list[int]) -> None:
    assert _lines(check, IMPL_THROUGH_NAMES, target) == lines


@pytest.mark.parametrize("target", ["cpu", "tpu"])
def test_a_value_five_names_away_is_not_visible(check: CheckFn, target: str) -> None:
    assert IMPL_TOO_FAR.count(" = ") == 5
    assert _lines(check, IMPL_TOO_FAR, target) == []


# a Pallas kernel with a debug switch (modelled on kernels exposing `interpret=debug`):
# only a choice whose both sides lack interpret=True shows that the kernel is compiled
PALLAS_SWITCH = """\
from jax.experimental import pallas as pl


def add_one(kernel, out, debug):
    return pl.pallas_call(kernel, out_shape=out, interpret={flag})
"""


@pytest.mark.parametrize(
    ("flag", "lines"),
    [
        # one side interprets: on cpu it may well run interpreted
        ("True if debug else False", []),
        ("False if debug else True", []),
        # neither side interprets: compiled, which cpu cannot lower
        ("False if debug else False", [5]),
        ("True if debug else True", []),
        # a flag is read as jax reads it, `if interpret:`
        ("1", []),
        ("0", [5]),
        ("None", [5]),
    ],
)
def test_interpret_chosen_by_a_switch_that_is_not_a_backend_test(
    check: CheckFn, flag: str, lines: list[int]
) -> None:
    source = PALLAS_SWITCH.format(flag=flag)
    assert _lines(check, source, "cpu") == lines
    # tpu lowers the compiled kernel whatever the switch says
    assert _lines(check, source, "tpu") == []


# mixed-precision attention casting its query by keyword (`q.astype(dtype=...)`)
CAST_QUERY = """\
import jax
import jax.numpy as jnp


def attend(q, k, v):
    return jax.nn.dot_product_attention(q.astype(dtype={dtype}), k, v)
"""


@pytest.mark.parametrize(
    ("dtype", "target", "lines"),
    [
        ("jnp.float16", "cpu", [6]),
        ("jnp.float16", "tpu", []),
        ('"float16"', "cpu", [6]),
        ("jnp.bfloat16", "cpu", []),
        ("jnp.float32", "cpu", []),
    ],
)
def test_a_cast_whose_dtype_is_a_keyword(check: CheckFn, dtype: str, target: str, lines: list[int]) -> None:
    assert _lines(check, CAST_QUERY.format(dtype=dtype), target) == lines


# jnp.poly of a square matrix (its characteristic polynomial) has no tpu lowering; of a
# 1-D array of roots it lowers everywhere
POLY = """\
import jax.numpy as jnp


def coefficients(n):
    return jnp.poly({arg})
"""


@pytest.mark.parametrize(
    ("arg", "lines"),
    [
        # no roots at all: the constant polynomial, a 1-D (empty) array
        ("[]", []),
        ("jnp.array([])", []),
        ("[[1.0, 2.0], [3.0, 4.0]]", [5]),
        # a shape given by keyword
        ("jnp.zeros(shape=(n, n))", [5]),
        ("jnp.ones(shape=(n,))", []),
        ("jnp.zeros(shape=n)", []),
    ],
)
def test_the_rank_of_a_literal_or_a_shaped_array(check: CheckFn, arg: str, lines: list[int]) -> None:
    source = POLY.format(arg=arg)
    assert _lines(check, source, "tpu") == lines
    assert _lines(check, source, "cpu") == []


# the matrix literal is a module constant reached through names inside jnp.asarray: the
# rank reader takes at most four steps (entering the wrapper is one, each name another)
RANK_THROUGH_NAMES = """\
import jax.numpy as jnp

ROWS = [[1.0, 2.0], [3.0, 4.0]]


def characteristic():
    a = ROWS
    b = a
    return jnp.poly(jnp.asarray(b))
"""
RANK_TOO_FAR = RANK_THROUGH_NAMES.replace("    b = a\n", "    a0 = a\n    b = a0\n")


def test_a_rank_is_read_through_a_wrapper_and_names(check: CheckFn) -> None:
    assert _lines(check, RANK_THROUGH_NAMES, "tpu") == [9]
    assert _lines(check, RANK_THROUGH_NAMES, "cpu") == []


def test_a_rank_past_the_reader_s_steps_is_not_visible(check: CheckFn) -> None:
    assert RANK_TOO_FAR.count(" = ") == 4
    assert _lines(check, RANK_TOO_FAR, "tpu") == []
