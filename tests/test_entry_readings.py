"""A parameterized test's skip decided by the fields of its table entry (semantics/entry.py).

A harness table holds one record per primitive; the test skips some of them off cpu by
a comparison of the record's string fields. Each case gives the skip's comparison and
the groups whose cpu-only call is then reported on tpu (a record the skip decides to
skip there is silent). Read here, on the entry's known fields:

- ``==`` and ``!=`` against a string, with the field on either side (``"eigh" ==
  harness.group_name``);
- ``in`` and ``not in`` a literal tuple of strings, and a string ``in`` a field (``"lu"
  in harness.fullname``);
- nothing else decides: a tuple holding a name, a name, or a string on the right of
  ``in`` leave the skip unread, so both records are reported. Those cases are written
  so that Python's own answer skips neither record either: a reading that decides them
  correctly passes too, one that decides them wrongly fails.

Modelled on jax-ml/jax jax/experimental/jax2tf/tests/primitives_test.py (``if "eigh" ==
harness.group_name and device == "cpu":``, ``if device == "gpu" and "lu" in
harness.fullname:``) and the harness records of jax-ml/jax
jax/_src/internal_test_util/test_harnesses.py. The code is written for this suite. Real
jedi in the test interpreter, the real engine on the tpu target.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn, found_lines

HARNESSES = """\
import jax
import jax.numpy as jnp
import pytest

BOTH = ("eig", "schur")
OTHER = "qr"


class Harness:
    def __init__(self, group_name, fullname, fun):
        self.group_name = group_name
        self.fullname = fullname
        self.fun = fun


ALL_HARNESSES = [
    Harness("eig", "eig_shape=float32[2,2]", lambda x: jnp.linalg.eig(x)),  # eig
    Harness("schur", "schur_shape=float32[2,2]", lambda x: jax.scipy.linalg.schur(x)),  # schur
]


@pytest.mark.parametrize("harness", ALL_HARNESSES)
def test_prim(harness):
    if SKIP and jax.default_backend() != "cpu":
        pytest.skip("cpu only")
    harness.fun(jnp.eye(2))
"""

#: the skip's comparison, and the groups reported on tpu
SKIPS = [
    ('harness.group_name == "eig"', {"schur"}),
    ('harness.group_name != "eig"', {"eig"}),
    ('"eig" == harness.group_name', {"schur"}),
    ('"eig" != harness.group_name', {"eig"}),
    ('"ei" in harness.fullname', {"schur"}),
    ('"ei" not in harness.fullname', {"eig"}),
    ('harness.group_name in ("eig", "qr")', {"schur"}),
    ('harness.group_name not in ("eig", "qr")', {"eig"}),
    # left unread, and Python skips neither either
    ("harness.group_name == OTHER", {"eig", "schur"}),
    ('harness.group_name in "svd_qr"', {"eig", "schur"}),
    ('harness.group_name in ("svd", OTHER)', {"eig", "schur"}),
    ("harness.group_name not in BOTH", {"eig", "schur"}),
]


@pytest.mark.parametrize(("skip", "reported"), SKIPS)
def test_a_skip_is_decided_by_the_entrys_fields(check: CheckFn, skip: str, reported: set[str]) -> None:
    source = HARNESSES.replace("SKIP", skip, 1)
    lines = source.splitlines()
    expected = [n for n, line in enumerate(lines, 1) if any(line.endswith(f"# {g}") for g in reported)]
    assert found_lines(check, source, "tpu", "tests/test_prims.py") == expected, skip
