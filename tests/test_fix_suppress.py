"""The suppression fix: a ``# jaxtarget: ignore[...]`` comment added to, or merged into, the line.

The real engine on a tpu target; the fix's edits applied as an editor would, then checked again.
"""

from __future__ import annotations

import pytest

from jaxtarget.engine import Engine
from jaxtarget.fixes.layout import apply_edits
from jaxtarget.model import Fix

from .conftest import make_engine

HEAD = "import jax.numpy as jnp\n\n"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return make_engine(("tpu",))


def _suppressions(engine: Engine, source: str) -> list[Fix]:
    analysis = engine.check(source)
    assert [f.code for f in analysis.findings] == ["JT003"]
    return [fix for fix in analysis.fixes(analysis.findings[0]) if fix.kind == "suppress"]


def _suppressed(engine: Engine, source: str) -> str:
    (fix,) = _suppressions(engine, source)
    assert fix.title == "Suppress JT003 on this line (# jaxtarget: ignore)"
    fixed = apply_edits(source, fix.edits)
    assert engine.check(fixed).findings == []
    return fixed


@pytest.mark.parametrize(
    ("line", "fixed"),
    [
        ("w = jnp.linalg.eig(a)", "w = jnp.linalg.eig(a)  # jaxtarget: ignore[JT003]"),
        # trailing blanks give way to the comment
        ("w = jnp.linalg.eig(a)   ", "w = jnp.linalg.eig(a)  # jaxtarget: ignore[JT003]"),
        # another tool's comment stays, the ignore goes after it
        (
            "w = jnp.linalg.eig(a)  # noqa: E501",
            "w = jnp.linalg.eig(a)  # noqa: E501  # jaxtarget: ignore[JT003]",
        ),
        # an ignore for other codes is extended, its spacing and the text after it kept
        (
            "w = jnp.linalg.eig(a)  # jaxtarget: ignore[JT001] (gpu only)",
            "w = jnp.linalg.eig(a)  # jaxtarget: ignore[JT001, JT003] (gpu only)",
        ),
        (
            "w = jnp.linalg.eig(a)  #jaxtarget:ignore[ JT001 , JT002 ,]",
            "w = jnp.linalg.eig(a)  #jaxtarget:ignore[JT001, JT002, JT003]",
        ),
    ],
)
def test_the_suppression_comment_goes_on_the_findings_line(engine: Engine, line: str, fixed: str) -> None:
    assert _suppressed(engine, HEAD + line + "\n") == HEAD + fixed + "\n"


@pytest.mark.parametrize(
    "source",
    [
        # the line goes on after a backslash: a comment would end it
        HEAD + "w = jnp.linalg.eig(a) + \\\n    1\n",
        # the line ends inside a string that goes on: a comment there would be text
        HEAD + 'w, doc = jnp.linalg.eig(a), """\nabout eig\n"""\n',
        HEAD + 'w, doc = jnp.linalg.eig(a), """\n"""\n',
    ],
    ids=["backslash", "open-string", "string-closed-on-the-next-line"],
)
def test_no_suppression_where_no_comment_can_end_the_line(engine: Engine, source: str) -> None:
    assert _suppressions(engine, source) == []
