"""Which failures a ``try`` around a use handles (semantics/handled.py).

A trace-time error (cuDNN attention: ``RuntimeError: cuDNN is not detected``) is caught
where the call is traced inside the ``try``, also when the call sits in a lambda jitted
into a local variable that is only called inside it (modelled on keras-team/keras
keras/src/backend/jax/nn.py, which tries the cuDNN attention and falls back to XLA). A
lowering error (``eigvals`` on tpu) is caught only where the call compiles right there:
``jax.jit(api)(...)`` or ``jax.jit(api).lower(...)`` inside the ``try`` (modelled on
jax-ml/jax tests/linalg_test.py's ``jax.jit(fn).lower(...)`` checks of unsupported
backends). Each case changes one thing of a silent source and says what the change
reports. Real jedi in the test interpreter, the real engine.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn

# a lambda jitted into a local variable, only called inside a try catching RuntimeError
JITTED_LAMBDA = """\
import jax


def attend(q, k, v):
    fast = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, implementation="cudnn"))
    try:
        return fast(q, k, v)
    except RuntimeError:
        return jax.nn.dot_product_attention(q, k, v)
"""


@pytest.mark.parametrize(
    ("change", "lines"),
    [
        (("", ""), []),
        # the handler catches what the cuDNN check does not raise
        (("except RuntimeError:", "except ValueError:"), [5]),
        # the handler logs and re-raises
        (("        return jax.nn.dot_product_attention(q, k, v)\n", "        raise\n"), [5]),
        # the jitted lambda is also called outside the try
        (("    try:\n", "    fast(q, k, v)\n    try:\n"), [5]),
        # the jitted lambda is handed on inside the try, not called there
        (("return fast(q, k, v)", "return jax.vmap(fast)(q, k, v)"), [5]),
        # it is called in the handler, where nothing catches its error
        (("        return jax.nn.dot_product_attention(q, k, v)\n", "        return fast(q, k, v)\n"), [5]),
        # the lambda is not the function jitted: it is a second argument
        (("jax.jit(lambda", "jax.tree.map(print, lambda"), [5]),
        # the jitted lambda is never called: nothing shows where it runs
        (("return fast(q, k, v)", "return fast"), [5]),
        # not kept in a variable: the lambda is jitted and called in place, inside the try
        (
            (
                '    fast = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v, implementation="cudnn"))\n'
                "    try:\n        return fast(q, k, v)\n",
                "    try:\n        return jax.jit(lambda q, k, v: jax.nn.dot_product_attention("
                'q, k, v, implementation="cudnn"))(q, k, v)\n',
            ),
            [],
        ),
    ],
)
def test_a_jitted_lambda_is_caught_where_it_is_called(
    check: CheckFn, change: tuple[str, str], lines: list[int]
) -> None:
    source = JITTED_LAMBDA.replace(*change) if change[0] else JITTED_LAMBDA
    assert change[0] == "" or source != JITTED_LAMBDA
    assert [f.span.line for f in check(source, ("cpu",)).findings] == lines


# eigvals compiled right there inside a try that catches the lowering error
COMPILED = """\
import jax
import jax.numpy as jnp


def eigenvalues(a):
    try:
        return jax.jit(jnp.linalg.eigvals)(a)
    except NotImplementedError:
        return jnp.diagonal(a)
