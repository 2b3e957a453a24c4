"""Table entries judged where the module uses the table (semantics/tables.py).

Records whose fields are passed by keyword, tables built from other tables
(``ALL = LINALG + OTHERS``, a few levels deep), and a dispatch table handed to a module
function that looks it up by the backend without raising. Real jedi in the test
interpreter, the real engine on cpu and tpu targets.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn

# shape_poly_test.py style records, their fields given by keyword; the parameterized test
# skips the "eig" group off cpu
KEYWORD_RECORDS = """\
import jax
import jax.numpy as jnp
import pytest


class Case:
    def __init__(self, group, fun):
        self.group = group
        self.fun = fun


CASES = [
    Case(group="eig", fun=lambda x: jnp.linalg.eig(x)),
    Case(group="schur", fun=lambda x: jax.scipy.linalg.schur(x)),
]


@pytest.mark.parametrize("case", CASES)
def test_case(case):
    if case.group == "eig" and jax.default_backend() != "cpu":
        pytest.skip("eig is cpu only")
    case.fun(jnp.eye(2))
"""


@pytest.mark.parametrize(("target", "lines"), [("cpu", []), ("tpu", [14])])
def test_a_records_keyword_fields_name_the_skip_that_gates_it(
    check: CheckFn, target: str, lines: list[int]
) -> None:
    # the eig record is skipped off cpu; the schur one, which no skip names, runs on tpu
    assert [f.span.line for f in check(KEYWORD_RECORDS, (target,), "tests/test_cases.py").findings] == lines


# the record table reaches the test through three tables built from it
DERIVED = """\
import jax
import jax.numpy as jnp
import pytest


class Case:
    def __init__(self, group, fun):
        self.group = group
        self.fun = fun


EIG = [Case("eig", lambda x: jnp.linalg.eig(x))]
LINALG = EIG + [Case("qr", lambda x: jnp.linalg.qr(x))]
NUMERIC = LINALG + [Case("fft", lambda x: jnp.fft.fft(x))]
ALL = NUMERIC + [Case("sin", lambda x: jnp.sin(x))]


@pytest.mark.parametrize("case", ALL)
def test_case(case):
    if case.group == "eig" and jax.default_backend() != "cpu":
        pytest.skip("eig is cpu only")
    case.fun(jnp.eye(2))
"""

CHECKED = """\
def checked(cases):
    return [c for c in cases if c.fun(jnp.eye(2)) is not None]


"""


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        (DERIVED, []),
        (DERIVED.replace('case.group == "eig" and ', ""), []),
        # one level is the table itself under another name
        (
            DERIVED.replace('NUMERIC = LINALG + [Case("fft", lambda x: jnp.fft.fft(x))]', "NUMERIC = LINALG"),
            [],
        ),
        # a comparison with the table calls no entry
        (DERIVED + "\n\nassert ALL != []\n", []),
        # the skip names another group: the eig entry runs on tpu
        (DERIVED.replace('case.group == "eig"', 'case.group == "qr"'), [12]),
        # the table the test runs is not built from EIG
        (DERIVED.replace('parametrize("case", ALL)', 'parametrize("case", [])'), [12]),
        # a function handed the table calls its entries at import, on any backend
        (
            DERIVED.replace(
                'ALL = NUMERIC + [Case("sin", lambda x: jnp.sin(x))]', CHECKED + "ALL = checked(NUMERIC)"
            ),
            [12],
        ),
    ],
)
def test_an_entry_of_a_table_built_from_tables_runs_where_the_last_is_used(
    check: CheckFn, source: str, lines: list[int]
) -> None:
    assert [f.span.line for f in check(source, ("tpu",), "tests/test_cases.py").findings] == lines


# a table grown by assigning to its own name, run by a test that skips nothing
SELF_EXTENDED = """\
import jax
import jax.numpy as jnp
import pytest

CASES = [lambda x: jnp.linalg.eig(x)]
CASES = CASES + [lambda x: jax.scipy.linalg.schur(x)]


@pytest.mark.parametrize("fun", CASES)
def test_case(fun):
    fun(jnp.eye(2))
"""


def test_a_table_that_extends_itself_runs_its_entries_where_it_is_used(check: CheckFn) -> None:
    assert [f.span.line for f in check(SELF_EXTENDED, ("tpu",), "tests/test_cases.py").findings] == [5, 6]
    assert [f.span.line for f in check(SELF_EXTENDED, ("cpu",), "tests/test_cases.py").findings] == []


CPU_SKIP = """\
    if jax.default_backend() != "cpu":
        pytest.skip("cpu only")
