"""Private functions picked from a table by the backend run only on their key's platform.

Modelled on solver registries keyed by backend (arpastrana/jax_fdm
src/jax_fdm/equilibrium/sparse.py: `{"cpu": spsolve_cpu, "gpu": spsolve_gpu}` handed to a
function that reads `solvers.get(jax.default_backend())`) and attention dispatch tables.
Real jedi in the test interpreter.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn

DISPATCH = """\
import jax
import jax.numpy as jnp
from jax.experimental.sparse.linalg import spsolve


def _solve_gpu(data, indices, indptr, b):
    return spsolve(data, indices, indptr, b)


def _solve_cpu(data, indices, indptr, b):
    return spsolve(data, indices, indptr, b)


def _eig_cpu(a):
    return jnp.linalg.eig(a)


_SOLVERS = {"cpu": _solve_cpu, "gpu": _solve_gpu}
_EIGS = {"cpu": _eig_cpu, "tpu": jnp.linalg.eigh}


def solve(*args):
    return _SOLVERS[jax.default_backend()](*args)


def eig(a):
    backend = jax.default_backend()
    return _EIGS.get(backend, jnp.linalg.eigh)(a)
"""

REGISTRY = """\
import jax
from jax.experimental.sparse.linalg import spsolve


def _solve_gpu(data, indices, indptr, b):
    return spsolve(data, indices, indptr, b)


def register(solvers):
    backend = jax.default_backend()
    solver = solvers.get(backend)
    if not solver:
        raise ValueError(f"no solver for {backend}")
    return solver


_SOLVERS = {"cpu": lambda *a: a[-1], "gpu": _solve_gpu}
solve = register(_SOLVERS)
"""


@pytest.mark.parametrize(
    ("target", "lines"),
    [
        ("tpu", []),  # neither solver nor the cpu eig is picked on a TPU
        ("rocm", [7]),  # the "gpu" entry runs on rocm, where spsolve does not lower
        ("cpu", []),
    ],
)
def test_a_table_read_by_the_backend_runs_each_entry_on_its_key(
    check: CheckFn, target: str, lines: list[int]
) -> None:
    assert [f.span.line for f in check(DISPATCH, (target,)).findings] == lines


@pytest.mark.parametrize(
    ("change", "lines"),
    [
        (("", ""), []),
        # a public function: importers may call it on any backend
        (("_solve_gpu", "solve_gpu"), [7]),
        # the table is read by something else too: entries may run anywhere
        (("def solve(*args):", "ALL = list(_SOLVERS.values())\n\n\ndef solve(*args):"), [7, 11]),
        # indexed by a value that is not the backend
        (("_SOLVERS[jax.default_backend()]", '_SOLVERS["gpu"]'), [7, 11]),
        # a key naming no platform
        (('"gpu": _solve_gpu', '"fast": _solve_gpu'), [7]),
    ],
)
def test_what_keeps_an_entry_from_being_read_by_its_key(
    check: CheckFn, change: tuple[str, str], lines: list[int]
) -> None:
    source = DISPATCH.replace(*change) if change[0] else DISPATCH
    assert [f.span.line for f in check(source, ("tpu",)).findings if f.span.line < 15] == lines


def test_a_registry_function_handed_the_table(check: CheckFn) -> None:
    """The table handed to a function that reads its parameter by the backend."""
    assert [f.span.line for f in check(REGISTRY, ("tpu",)).findings] == []
    stored = REGISTRY.replace(
        "    solver = solvers.get(backend)", "    solver = solvers.get(backend)\n    print(solvers)"
    )
    assert [f.span.line for f in check(stored, ("tpu",)).findings] == [6]


# jax-ml/jax tests/fused_attention_stablehlo_test.py style: a helper called only from tests
# run on cuda, in a module that also names a backend (so the jit-pin reading runs first)
HELPER_BESIDE_A_PIN = """\
import jax
import jax.numpy as jnp
from jax._src import test_util as jtu


def eig_values(x):
    return jnp.linalg.eig(x)[0]


on_host = jax.jit(jnp.sin, backend="cpu")


class EigTest(jtu.JaxTestCase):
    @jtu.run_on_devices("cpu", "gpu")
    def test_values(self):
        eig_values(jnp.eye(3))
"""


def test_a_test_helper_in_a_module_that_pins_something_else(check: CheckFn) -> None:
    assert [f.span.line for f in check(HELPER_BESIDE_A_PIN, ("tpu",), "tests/test_eig.py").findings] == []


# A primitive's per-platform lowering rules (modelled on custom primitives that register a
# Pallas TPU kernel as the lowering for tpu only, e.g. chaobrain/brainevent's kernels and
# jax's own `mlir.register_lowering(prim, ..., platform="tpu")` registrations).
REGISTERED = """\
import functools

import jax
from jax.experimental import pallas as pl
from jax.extend.core import Primitive
from jax.interpreters import mlir

double_p = Primitive("double")


def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


