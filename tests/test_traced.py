"""A kernel that is built and only traced to a jaxpr never lowers.

Modelled on nicholasjng/palladium tests/test_01_trace.py (`f = pl.pallas_call(...)`, then
the project's `trace(f, x)`, which runs `jax.make_jaxpr(f)(*args)` to read the kernel) and
on jax's own Pallas tests that print `jax.make_jaxpr(pl.pallas_call(...))`. Real jedi, real
files for the project module.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import CheckFn

LOCAL = """\
import jax
from jax.experimental import pallas as pl


def trace(fn, *args):
    return jax.make_jaxpr(fn)(*args)


def lower(fn, *args):
    return jax.jit(fn).lower(*args)


def test_direct(k, x):
    return jax.make_jaxpr(pl.pallas_call(k, out_shape=x))(x)


def test_stored(k, x):
    f = pl.pallas_call(k, out_shape=x)
    return jax.eval_shape(f, x)


def test_helper(k, x):
    f = pl.pallas_call(k, out_shape=x)
    return trace(f, x)


def test_helper_inline(k, x):
    return trace(pl.pallas_call(k, out_shape=x), x)


def test_also_run(k, x):
    f = pl.pallas_call(k, out_shape=x)
    trace(f, x)
    return f(x)


def test_lowered(k, x):
    return lower(pl.pallas_call(k, out_shape=x), x)


def test_called(k, x):
    return pl.pallas_call(k, out_shape=x)(x)
"""


def test_a_kernel_only_traced_is_no_finding(check: CheckFn) -> None:
    """Traced by make_jaxpr/eval_shape, directly, through a local name or a helper that only
    traces (14-28): nothing; run too (32), handed to a helper that lowers (38), or called (42):
    reported."""
    found = check(LOCAL, ("cpu",), "tests/test_trace.py").findings
    assert [f.span.line for f in found] == [32, 38, 42]


TRACE_MODULE = """\
import jax


def trace(pallas_fn, *example_args):
    closed = jax.make_jaxpr(pallas_fn)(*example_args)
    return [e for e in closed.jaxpr.eqns if e.primitive.name == "pallas_call"]
"""

#: a statement of the helper's module being written (the module does not parse as it is)
UNFINISHED = """

def run_all(kernels, *args)
    return [k(*args) for k in kernels]


class Registry:
    def add(self, k):
        self.kernels.append(k) +
"""

USER = """\
import jax
from jax.experimental import pallas as pl

from mykernels import trace


def test_spec(k, x):
    f = pl.pallas_call(k, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))
    return trace(f, x)
"""


@pytest.mark.parametrize(
    ("init", "module", "lines"),
    [
        ("from mykernels.tracing import trace\n", TRACE_MODULE, []),  # re-exported by the package
        ("from .tracing import trace\n", TRACE_MODULE, []),
        ("def trace(fn, *args):\n    return fn(*args)\n", "", [8]),  # runs it
        ("from .missing import trace\n", "", [8]),  # re-exported from a module the project lacks
        ("from mykernels.tracing import trace\n", TRACE_MODULE.replace("jax.make_jaxpr", "jax.jit"), [8]),
        # the helper and the imports are read, not the statements around them (mid-edit here)
        ("from mykernels.tracing import trace\n", TRACE_MODULE + UNFINISHED, []),
        ("from mykernels.tracing import trace\n", UNFINISHED + TRACE_MODULE, []),
    ],
)
def test_a_project_helper_that_only_traces(
    check: CheckFn, tmp_path: Path, init: str, module: str, lines: list[int]
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "mykernels").mkdir()
    (tmp_path / "mykernels" / "__init__.py").write_text(init)
    if module:
        (tmp_path / "mykernels" / "tracing.py").write_text(module)
    (tmp_path / "tests").mkdir()
    test = tmp_path / "tests" / "test_spec.py"
    test.write_text(USER)
    assert [f.span.line for f in check(USER, ("cpu",), str(test)).findings] == lines


USER_SPELLED = """\
import jax
from jax.experimental import pallas as pl

{imports}


def test_spec(k, x):
    f = pl.pallas_call(k, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))
    return {call}(f, x)
"""


NESTED_SPELLED = """\
import jax
from jax.experimental import pallas as pl

import mykernels


def test_multiple_calls_rejected(k, x):
    def two_calls(a):
        y = pl.pallas_call(k, out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype))(a)
        return pl.pallas_call(k, out_shape=jax.ShapeDtypeStruct(a.shape, a.dtype))(y)

    return mykernels.{helper}(two_calls, x)
"""


@pytest.mark.parametrize(("helper", "lines"), [("trace", []), ("run", [9, 10])])
def test_a_local_function_handed_to_a_project_tracer(
    check: CheckFn, tmp_path: Path, helper: str, lines: list[int]
) -> None:
    """Modelled on palladium tests/test_16_diagnostics.py (`def two_calls(x): ...` calling
    `pl.pallas_call` twice, then `palladium.trace(two_calls, ...)`): the kernels are only
    traced; handed to a helper that runs them, they are lowered."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "mykernels").mkdir()
    (tmp_path / "mykernels" / "__init__.py").write_text(
        "from .tracing import trace\n\n\ndef run(fn, *args):\n    return fn(*args)\n"
    )
    (tmp_path / "mykernels" / "tracing.py").write_text(TRACE_MODULE)
    (tmp_path / "tests").mkdir()
    text = NESTED_SPELLED.format(helper=helper)
    test = tmp_path / "tests" / "test_spec.py"
    test.write_text(text)
    assert [f.span.line for f in check(text, ("cpu",), str(test)).findings] == lines