"""


@pytest.mark.parametrize(
    ("change", "lines"),
    [
        (("", ""), []),
        # lowered, not called: the lowering error is raised there too
        (("jax.jit(jnp.linalg.eigvals)(a)", "jax.jit(jnp.linalg.eigvals).lower(a)"), []),
        # RuntimeError is a lowering error's base too
        (("except NotImplementedError:", "except RuntimeError:"), []),
        # traced only: nothing lowers, so nothing fails to
        (("jax.jit(jnp.linalg.eigvals)(a)", "jax.jit(jnp.linalg.eigvals).trace(a)"), []),
        # a plain call in a library function may be traced by a caller's jit and lowered after
        # the try is left (test_an_eager_call_is_lowered_inside_its_try: one that runs on the host)
        (("jax.jit(jnp.linalg.eigvals)(a)", "jnp.linalg.eigvals(a)"), [7]),
        # vmapped, not compiled
        (("jax.jit(jnp.linalg.eigvals)(a)", "jax.vmap(jnp.linalg.eigvals)(a)"), [7]),
        # the jitted function is kept and called after the try
        (
            ("        return jax.jit(jnp.linalg.eigvals)(a)\n", "        f = jax.jit(jnp.linalg.eigvals)\n"),
            [7],
        ),
        # the handler catches what the lowering does not raise
        (("except NotImplementedError:", "except ValueError:"), [7]),
        # the handler re-raises
        (("        return jnp.diagonal(a)\n", "        raise\n"), [7]),
        # the compiled call is in the handler, outside the try's body
        (
            (
                "        return jax.jit(jnp.linalg.eigvals)(a)\n    except NotImplementedError:\n"
                "        return jnp.diagonal(a)\n",
                "        return jnp.diagonal(a)\n    except NotImplementedError:\n"
                "        return jax.jit(jnp.linalg.eigvals)(a)\n",
            ),
            [9],
        ),
    ],
)
def test_a_lowering_error_is_caught_where_the_call_compiles(
    check: CheckFn, change: tuple[str, str], lines: list[int]
) -> None:
    source = COMPILED.replace(*change) if change[0] else COMPILED
    assert change[0] == "" or source != COMPILED
    assert [f.span.line for f in check(source, ("tpu",)).findings] == lines
    assert [f.span.line for f in check(source, ("cpu",)).findings] == []


# an eager call whose lowering fails inside a try with a fallback; modelled on
# Naruki-Ichihara/fealax fealax/solver/linear_solvers.py (`spsolve` in a `try` whose
# `except Exception` falls back to an iterative solve)
EAGER = """\
import jax
import jax.numpy as jnp
import numpy as np


def eigenvalues(a):
    try:
        return np.asarray(jnp.linalg.eigvals(a))
    except NotImplementedError:
        pass
    return jnp.diagonal(a)
"""
TAIL = "    return jnp.diagonal(a)\n"
EAGER_BODY = "def eigenvalues(a):\n" + EAGER.split("def eigenvalues(a):\n")[1]
METHOD = (
    "class Solver:\n    def eigenvalues(self, a):\n        try:\n"
    "            return np.asarray(jnp.linalg.eigvals(a))\n"
    "        except NotImplementedError:\n            pass\n        return jnp.diagonal(a)\n"
)


@pytest.mark.parametrize(
    ("change", "lines"),
    [
        (("", ""), []),
        # nothing shows it runs on the host: a caller elsewhere may jit it
        (("np.asarray(jnp.linalg.eigvals(a))", "jnp.linalg.eigvals(a)"), [8]),
        # host values from static attributes only are fine under jit
        (("np.asarray(jnp.linalg.eigvals(a))", "jnp.linalg.eigvals(a) * np.prod(a.shape)"), [8]),
        (("np.asarray(jnp.linalg.eigvals(a))", "jnp.linalg.eigvals(a) * float(len(a))"), [8]),
        (("np.asarray(jnp.linalg.eigvals(a))", "float(jnp.linalg.eigvals(a)[0].real)"), []),
        (("np.asarray(jnp.linalg.eigvals(a))", "jnp.linalg.eigvals(a).tolist()"), []),
        # the function holding the try is jitted: the try runs while tracing, the lowering after it
        (("def eigenvalues", "@jax.jit\ndef eigenvalues"), [9]),
        (("def eigenvalues", "@jax.vmap\ndef eigenvalues"), [9]),
        # a decorator that is not jax's stages nothing
        (("def eigenvalues", "@np.vectorize\ndef eigenvalues"), []),
        # handed to jit in the module
        ((TAIL, TAIL + "\n\nfast = jax.jit(eigenvalues)\n"), [8]),
        # called by a jitted function, or by a function a jitted one calls
        ((TAIL, TAIL + "\n\n@jax.jit\ndef step(a):\n    return eigenvalues(a) + 1\n"), [8]),
        ((TAIL, TAIL + "\n\ndef run(a):\n    return eigenvalues(a)\n\n\nstep = jax.jit(run)\n"), [8]),
        # called by a function nothing stages
        ((TAIL, TAIL + "\n\ndef run(a):\n    return eigenvalues(a)\n"), []),
        # a method the module never stages (read through every `.eigenvalues` it loads;
        # modelled on CMBSciPol/MICMAC micmac/likelihood/pixel.py, `jsp.linalg.sqrtm` in a
        # `try` of a sampler's driver method that prints and jits other functions)
        ((EAGER_BODY, METHOD), []),
        ((EAGER_BODY, METHOD + "\n    def run(self, a):\n        return self.eigenvalues(a)\n"), []),
        # ... handed to jit, called by a jitted method, or a dunder the object's caller runs
        ((EAGER_BODY, METHOD + "\n\nfast = jax.jit(Solver().eigenvalues)\n"), [9]),
        (
            (
                EAGER_BODY,
                METHOD + "\n    @jax.jit\n    def run(self, a):\n        return self.eigenvalues(a)\n",
            ),
            [9],
        ),
        ((EAGER_BODY, METHOD.replace("eigenvalues", "__call__")), [9]),
        # the handler does not catch the lowering error
        (("except NotImplementedError:", "except ValueError:"), [8]),
    ],
)
def test_an_eager_call_is_lowered_inside_its_try(
    check: CheckFn, change: tuple[str, str], lines: list[int]
) -> None:
    source = EAGER.replace(*change) if change[0] else EAGER
    assert change[0] == "" or source != EAGER
    assert [f.span.line for f in check(source, ("tpu",)).findings] == lines
    assert [f.span.line for f in check(source, ("cpu",)).findings] == []


# a local function handed to a checker inside the try; modelled on uwplasma/GKX
# src/gkx/objectives/autodiff_validation.py (`branch_fn` handed to a finite-difference
# report inside `try ... except NotImplementedError`)
HANDED = """\
import jax
import jax.numpy as jnp
import numpy as np


