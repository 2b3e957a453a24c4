"""Newer grammar than the running Python is analysed, and syntax errors point at their real column.

PEP 695 type parameters and ``type`` aliases (Python 3.12+) and PEP 696 defaults
(3.13+) appear in real JAX code (dg227/NLSA's ``nlsa/jax/koopman/_koopman.py`` spreads its
type parameter lists over lines: ``def make_generator_builder[\n    Data: PyTree, ...\n](``),
and so do PEP 701 f-strings (Python 3.12: givani30/BellmanFilterDFSV's
``scripts/simulation_study.py`` nests ``metrics["bf_time"]`` in ``f"..."``); a checker running on 3.10 or 3.11 must still
find the calls in such files, at their own columns.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from jaxtarget.semantics.grammar import newer_fstrings, older_grammar
from jaxtarget.semantics.source import ChunkCache, parse_recovering

from .conftest import CheckFn, make_engine, run_cli

MODERN = """\
import jax
from jax import lax

type Pair[T] = tuple[T, T]
type Plain = int


def send[T](x: T, n: int = 1) -> T:
    return lax.psend(x, "i", [(0, 1)])


class Box[T = int](object):
    def go(self, x):
        return jax.numpy.linalg.eig(x)


async def later[**P, *Ts](x):
    return lax.pbroadcast(x, "i", 0)


def root[
    X: jax.Array,
    D: jax.typing.DTypeLike,  # a comment [with a bracket] inside the list
](x: X) -> X:
    return jax.scipy.linalg.sqrtm(x)


def report(d):
    print(f"{d["name"]}: {f"{d["count"]:>4}"} {'\\n'.join(d["rows"])}")
    return jax.numpy.roots(d["p"])
"""


def _position(source: str, needle: str) -> tuple[int, int]:
    for i, line in enumerate(source.splitlines(), 1):
        if needle in line:
            return i, line.index(needle)
    raise AssertionError(needle)


def test_rewrite_keeps_every_position() -> None:
    rewritten = newer_fstrings(older_grammar(MODERN) or MODERN)
    assert rewritten is not None and len(rewritten) == len(MODERN)
    assert [len(a) for a in rewritten.splitlines()] == [len(b) for b in MODERN.splitlines()]
    compile(rewritten, "modern.py", "exec")  # parses on every supported Python


@pytest.mark.parametrize("target", ["cpu", "tpu"])
def test_modern_module_is_analysed(check: CheckFn, target: str) -> None:
    found = {(f.code, f.span.line, f.span.col) for f in check(MODERN, (target,)).findings}
    psend = ("JT001", *_position(MODERN, "psend"))
    pbroadcast = ("JT001", *_position(MODERN, "pbroadcast"))
    eig = ("JT003", *_position(MODERN, "eig"))
    sqrtm = ("JT003", *_position(MODERN, "sqrtm"))
    roots = ("JT003", *_position(MODERN, "roots"))
    assert {psend, pbroadcast} <= found
    assert (eig in found) == (target == "tpu")
    assert (sqrtm in found) == (target == "tpu")
    assert (roots in found) == (target == "tpu")


def test_modern_module_in_the_language_server_reads_the_same() -> None:
    """The language server parses one top-level statement at a time: a type parameter list
    whose closing bracket starts a line (``](x: X) -> X:``) belongs to its ``def``."""
    engine = make_engine(("tpu",))
    whole = [(f.code, f.span) for f in engine.check(MODERN, "modern.py").findings]
    sparse = [
        (f.code, f.span) for f in engine.check(MODERN, "modern.py", sparse=True, cache=ChunkCache()).findings
    ]
    assert sparse == whole and ("JT003", _position(MODERN, "sqrtm")[0]) in {(c, s.line) for c, s in whole}


def test_modern_module_in_the_cli_has_no_syntax_error(tmp_path: Path) -> None:
    (tmp_path / "modern.py").write_text(MODERN)
    out = run_cli("check", "modern.py", "--target", "cpu", "--format", "json", cwd=tmp_path)
    items = json.loads(out.stdout)
    assert "Traceback" not in out.stderr
    assert {i["code"] for i in items} == {"JT001", "JT002"}, items


@pytest.mark.parametrize(
    "source",
    ["def f(:\n", "import jax\nx = (1,\ny = 2 +* 3\n", "x = 1\n    y = 2\n", "print('a' 'b' c)\n"],
)
def test_syntax_error_column_is_pythons(source: str) -> None:
    try:
        compile(source, "bad.py", "exec")
    except SyntaxError as exc:
        expected = (exc.lineno, exc.offset)
    else:
        raise AssertionError("the source compiles")
    _, error, line, col = parse_recovering(source)
    assert error is not None and (line, col) == expected


def test_syntax_error_column_in_every_format(tmp_path: Path) -> None:
    (tmp_path / "bad.py").write_text("import jax\n\nvalue = [1, 2\nother = 3\n")
    try:
        compile((tmp_path / "bad.py").read_text(), "bad.py", "exec")
    except SyntaxError as exc:
        line, col = exc.lineno, exc.offset
    text = run_cli("check", "bad.py", cwd=tmp_path).stdout
    assert f"bad.py:{line}:{col}: SyntaxError" in text
    items = json.loads(run_cli("check", "bad.py", "--format", "json", cwd=tmp_path).stdout)
    assert items[0]["location"] == {"row": line, "column": col}
    github = run_cli("check", "bad.py", "--format", "github", cwd=tmp_path).stdout
    assert f"line={line},col={col}::" in github
    sarif = json.loads(run_cli("check", "bad.py", "--format", "sarif", cwd=tmp_path).stdout)
    regions = [
        loc["physicalLocation"]["region"]
        for run in sarif["runs"]
        for item in [
            *run.get("results", []),
            *run.get("invocations", [{}])[0].get("toolExecutionNotifications", []),
        ]
        for loc in item.get("locations", [])
    ]
    assert {"startLine": line, "startColumn": col} in regions, sarif


def test_running_python_is_what_the_rewrite_is_for() -> None:
    # on 3.12+ the module parses as it is; below, only the rewrite makes it parse
    try:
        compile(MODERN, "modern.py", "exec")
        native = True
    except SyntaxError:
        native = False
    assert native == (sys.version_info >= (3, 13))


def test_a_leading_byte_order_mark_is_no_syntax_error(check: CheckFn) -> None:
    source = '\ufeffimport jax\nfrom jax import lax\ny = lax.psend(x, "i", [(0, 1)])\n'
    analysis = check(source, ("cpu",))
    assert analysis.syntax_error is None
    assert [(f.code, f.span.line, f.span.col) for f in analysis.findings] == [
        ("JT001", 3, 8),
        ("JT002", 3, 8),
    ]
