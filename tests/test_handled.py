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
        # a plain call may be traced by an outer jit and lowered after the try is left
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