"""


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        # the test skips off cpu before it calls the entry: each self-extension is followed once
        (SELF_EXTENDED.replace("def test_case(fun):\n", "def test_case(fun):\n" + CPU_SKIP), []),
        # three self-extensions, then a table built from it: still read where the test skips
        (
            SELF_EXTENDED.replace(
                "CASES = CASES + [lambda x: jax.scipy.linalg.schur(x)]\n",
                "CASES = CASES + [lambda x: jax.scipy.linalg.schur(x)]\n" * 3 + "MORE = CASES + []\n",
            )
            .replace('parametrize("fun", CASES)', 'parametrize("fun", MORE)')
            .replace("def test_case(fun):\n", "def test_case(fun):\n" + CPU_SKIP),
            [],
        ),
        # the skip comes after the entry runs: it gates nothing
        (SELF_EXTENDED.replace("    fun(jnp.eye(2))\n", "    fun(jnp.eye(2))\n" + CPU_SKIP), [5, 6]),
    ],
)
def test_a_self_extended_table_keeps_the_skip_of_its_test(
    check: CheckFn, source: str, lines: list[int]
) -> None:
    assert source != SELF_EXTENDED
    assert [f.span.line for f in check(source, ("tpu",), "tests/test_cases.py").findings] == lines


# a plain table of lambdas (no record, no fields): the test's skip before its first call of
# the entry gates every entry, as it does in the test's own body
PLAIN_LAMBDAS = """\
import jax
import jax.numpy as jnp
import pytest

x = jnp.eye(2)
CASES = [lambda x: jnp.linalg.eig(x)]


@pytest.mark.parametrize("fun", CASES)
def test_case(fun):
    y = x + 1
    if jax.default_backend() != "cpu":
        pytest.skip("eig is cpu only")
    fun(y)
"""


@pytest.mark.parametrize(
    ("change", "lines"),
    [
        (("", ""), []),
        # the entry is handed to a checker, not called, before the skip
        (("    y = x + 1\n", "    jax.jit(fun)(x)\n    y = x + 1\n"), [6]),
        # the entry is called before the skip
        (("    y = x + 1\n", "    y = fun(x)\n"), [6]),
        # the skip is not a skip of the backend
        (('jax.default_backend() != "cpu"', "x is None"), [6]),
    ],
)
def test_a_lambda_table_is_gated_by_the_skip_before_the_call(
    check: CheckFn, change: tuple[str, str], lines: list[int]
) -> None:
    source = PLAIN_LAMBDAS.replace(*change) if change[0] else PLAIN_LAMBDAS
    assert change[0] == "" or source != PLAIN_LAMBDAS
    assert [f.span.line for f in check(source, ("tpu",), "tests/test_cases.py").findings] == lines
    assert [f.span.line for f in check(source, ("cpu",), "tests/test_cases.py").findings] == []


# a dispatch table handed to a function that looks it up by the backend, with a default
# for the platforms it lacks (no raise: the module loads everywhere)
PICKED = """\
import jax
from jax.experimental.sparse.linalg import spsolve


def _solve_gpu(data, indices, indptr, b):
    return spsolve(data, indices, indptr, b)


def pick(solvers):
    return solvers.get(jax.default_backend(), lambda *a: a[-1])


_SOLVERS = {"gpu": _solve_gpu}


def solve(*args):
    return pick(_SOLVERS)(*args)
"""


@pytest.mark.parametrize(
    ("change", "lines"),
    [
        (("", ""), []),
        # the function reads its parameter by something else than the backend
        (("solvers.get(jax.default_backend(), ", "solvers.get(0, "), [6]),
        # the table is passed where the function takes it as `*rest`, not as a named parameter
        (("def pick(solvers):", "def pick(*solvers):"), [6]),
        # the table is passed by keyword, not at the parameter's position
        (("pick(_SOLVERS)", "pick(solvers=_SOLVERS)"), [6]),
        # handed to a builtin, not to a function of this module
        (("pick(_SOLVERS)(*args)", "print(_SOLVERS)"), [6]),
        # nothing reads the table
        (("pick(_SOLVERS)(*args)", "args"), [6]),
        # the function only prints the table it is handed
        (("return solvers.get(jax.default_backend(), lambda *a: a[-1])", "print(solvers)"), [6]),
    ],
)
def test_a_table_handed_to_a_function_that_picks_by_the_backend(
    check: CheckFn, change: tuple[str, str], lines: list[int]
) -> None:
    source = PICKED.replace(*change) if change[0] else PICKED
    assert change[0] == "" or source != PICKED
    assert [f.span.line for f in check(source, ("tpu",)).findings] == lines
