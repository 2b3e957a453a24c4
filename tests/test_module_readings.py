"""What the semantic model of one module answers (semantics/module.py) beyond its findings.

Read here: the reference under a cursor (hover and code actions ask for it) is the one
whose span holds that line and column, and no other; the names resolved for the guards
(``jax.default_backend``) are no references. Real jedi in the test interpreter,
the real engine. The code is written for this suite.
"""

from __future__ import annotations

from .conftest import CheckFn

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
