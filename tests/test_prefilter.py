"""The CLI's text prefilter: a module that spells no reported API's name is not parsed into a tree,
and still gets ast.parse's verdict on its syntax."""

from __future__ import annotations

import pytest

from jaxtarget import engine as engine_module
from jaxtarget.syntax import spells_any

from .conftest import make_engine

PLAIN = "import numpy as np\n\n\ndef f(x):\n    return np.sqrt(x) @ x.T\n"


def test_a_module_without_an_api_name_is_not_parsed(monkeypatch: pytest.MonkeyPatch) -> None:
    engine = make_engine()
    assert not engine.may_use(PLAIN)

    def refuse(source: str) -> object:
        raise AssertionError("parsed")

    monkeypatch.setattr(engine_module, "parse_recovering", refuse)
    analysis = engine.check(PLAIN, "plain.py")
    assert analysis.findings == [] and analysis.module is None and analysis.syntax_error is None


@pytest.mark.parametrize(
    ("source", "error"),
    [
        ("def f(:\n", "SyntaxError: invalid syntax"),
        # the symbol table rejects these; ast.parse accepts them, and its verdict is the one given
        ("nonlocal x\n", None),
        ("def f(a, a):\n    pass\n", None),
        # newer grammar than the running Python
        ("type Pair = tuple[int, int]\n", None),
    ],
)
def test_the_syntax_verdict_is_ast_parses(source: str, error: str | None) -> None:
    engine = make_engine()
    assert not engine.may_use(source)
    assert engine.check(source, "m.py").syntax_error == error


def test_names_are_matched_as_whole_identifiers() -> None:
    assert spells_any("from jax import lax\nlax.psend(x)\n", ("psend",))
    assert spells_any("from jax.lax import psend as ps\n", ("zz", "psend"))
    assert not spells_any("y = np.sqrt(x)\n", ("qr",))
    assert not spells_any("my_psend_helper(x)\n", ("psend",))
    assert spells_any("psend", ("psend",))