def _tpu_rule(x):
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def _gpu_rule(x, *, warps):
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def _any_rule(x):
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


mlir.register_lowering(double_p, mlir.lower_fun(_tpu_rule, multiple_results=False), platform="tpu")
mlir.register_lowering(
    double_p, mlir.lower_fun(functools.partial(_gpu_rule, warps=4), multiple_results=False), platform="cuda"
)
mlir.register_lowering(double_p, mlir.lower_fun(_any_rule, multiple_results=False))
"""


@pytest.mark.parametrize(
    ("source", "lines"),
    [
        (REGISTERED, [24]),  # the tpu and cuda rules run only there; the default rule anywhere
        (REGISTERED.replace('platform="tpu"', 'platform="cpu"'), [16, 24]),  # a cpu rule lowers on cpu
        (REGISTERED.replace("from jax.interpreters import mlir", "from mylib import mlir"), [16, 20, 24]),
    ],
)
def test_a_lowering_rule_registered_for_one_platform_runs_there(
    check: CheckFn, source: str, lines: list[int]
) -> None:
    assert [f.span.line for f in check(source, ("cpu",)).findings] == lines


# A project's own primitive class that registers a Pallas kernel generator for one platform
# (modelled on chaobrain/brainevent brainevent/_csr/plasticity_binary.py:
# `update_csr_on_binary_pre_p.def_pallas_kernel('tpu', partial(_generator, 'mosaic_tpu'))`).
PROJECT_REGISTERED = """\
from functools import partial

import jax
from jax.experimental import pallas as pl

from mylib import XLACustomKernel

double_p = XLACustomKernel("double")


def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


def _pallas_generator(backend, x):
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def _any_generator(x):
    return pl.pallas_call(_kernel, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


double_p.def_pallas_kernel("tpu", partial(_pallas_generator, "mosaic_tpu"))
double_p.def_kernel(_any_generator)
"""


@pytest.mark.parametrize(
    ("change", "lines"),
    [
        (("", ""), [20]),  # the tpu generator runs only there; the other one anywhere
        (('def_pallas_kernel("tpu"', 'def_pallas_kernel("cpu"'), [16, 20]),
        (
            (
                'def_pallas_kernel("tpu", partial(_pallas_generator, "mosaic_tpu"))',
                'def_pallas_kernel(partial(_pallas_generator, "mosaic_tpu"), backend="tpu")',
            ),
            [20],
        ),
        # the string is not a platform: nothing says where it runs
        (('def_pallas_kernel("tpu"', 'def_pallas_kernel("fast"'), [16, 20]),
    ],
)
def test_a_kernel_a_project_registry_names_a_platform_for_runs_there(
    check: CheckFn, change: tuple[str, str], lines: list[int]
) -> None:
    source = PROJECT_REGISTERED.replace(*change) if change[0] else PROJECT_REGISTERED
    assert change[0] == "" or source != PROJECT_REGISTERED
    assert [f.span.line for f in check(source, ("cpu",)).findings] == lines


# A module that picks its solver at import and raises where none is registered (modelled on
# arpastrana/jax_fdm src/jax_fdm/equilibrium/sparse.py `spsolve = register_sparse_solver(_solvers)`):
# it never loads on the other backends, so none of its functions runs there.
IMPORT_REGISTRY = """\
import jax
from jax.experimental.sparse.linalg import spsolve as spsolve_jax


def spsolve_gpu(A, b):
    return spsolve_jax(A.data, A.indices, A.indptr, b)


def register_sparse_solver(solvers):
    backend = jax.default_backend()
    sparse_solver = solvers.get(backend)

    if not sparse_solver:
        raise ValueError(f"Default backend {backend} does not support a sparse solver")

    return sparse_solver


_solvers = {"cpu": lambda A, b: b, "gpu": spsolve_gpu}

spsolve = register_sparse_solver(_solvers)
"""


@pytest.mark.parametrize(
    ("change", "target", "lines"),
    [
        (("", ""), "tpu", []),  # the import raises on tpu
        (("", ""), "rocm", [6]),  # "gpu" is registered: rocm loads it, and spsolve fails there
        (("    if not sparse_solver:", "    if sparse_solver is None:"), "tpu", []),
        (("sparse_solver = solvers.get(backend)", "sparse_solver = solvers[backend]"), "tpu", []),
        # no raise when the backend is missing: the module loads everywhere
        (("        raise ValueError", "        print"), "tpu", [6]),
        # keyed by something else than the backend
        (("solvers.get(backend)", 'solvers.get("gpu")'), "tpu", [6]),
    ],
)
def test_a_module_that_fails_to_import_without_a_registered_solver(
    check: CheckFn, change: tuple[str, str], target: str, lines: list[int]
) -> None:
    old, new = change
    source = IMPORT_REGISTRY.replace(old, new) if old else IMPORT_REGISTRY
    assert old == "" or source != IMPORT_REGISTRY
    assert [f.span.line for f in check(source, (target,)).findings] == lines
