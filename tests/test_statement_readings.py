"""What a function's own statements say (semantics/statements.py), read through the guards.

Each source marks the lines where a finding is expected with ``# found``; every other
reference to a catalogued API in it must stay silent. Read here:

- a flag cleared off a backend (``if <backend test>: use_cuda = False``) gates what runs
  under ``if use_cuda:`` only when that ``if`` does nothing else: no ``else``, one
  statement, one plain target that is the flag, the constant ``False``;
- a number a function returns per platform compared with ``==`` and ``!=``;
- a device kind read from the value a name last got before the test, where the function
  rebinds the name later, and not where a loop or an augmented assignment binds it first;
- a capability probe is a ``try`` that returns ``True`` and whose handlers return ``False``:
  a ``try`` returning another constant, or a handler returning ``True``, probes nothing;
- a predicate whose earlier returns all give a falsy constant (a ``try`` import whose
  handler returns ``False``) is true only where its last return can be; any other earlier
  return, a nested function or a ``yield`` leaves it unread.

Modelled on mlcommons/algorithmic-efficiency algoperf/workloads/librispeech_deepspeech/
librispeech_jax/models.py (``if jax.devices()[0].platform != "gpu": use_cuda = False``),
TPU generation helpers such as AI-Hypercomputer/maxtext's ``get_tpu_version``-style code,
device kinds lower-cased after a check (google/flax and praxis benchmarks), and the cached
scaled_matmul probe of google/qwix tests/_src/core/mxfp_dot_test.py, and the
``_supports_pallas`` helper of GlibTkachenko/attnax attnax/kernels/pallas.py. The code is written
for this suite. Real jedi in the test interpreter, the real engine.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn, found_lines, marked_lines

FLAG_HEAD = """\
import jax
from jax.experimental import rnn


def run(x, use_cuda=True, other=True):
"""

#: the clearing statement, and whether it is read as one (the guarded lstm is then silent on cpu)
FLAG_CLEARS = [
    ('    if jax.devices()[0].platform != "gpu":\n        use_cuda = False\n', True),
    (
        '    if jax.devices()[0].platform != "gpu":\n        use_cuda = False\n    else:\n        print()\n',
        False,
    ),
    ('    if jax.devices()[0].platform != "gpu":\n        use_cuda = False\n        print()\n', False),
    ('    if jax.devices()[0].platform != "gpu":\n        use_cuda = other = False\n', False),
    ('    if jax.devices()[0].platform != "gpu":\n        (use_cuda) = False\n', True),
    ('    if jax.devices()[0].platform != "gpu":\n        use_cuda, other = False, False\n', False),
    ('    if jax.devices()[0].platform != "gpu":\n        other = False\n', False),
    ('    if jax.devices()[0].platform != "gpu":\n        use_cuda = 0\n', False),
    ('    if jax.devices()[0].platform != "gpu":\n        use_cuda = True\n', False),
    ('    if jax.devices()[0].platform != "gpu":\n        use_cuda = None\n', False),
    ('    while jax.devices()[0].platform != "gpu":\n        use_cuda = False\n', False),
]


@pytest.mark.parametrize(("clear", "read"), FLAG_CLEARS)
def test_a_flag_is_cleared_only_by_an_if_that_does_nothing_else(
    check: CheckFn, clear: str, read: bool
) -> None:
    mark = "" if read else "  # found"
    source = FLAG_HEAD + clear + f"    if use_cuda:\n        return rnn.lstm(x){mark}\n    return x\n"
    assert found_lines(check, source, "cpu") == marked_lines(source), source


GENERATION = """\
import jax
import jax.numpy as jnp


def generation():
    if jax.default_backend() != "tpu":
        return 0
    return 5


def run(a):
    if generation() == 0:
        jnp.linalg.eig(a)
    if generation() != 0:
        jnp.linalg.eig(a)  # found
    if generation() == 5:
        jnp.linalg.eig(a)  # found
    if generation() != 5:
        jnp.linalg.eig(a)
    if generation() == -5:
        jnp.linalg.eig(a)
