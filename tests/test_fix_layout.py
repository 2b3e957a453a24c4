"""Where the guard fix puts the ``has_gpu_backend`` helper, and how it indents (fixes/layout.py).

The real engine on a cpu target checks a module with an unguarded ``lax.psend``; its
guard fix is applied as an editor would, and the whole fixed text compared. Read here:
the helper goes after the import block (a docstring, imports and ``try`` imports), or
first in a module whose first statement is code, followed by two blank lines counting
those already there; the guard indents by the file's own step (two spaces, tabs, or four
where the first block is indented more than eight); a file without a final newline
keeps none; a multi-line string's text is kept. Modelled on the layouts of real JAX modules (a docstring then imports,
jax-ml/jax ``jax/experimental/*``; an optional import in ``try``, google/flax
``flax/core/*``; two-space indentation, google-deepmind/optax). The code is written for
this suite.
"""

from __future__ import annotations

import pytest

from jaxtarget.engine import Engine
from jaxtarget.fixes.layout import apply_edits

from .conftest import make_engine

HELPER = (
    "def has_gpu_backend() -> bool:\n"
    '{u}"""True when JAX runs on a GPU backend (cuda or rocm)."""\n'
    '{u}return jax.default_backend() in ("gpu", "cuda", "rocm")\n'
)
CALL = 'lax.psend(x, "i", [(0, 1)])'
RAISE = 'raise NotImplementedError("lax.psend requires a GPU backend (cuda or rocm)")'


@pytest.fixture(scope="module")
def engine() -> Engine:
    return make_engine(("cpu",))


def _guarded(engine: Engine, source: str) -> str:
    analysis = engine.check(source, "/project/pkg/mod.py")
    (finding,) = [f for f in analysis.findings if f.code == "JT001"]
    (fix,) = [f for f in analysis.fixes(finding) if f.kind == "guard"]
    return apply_edits(source, fix.edits)


def _helper_then(head: str, unit: str, rest: str) -> str:
    """``head``, the helper indented by ``unit``, then ``rest``."""
    return head + HELPER.format(u=unit) + rest


def _guard(indent: str, step: str, statement: str = f"return {CALL}", end: str = "\n") -> str:
    """The guard the fix writes around ``statement`` at ``indent``, stepping in by ``step``."""
    inner = indent + step
    return f"{indent}if has_gpu_backend():\n{inner}{statement}\n{indent}else:\n{inner}{RAISE}{end}"


IMPORTED = "from jax import lax\nimport jax\n\n\n"
STRING = f'y = {CALL}, """\ntext\n"""'

CASES = {
    # a docstring and an import, no blank line after them, no final newline
    "docstring-no-final-newline": (
        f'"""Doc."""\nfrom jax import lax\ndef f(x):\n    return {CALL}',
        _helper_then('"""Doc."""\n' + IMPORTED, "    ", "\n\ndef f(x):\n" + _guard("    ", "    ", end="")),
    ),
    # one blank line after the imports: one more; the guard steps in by four from column 12
    "wide-indent": (
        f"from jax import lax\n\ndef f(x):\n            return {CALL}\n",
        _helper_then(IMPORTED, "    ", "\n\ndef f(x):\n" + _guard(" " * 12, "    ")),
    ),
    # a `try` import block, then three blank lines: none added; tabs in the function
    "try-import-tabs": (
        f"try:\n    from jax import lax\nexcept ImportError:\n    lax = None\n\n\n\ndef f(x):\n\treturn {CALL}\n",
        _helper_then(
            "try:\n    from jax import lax\nexcept ImportError:\n    lax = None\nimport jax\n\n\n",
            "    ",
            "\n\n\ndef f(x):\n" + _guard("\t", "\t"),
        ),
    ),
    # code first: the import and the helper go first, two-space steps as in the file
    "code-first-two-spaces": (
        f"X = 1\nfrom jax import lax\n\n\ndef f(x):\n  return {CALL}\n",
        _helper_then(
            "import jax\n\n\n", "  ", "\n\nX = 1\nfrom jax import lax\n\n\ndef f(x):\n" + _guard("  ", "  ")
        ),
    ),
    # multi-line strings (a docstring, one in the guarded statement, one after): their
    # text is kept, and only the guarded statement moves in
    "multi-line-strings": (
        f'"""Doc.\n\nMore.\n"""\nfrom jax import lax\n\n\ndef f(x):\n    {STRING}\n    doc = """\nmore\n"""\n    return y, doc\n',
        _helper_then(
            '"""Doc.\n\nMore.\n"""\n' + IMPORTED,
            "    ",
            "\n\ndef f(x):\n"
            + _guard("    ", "    ", STRING)
            + '    doc = """\nmore\n"""\n    return y, doc\n',
        ),
    ),
    # the guarded statement ends its function, inside a string: the closing line stays put
    "string-ends-the-function": (
        f'from jax import lax\n\n\ndef f(x):\n    return {CALL}, """\ntext\n"""\n',
        _helper_then(
            IMPORTED, "    ", "\n\ndef f(x):\n" + _guard("    ", "    ", f'return {CALL}, """\ntext\n"""')
        ),
    ),
}


@pytest.mark.parametrize("case", CASES)
def test_the_guard_fix_places_the_helper_and_indents_as_the_file_does(engine: Engine, case: str) -> None:
    source, fixed = CASES[case]
    assert _guarded(engine, source) == fixed
    compile(fixed, "mod.py", "exec")
