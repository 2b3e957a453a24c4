"""How the place of one reference is read (semantics/uses.py): called, only inspected, pinned, in a branch.

Each source marks the lines where a finding is expected with ``# found``; every other
reference to a catalogued API in it must stay silent. Read here:

- a reference handed to a function of the module that only looks at its parameter
  (``describe(jnp.linalg.eig)`` with ``fn.__name__``, ``callable(fn)``) is no use, while
  one that calls it, looks at it and calls it, or collects it in ``*args`` is;
- compared (``is``, ``in``), an attribute read, or a module-level table of functions is
  no use; a list of functions inside a function is;
- a local alias under the API's own name is found where it is called, one under another
  name where it is bound;
- ``functools.partial`` carries the keywords that make an API platform-limited;
- an input committed to the CPU device pins the call that takes it, also through a
  transformation given more than one positional argument (``jax.vmap(f, 0)``);
- the ``default=`` branch of ``lax.platform_dependent`` excludes the platforms named
  beside it, and a local function passed only to named branches runs only on those;
- a module-level name that wraps the API is a re-export unless the module calls it;
- a local function passed to ``jax.jit(..., backend="cpu")``, or a function decorated with
  a compiler for the host (``@qjit``), runs on cpu.

Modelled on real idioms: registries of solver functions and ``fn is jnp.linalg.eig``
dispatch (jax-ml/jax ``tests/linalg_sharding_test.py``), ``eig = _wrap(linalg.eig, ...)``
re-exports (brainpy/BrainPy ``brainpy/math/linalg.py``), inputs committed with
``jax.device_put(x, cpu)`` (invrs-io/fmmax ``tests/fmmax/test_eig.py``), cuDNN attention
bound with ``functools.partial`` (nebius/kvax ``kvax/ops/flash_attention_cudnn.py``),
``lax.platform_dependent`` dispatch (jax-ml/jax ``jax/_src/numpy/lax_numpy.py``) and functions
compiled by Catalyst (PennyLaneAI/catalyst ``frontend/test/pytest/test_jax_linalg.py``). The code is written for this suite.
Real jedi in the test interpreter, the real engine.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn, found_lines, marked_lines

# only the calls that end in a call of the API are uses; the rest only look at it
PASSED_AND_INSPECTED = """\
import jax.numpy as jnp


def describe(fn):
    return fn.__name__, callable(fn)


def apply(fn, x):
    return fn(x)


def log_then_apply(fn, x):
    print(fn)
    return fn(x)


def log_all(*fns):
    print(fns)


SOLVERS = [jnp.linalg.eig, jnp.linalg.eigvals]


def run(x, fn):
    describe(jnp.linalg.eig)
    log_all(jnp.linalg.eig)  # found
    if fn is jnp.linalg.eigvals or fn in (jnp.linalg.eig,):
        return apply(jnp.linalg.eig, x)  # found
    print(jnp.linalg.eigvals.__name__)
    return log_then_apply(jnp.linalg.eigvals, x)  # found


def local_table(x):
    solvers = [jnp.linalg.eig]  # found
    return solvers[0](x)


CASES = [{"name": "eig", "callable": lambda x: jnp.linalg.eig(x)}, (lambda x: jnp.linalg.eigvals(x),)]


def register(**metadata):
    return lambda cls: cls


@register(testcases=[{"callable": lambda x: jnp.linalg.eig(x, compute_left_eigenvectors=False)}])
class EigPlugin:
    def lowering(self, x):
        return jnp.linalg.eigvals(x)  # found


def local_cases(x):
    cases = [{"callable": lambda y: jnp.linalg.eig(y)}]  # found
    return cases[0]["callable"](x)


def table_of_local_lambda():
    return [lambda y: jnp.linalg.eigvals(y)]  # found


square = lambda x: jnp.linalg.eigvals(x)  # found
"""


def test_only_references_that_end_in_a_call_are_uses(check: CheckFn) -> None:
    """Also: a lambda stored in a module-level table runs where the table's entries are
    called (enpasos/jax2onnx ``jax2onnx/plugins/jax/lax/eig.py``: test cases registered with
    the plugin class, ``{"callable": lambda x: jax.lax.linalg.eig(x, ...)}``)."""
    assert (
        found_lines(check, PASSED_AND_INSPECTED, "tpu")
        == marked_lines(PASSED_AND_INSPECTED)
        == [26, 28, 30, 34, 48, 52, 57, 60]
    )
    assert found_lines(check, PASSED_AND_INSPECTED, "cpu") == []


ALIASES_AND_PARTIALS = """\
import functools

import jax
import jax.numpy as jnp


def same_name(x):
    eig = jnp.linalg.eig
    return eig(x)  # found


def other_name(x):
    solve = jnp.linalg.eigvals  # found
    return solve(x)


def attend(q, k, v):
    cudnn = functools.partial(jax.nn.dot_product_attention, implementation="cudnn")  # found
    xla = functools.partial(jax.nn.dot_product_attention, implementation="xla")
    return cudnn(q, k, v) + xla(q, k, v)


def chosen_by_option(q, k, v, flag, impl):
    if flag:
        attention = other_attention
    else:
        attention = jax.nn.dot_product_attention
    return attention(q, k, v, implementation=impl)


def chosen_by_option_cudnn(q, k, v, flag):
    if flag:
        attention = other_attention
    else:
        attention = jax.nn.dot_product_attention  # found
    return attention(q, k, v, implementation="cudnn")


