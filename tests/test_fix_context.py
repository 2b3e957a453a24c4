"""Quick fixes built from the analysis the language server holds equal those built from a full parse.

The server's analysis parses only the statements that matter (a sparse view); its fixes
parse only what they read (imports, the statements binding the names they add, the
statement they change). These tests compare every fix, edit by edit, with the fixes of a
whole-module analysis of the same text, on real files and on generated ones.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jaxtarget.engine import Analysis, Engine
from jaxtarget.model import Fix
from jaxtarget.semantics.source import ChunkCache

from .conftest import ROOT, make_engine

FILES = sorted([*(ROOT / "tests" / "idioms").glob("case_*.py"), *(ROOT / "examples").glob("*.py")])


@pytest.fixture(scope="module")
def engine() -> Engine:
    return make_engine(("cpu", "tpu"))


def _fixes(analysis: Analysis) -> list[list[Fix]]:
    return [analysis.fixes(f) for f in analysis.findings]


def _compare(engine: Engine, source: str, path: str) -> tuple[int, int]:
    """(findings, fixes) of ``source``, after checking both analyses agree on each."""
    whole = engine.check(source, path)
    sparse = engine.check(source, path, sparse=True, cache=ChunkCache())
    assert [f.span for f in sparse.findings] == [f.span for f in whole.findings]
    got, want = _fixes(sparse), _fixes(whole)
    assert got == want
    return len(whole.findings), sum(len(f) for f in want)


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.name)
def test_fixes_from_the_held_analysis_equal_a_full_parse(engine: Engine, path: Path) -> None:
    source = path.read_text()
    findings, fixes = _compare(engine, source, f"tests/{path.name}")
    # every finding here has at least its suppression fix
    assert fixes >= findings


_HEAD = [
    '"""A module."""\n',
    "import jax\n",
    "import pytest\n",
    "from jax import lax\n",
    "import jax.numpy as jnp\n",
    "try:\n    import numpy as np\nexcept ImportError:\n    np = None\n",
    "X = 1\n",
    "def has_gpu_backend():\n    return jax.default_backend() == 'gpu'\n",
]
_BODY = [
    "def f(x):\n    return lax.psend(x, 'i', [(0, 1)])\n",
    "def test_eig(a):\n    w, v = jnp.linalg.eig(a)\n    assert w.shape\n",
    "def g(a):\n    s = '''\n    text\n    '''\n    return jnp.linalg.eig(a)  # noqa: E501\n",
    "y = jnp.linalg.eig(jnp.eye(3))\n",
    "class T:\n    def test_m(self, a):\n        return jnp.linalg.eig(a)\n",
    "def h(a):\n    return a\n",
]


@settings(max_examples=60, deadline=None)
@given(
    head=st.lists(st.sampled_from(_HEAD), max_size=5),
    body=st.lists(st.sampled_from(_BODY), min_size=1, max_size=6),
    tail=st.lists(st.sampled_from(_HEAD), max_size=2),
)
def test_generated_modules(engine: Engine, head: list[str], body: list[str], tail: list[str]) -> None:
    source = "\n\n".join(["import jax.numpy as jnp\nfrom jax import lax", *head, *body, *tail]) + "\n"
    try:
        compile(source, "m.py", "exec")
    except SyntaxError:
        return
    _compare(engine, source, "tests/test_m.py")
