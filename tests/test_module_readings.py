"""What the semantic model of one module answers (semantics/module.py) beyond its findings.

Read here: the reference under a cursor (hover and code actions ask for it) is the one
whose span holds that line and column, and no other; the names resolved for the guards
(``jax.default_backend``) are no references; in a module of a ``jax`` package (read from the
``__init__.py`` files above it), a call of a function the module defines is a use of the API
of that name, and a parameter of the same name is not. Real jedi in the test interpreter,
the real engine. The code is written for this suite.
"""

from __future__ import annotations

from pathlib import Path

from .conftest import CheckFn, found_lines, marked_lines

SOURCE = """\
import jax
from jax import lax


def f(x):
    y = x + 1
    if jax.default_backend() == "cpu":
        return y
    return lax.psend(y, "i", [(0, 1)])
"""


def test_the_reference_under_the_cursor_is_the_one_whose_span_holds_it(check: CheckFn) -> None:
    analysis = check(SOURCE, ("cpu",))
    assert analysis.module is not None
    (ref,) = analysis.module.references
    span = ref.span
    assert SOURCE.splitlines()[span.line - 1].strip().startswith("return lax.psend")
    for col in (span.col, span.end_col):
        assert analysis.reference_at(span.line, col) is ref
    # the line above, at the same columns (`y = x + 1` is as long), and either side of the span
    assert analysis.reference_at(span.line - 1, span.col) is None
    assert analysis.reference_at(span.line, span.col - 1) is None
    assert analysis.reference_at(span.line, span.end_col + 1) is None
    # a backend query the guards read is resolved too, but it is no use of an API
    at = SOURCE.splitlines()[6].index("jax.default_backend") + 1
    assert analysis.reference_at(7, at) is None


#: a module of jax itself (modelled on jax-ml/jax jax/experimental/sparse/linalg.py, whose
#: gradient and transpose rules call the module's own ``spsolve``)
OWN_MODULE = """\
from jax._src import core


def spsolve(data, indices, indptr, b, tol=1e-6, reorder=1):
    return core.Primitive("spsolve").bind(data, indices, indptr, b)


def _spsolve_jvp(primals, tangents):
    data, indices, indptr, b = primals
    x = spsolve(data, indices, indptr, b)  # found on tpu
    return x, x


def _solve_other(spsolve, b):
    return spsolve(b)  # a parameter of the same name: not the API
"""


def test_a_module_of_jax_that_defines_an_api_uses_it_where_it_calls_it(
    check: CheckFn, tmp_path: Path
) -> None:
    folder = tmp_path / "jax" / "experimental" / "sparse"
    folder.mkdir(parents=True)
    for package in (folder, folder.parent, folder.parent.parent):
        (package / "__init__.py").write_text("")
    path = folder / "linalg.py"
    path.write_text(OWN_MODULE)
    assert found_lines(check, OWN_MODULE, "tpu", str(path)) == marked_lines(OWN_MODULE, "tpu") == [10]
    assert found_lines(check, OWN_MODULE, "cpu", str(path)) == []
    # a name the module neither defines nor imports is nothing the module holds
    undefined = OWN_MODULE.replace("def spsolve(", "def _spsolve_impl(")
    assert found_lines(check, undefined, "tpu", str(path)) == []
    # the same text outside a package named jax defines a function of its own name
    (tmp_path / "jax" / "__init__.py").unlink()
    assert found_lines(check, OWN_MODULE, "tpu", str(path)) == []