def report(fn, x):
    return jax.jacfwd(fn)(x)


def branch_report(matrix_fn, p):
    def branch_fn(x):
        return jnp.linalg.eigvals(matrix_fn(x))[0].real

    try:
        return np.asarray(report(branch_fn, p))
    except NotImplementedError:
        return None
"""


@pytest.mark.parametrize(
    ("change", "lines"),
    [
        (("", ""), []),
        # nothing shows the function holding the try runs on the host
        (("np.asarray(report(branch_fn, p))", "report(branch_fn, p)"), [12]),
        # transformed and called in place inside the try
        (("report(branch_fn, p)", "jax.grad(branch_fn)(p)"), []),
        # a lambda handed on inside the try
        (
            (
                "    def branch_fn(x):\n        return jnp.linalg.eigvals(matrix_fn(x))[0].real\n\n"
                "    try:\n        return np.asarray(report(branch_fn, p))\n",
                "    try:\n        return np.asarray(report(lambda x: jnp.linalg.eigvals(matrix_fn(x))[0].real, p))\n",
            ),
            [],
        ),
        # also called after the try
        (("        return None\n", "        pass\n    return branch_fn(p)\n"), [12]),
        # jitted inside the try, called after it
        (
            (
                "        return np.asarray(report(branch_fn, p))\n    except NotImplementedError:\n        return None\n",
                "        fast = jax.jit(branch_fn)\n    except NotImplementedError:\n        return None\n"
                "    return fast(p)\n",
            ),
            [12],
        ),
        # the function holding the try is jitted
        (("def branch_report", "@jax.jit\ndef branch_report"), [13]),
    ],
)
def test_a_local_function_used_only_inside_the_try_is_lowered_there(
    check: CheckFn, change: tuple[str, str], lines: list[int]
) -> None:
    source = HANDED.replace(*change) if change[0] else HANDED
    assert change[0] == "" or source != HANDED
    assert [f.span.line for f in check(source, ("tpu",)).findings] == lines


# the try in a local function: read where the enclosing function uses it
NESTED_TRY = """\
import jax
import jax.numpy as jnp
import numpy as np


def spectrum(a):
    def eigenvalues(b):
        try:
            return np.asarray(jnp.linalg.eigvals(b))
        except NotImplementedError:
            return None

    return eigenvalues(a)
"""


@pytest.mark.parametrize(
    ("change", "lines"),
    [
        (("", ""), []),
        # jitted by the function that holds it
        (("    return eigenvalues(a)\n", "    return jax.jit(eigenvalues)(a)\n"), [9]),
        # what the handler names: a bare `except` and a tuple holding it catch; another class does not
        (("except NotImplementedError:", "except:"), []),
        (("except NotImplementedError:", "except (ValueError, NotImplementedError):"), []),
        (("except NotImplementedError:", "except ValueError:"), [9]),
    ],
)
def test_a_try_in_a_local_function_is_read_where_it_is_used(
    check: CheckFn, change: tuple[str, str], lines: list[int]
) -> None:
    source = NESTED_TRY.replace(*change) if change[0] else NESTED_TRY
    assert change[0] == "" or source != NESTED_TRY
    assert [f.span.line for f in check(source, ("tpu",)).findings] == lines