@pytest.mark.parametrize(
    ("imports", "call", "module", "lines"),
    [
        ("import mykernels", "mykernels.trace", TRACE_MODULE, []),  # palladium's `palladium.trace(f, ...)`
        ("import mykernels.tracing as tr", "tr.trace", TRACE_MODULE, []),
        ("import mykernels.tracing", "mykernels.tracing.trace", TRACE_MODULE, []),
        ("from mykernels import tracing", "tracing.trace", TRACE_MODULE, []),
        ("import mykernels", "mykernels.trace", TRACE_MODULE.replace("jax.make_jaxpr", "jax.jit"), [8]),
        ("import mykernels\nmykernels = object()", "mykernels.trace", TRACE_MODULE, [9]),  # rebound
        ("import numpy as mykernels", "mykernels.trace", TRACE_MODULE, [8]),  # not the project's
    ],
)
def test_a_project_helper_that_only_traces_called_through_its_module(
    check: CheckFn, tmp_path: Path, imports: str, call: str, module: str, lines: list[int]
) -> None:
    """Modelled on nicholasjng/palladium tests/test_12_matmul.py (`import palladium`, then
    `palladium.trace(pl.pallas_call(...), ...)`): the module's function is read from its file."""
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "mykernels").mkdir()
    (tmp_path / "mykernels" / "__init__.py").write_text("from .tracing import trace\n")
    (tmp_path / "mykernels" / "tracing.py").write_text(module)
    (tmp_path / "tests").mkdir()
    text = USER_SPELLED.format(imports=imports, call=call)
    test = tmp_path / "tests" / "test_spec.py"
    test.write_text(text)
    assert [f.span.line for f in check(text, ("cpu",), str(test)).findings] == lines


NESTED = """\
import jax
from jax.experimental import pallas as pl


def trace(fn, *args):
    return jax.make_jaxpr(fn)(*args)


def test_two_calls_traced(k, x):
    f = pl.pallas_call(k, out_shape=x)

    def two_calls(a, b):
        return f(a, b) + f(b, a)

    return trace(two_calls, x, x)


def test_two_calls_traced_by_keyword(k, x):
    f = pl.pallas_call(k, out_shape=x)

    def body(a):
        return f(a)

    return jax.eval_shape(fun=body, x=x)


def test_two_calls_run(k, x):
    f = pl.pallas_call(k, out_shape=x)

    def two_calls(a, b):
        return f(a, b) + f(b, a)

    trace(two_calls, x, x)
    return two_calls(x, x)


def test_two_calls_jitted(k, x):
    f = pl.pallas_call(k, out_shape=x)

    def body(a):
        return f(a)

    return jax.jit(body)(x)
"""


def test_a_kernel_called_only_in_a_local_function_that_is_traced(check: CheckFn) -> None:
    """Modelled on palladium tests/test_01_trace.py (`f = pl.pallas_call(...)`, a nested
    `two_calls` calling `f`, handed to the project's `trace`): only traced, nothing (10);
    the local function also called (28), jitted (38), or handed by keyword (19, the reading
    takes a function by position): reported."""
    found = check(NESTED, ("cpu",), "tests/test_trace.py").findings
    assert [f.span.line for f in found] == [19, 28, 38]


TRACE_METHOD = """\
import jax
from jax.experimental import pallas as pl


def compile_with(fn):
    return fn


def test_lambda_traced(k, x):
    return jax.jit(lambda a: pl.pallas_call(k, out_shape=a)(a)).trace(x).jaxpr


def test_lambda_traced_then_lowered(k, x):
    return jax.jit(lambda a: pl.pallas_call(k, out_shape=a)(a)).trace(x).lower()


def test_lambda_handed_to_a_function_that_is_not_a_transform(k, x):
    return compile_with(lambda a: pl.pallas_call(k, out_shape=a)(a)).trace(x)


def test_kernel_jitted_and_traced(k, x):
    return jax.jit(pl.pallas_call(k, out_shape=x)).trace(x)


def test_kernel_stored_jitted_and_traced(k, x):
    f = pl.pallas_call(k, out_shape=x)
    return jax.jit(f).trace(x)


def test_kernel_stored_jitted_traced_and_lowered(k, x):
    f = pl.pallas_call(k, out_shape=x)
    return jax.jit(f).trace(x).lower()


def test_lambda_called_in_a_traced_function(k, x):
    def body(a):
        g = lambda b: pl.pallas_call(k, out_shape=b)(b)
        return g(a)

    return jax.make_jaxpr(body)(x)


def test_function_called_in_a_traced_function(k, x):
    def body(a):
        def inner(b):
            return pl.pallas_call(k, out_shape=b)(b)

        return inner(a)

    return jax.eval_shape(body, x)


def test_function_called_in_a_jitted_function(k, x):
    def body(a):
        def inner(b):
            return pl.pallas_call(k, out_shape=b)(b)

        return inner(a)

    return jax.jit(body)(x)
"""


def test_traced_with_the_trace_method_or_inside_a_traced_function(check: CheckFn) -> None:
    """Modelled on jax's AOT API (``jax.jit(f).trace(x)`` gives a Traced whose ``.jaxpr`` is
    read, ``.lower()`` lowers it; jax-ml/jax tests/api_test.py) and on palladium's nested
    helpers: a lambda or kernel jitted and only ``.trace``d (10, 22, 26), or called in a local
    function that is itself only traced (37, 46): nothing; traced then lowered (14, 31),
    handed to a function that is not a transform (18), or in a function that is jitted (56):
    reported."""
    found = check(TRACE_METHOD, ("cpu",), "tests/test_trace.py").findings
    assert [f.span.line for f in found] == [14, 18, 31, 56]