def called_twice(q, k, v):
    attention = jax.nn.dot_product_attention  # found
    return attention(q, k, v, implementation="cudnn") + attention(k, q, v, implementation="cudnn")


def called_twice_alike(q, k, v, impl):
    attention = jax.nn.dot_product_attention
    return attention(q, k, v, implementation=impl) + attention(k, q, v, implementation=impl)


def handed_on(q, k, v, run):
    attention = jax.nn.dot_product_attention  # what `run` passes is not visible
    return run(attention, q, k, v) + attention(q, k, v, implementation="cudnn")


def other_attention(q, k, v, implementation=None):
    return q
"""


@pytest.mark.parametrize(
    ("target", "lines"), [("tpu", [9, 13, 18, 35, 40]), ("cpu", [18, 35, 40]), ("cuda", [])]
)
def test_aliases_are_found_where_they_name_the_api(check: CheckFn, target: str, lines: list[int]) -> None:
    """Also: an API stored in a local variable under another name is read with the keywords of
    that variable's one call (demon2036/MLLM-JAX megablox ``gmm.py``: ``pallas_call_fn =
    pl.pallas_call`` or aqt's, by option, then ``pallas_call_fn(kernel, ..., interpret=interpret)``)."""
    assert found_lines(check, ALIASES_AND_PARTIALS, target) == lines
    assert set(lines) <= set(marked_lines(ALIASES_AND_PARTIALS))


#: modelled on SachinKonan/SkyRLTpu tpu/pallas_arena/verify/prove_fixes.py, which saves
#: ``pl.pallas_call``, patches the module attribute with a wrapper forcing interpret mode
#: and puts the original back in a ``finally``
PATCHED = """\
import jax.experimental.pallas as pl


def run_interpreted(build):
    orig = pl.pallas_call

    def interpreted(*a, **kw):
        kw.setdefault("interpret", True)
        return orig(*a, **kw)

    pl.pallas_call = interpreted
    try:
        return build()
    finally:
        pl.pallas_call = orig


def kept_elsewhere(build, table):
    orig = pl.pallas_call  # found
    table["pallas_call"] = orig
    return build()


def called_plainly(kernel):
    orig = pl.pallas_call  # found
    try:
        return orig(kernel, out_shape=None)
    finally:
        pl.pallas_call = orig
"""


def test_an_api_saved_and_restored_around_a_patch_is_read_at_its_calls(check: CheckFn) -> None:
    """Putting the saved function back where it was read from is no use of it: what the
    saved name is called with decides (a ``**kw`` spread: not visible, no finding); stored
    anywhere else, it may be called with anything."""
    assert found_lines(check, PATCHED, "cpu") == marked_lines(PATCHED)


COMMITTED_AND_DISPATCHED = """\
import jax
import jax.numpy as jnp
from jax import lax


def on_host(x):
    cpu = jax.devices("cpu")[0]
    a = jnp.linalg.eig(jax.device_put(x, cpu))
    b = jax.vmap(jnp.linalg.eigvals, 0)(jax.device_put(x, cpu))
    return a, b, jnp.linalg.eigvals(x)  # found


def dispatch(x):
    return lax.platform_dependent(x, tpu=lambda y: y, default=lambda y: jnp.linalg.eigvals(y))


def dispatch_everywhere(x):
    return lax.platform_dependent(x, cuda=lambda y: y, default=lambda y: jnp.linalg.eigvals(y))  # found


def dispatch_local(x):
    def general(y):
        return jnp.linalg.eigvals(y)

    return lax.platform_dependent(x, cpu=general, cuda=general, default=jnp.sin)
"""


def test_committed_inputs_and_platform_branches(check: CheckFn) -> None:
    assert (
        found_lines(check, COMMITTED_AND_DISPATCHED, "tpu")
        == marked_lines(COMMITTED_AND_DISPATCHED)
        == [10, 18]
    )


# a module-level wrapper names the API for importers; it runs where they call it
REEXPORTS = """\
import jax.numpy as jnp


def wrap(f, module):
    return f


eig = wrap(jnp.linalg.eig, module="linalg")
eigvals = wrap(jnp.linalg.eigvals, module="linalg")  # found


def spectrum(x):
    return eigvals(x)
"""


def test_a_wrapped_module_name_is_a_reexport_unless_the_module_calls_it(check: CheckFn) -> None:
    assert found_lines(check, REEXPORTS, "tpu") == marked_lines(REEXPORTS) == [9]


# a local function handed to `jax.jit(..., backend="cpu")` runs on cpu; a decorator that
# compiles for the host (Catalyst's `qjit`, read from its import: catalyst need not be
# installed) pins the function it decorates
PINNED_FUNCTIONS = """\
import jax
import jax.numpy as jnp
from catalyst import qjit


def solve(x):
    def inner(y):
        return jnp.linalg.eig(y)

    return jax.jit(inner, backend="cpu")(x)


def solve_on_default(x):
    def inner(y):
        return jnp.linalg.eig(y)  # found

    return jax.jit(inner)(x)


@qjit
def compiled(x):
    return jnp.linalg.eigvals(x)


@jax.jit
def traced(x):
    return jnp.linalg.eigvals(x)  # found
"""


def test_functions_pinned_by_what_compiles_them(check: CheckFn) -> None:
    assert found_lines(check, PINNED_FUNCTIONS, "tpu") == marked_lines(PINNED_FUNCTIONS) == [15, 27]