"""


def test_a_number_returned_per_platform_compared_for_equality(check: CheckFn) -> None:
    assert found_lines(check, GENERATION, "tpu") == marked_lines(GENERATION)


KIND_HEAD = """\
import jax


def run(a, kinds):
"""

#: what binds ``kind`` before the test (the function lower-cases it after), and whether
#: the test is read as a TPU check (the cuDNN attention under it is then silent on cpu)
KIND_BINDINGS = [
    ("    kind = jax.devices()[0].device_kind\n", True),
    ("    print(a)\n    kind = jax.devices()[0].device_kind\n    print(a)\n", True),
    ("    kind = 'cpu'\n    kind = jax.devices()[0].device_kind\n", True),
    ("    kind = jax.devices()[0].device_kind\n    kind += ''\n", False),
    ("    kind = jax.devices()[0].device_kind\n    for kind in kinds:\n        pass\n", False),
    ("    kind = jax.devices()[0].device_kind\n    kind = 'cpu'\n", False),
]


@pytest.mark.parametrize(("binding", "tpu"), KIND_BINDINGS)
def test_a_kind_is_read_from_its_last_value_before_the_test(check: CheckFn, binding: str, tpu: bool) -> None:
    source = (
        KIND_HEAD
        + binding
        + "    if 'TPU' in kind:\n"
        + "        return jax.nn.dot_product_attention(a, a, a, implementation='cudnn')\n"
        + "    kind = kind.lower()\n"
        + "    return kind\n"
    )
    assert (found_lines(check, source, "cpu") == []) is tpu, source


PROBE = """\
import functools

import jax
import jax.numpy as jnp
import pytest


@functools.cache
def supported():
    try:
        jax.jit(jnp.linalg.eig).lower(jnp.ones((2, 2)))
        return {good}
    except NotImplementedError:
        return {bad}


def test_eig():
    if not supported():
        pytest.skip("no eig lowering here")
    jnp.linalg.eig(jnp.ones((2, 2))){mark}
"""


@pytest.mark.parametrize(
    ("good", "bad", "probes"),
    [("True", "False", True), ("1", "False", False), ("True", "True", False), ("None", "False", False)],
)
def test_a_probe_returns_true_in_its_try_and_false_in_its_handlers(
    check: CheckFn, good: str, bad: str, probes: bool
) -> None:
    source = PROBE.format(good=good, bad=bad, mark="" if probes else "  # found")
    assert found_lines(check, source, "tpu") == marked_lines(source), source


# a predicate whose earlier returns all give a falsy constant: modelled on
# GlibTkachenko/attnax attnax/kernels/pallas.py (`_supports_pallas`: a `try` import whose
# handler returns False, then `return backend in ("gpu", "tpu")`)
EXITS_PREDICATE = """\
import jax


def supported(flag=False):
{exits}
    backend = jax.default_backend()
    return backend in ("gpu", "tpu")


def attention(q, k, v):
    if supported():
        return jax.nn.dot_product_attention(q, k, v, implementation="cudnn"){mark}
    return q


def fallback(q, k, v):
    if not supported():
        return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # found
    return q
"""


@pytest.mark.parametrize(
    ("exits", "read"),
    [
        (
            "    try:\n        import jax.experimental.pallas\n    except ImportError:\n        return False",
            True,
        ),
        ("    if flag:\n        return None", True),
        ("    if flag:\n        return 0", True),
        ("    if flag:\n        return", True),
        ("    if flag:\n        return True", False),
        ("    if flag:\n        return 'no'", False),
        ("    def inner():\n        return True", False),
        ("    if flag:\n        yield False", False),
    ],
)
def test_a_predicate_read_through_its_falsy_early_returns(check: CheckFn, exits: str, read: bool) -> None:
    source = EXITS_PREDICATE.format(exits=exits, mark="" if read else "  # found")
    assert found_lines(check, source, "cpu") == marked_lines(source), source
