"""``match`` on the backend (semantics/guards.py): a case runs where its pattern matches
and no case before it did; code after the ``match`` runs where some case falls through or
none matched.

Each source marks with ``# found`` the lines reported on the target in its test; every
other catalogued call in it must stay silent. Modelled on KeithBallard/fea-in-jax
``tests/exploring_jax/thermal_diffusion_spsolve.py`` and ``src/fe_jax/sparse_linear_solve.py``
(``match jax.extend.backend.get_backend().platform:`` with ``case "cpu":`` and ``case "gpu":``
dispatching to private solvers, one calling another, all defined under a module-level
``if CUPY_AVAILABLE:``). The code is written for this suite. Real jedi in the test
interpreter, the real engine; ``spsolve`` lowers on cpu and cuda, not on tpu or rocm.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn, found_lines, marked_lines

CASES = """\
import jax
from jax.experimental import sparse as jsparse


def by_case(data, indices, indptr, b):
    match jax.default_backend():
        case "cpu":
            return jsparse.linalg.spsolve(data, indices, indptr, b)
        case "gpu":
            return jsparse.linalg.spsolve(data, indices, indptr, b)
        case "tpu":
            return jsparse.linalg.spsolve(data, indices, indptr, b)  # found
    return b


def either(data, indices, indptr, b, flag):
    match jax.devices()[0].platform:
        case "cpu" | "gpu":
            x = jsparse.linalg.spsolve(data, indices, indptr, b)
        case "tpu" if flag:
            x = b
        case _:
            # tpu without the flag reaches here
            x = jsparse.linalg.spsolve(data, indices, indptr, b)  # found
    return x


def after(data, indices, indptr, b):
    match jax.default_backend():
        case "tpu":
            return b
    return jsparse.linalg.spsolve(data, indices, indptr, b)


def not_the_backend(data, indices, indptr, b, mode):
    match mode:
        case "cpu":
            return b
    return jsparse.linalg.spsolve(data, indices, indptr, b)  # found


def captured(data, indices, indptr, b):
    match jax.default_backend():
        case "cpu":
            return b
        case other:
            return jsparse.linalg.spsolve(data, indices, indptr, b)  # found
"""


def test_a_case_runs_where_it_matches_and_no_case_before_did(check: CheckFn) -> None:
    assert found_lines(check, CASES, "tpu") == marked_lines(CASES)


PRIVATE = """\
import jax
from jax.experimental import sparse as jsparse

CUPY_AVAILABLE = True

if CUPY_AVAILABLE:

    def _cupy_spsolve(data, indices, indptr, b):
        return jsparse.linalg.spsolve(data, indices, indptr, b)

    def _solve_gpu(data, indices, indptr, b):
        return _cupy_spsolve(data, indices, indptr, b)

    def _spsolve(data, indices, indptr, b):
        match jax.default_backend():
            case "gpu":
                return _solve_gpu(data, indices, indptr, b)
        raise ValueError("unsupported backend")


def {public}(data, indices, indptr, b):
    return _spsolve(data, indices, indptr, b)
"""


@pytest.mark.parametrize("public", ["solve", "_solve"])
def test_private_functions_run_where_their_private_callers_call_them(check: CheckFn, public: str) -> None:
    # `_solve` itself is never called: its body gates nothing, the `case "gpu":` still does
    assert found_lines(check, PRIVATE.format(public=public), "tpu") == []


def test_a_private_function_also_called_unguarded_is_found(check: CheckFn) -> None:
    source = PRIVATE.format(public="solve") + (
        "\n\ndef direct(data, indices, indptr, b):\n    return _solve_gpu(data, indices, indptr, b)\n"
    )
    assert found_lines(check, source, "tpu") == [9]
