"""`check --fix` on generated files, and the files it refuses to write.

The CLI's `main` runs in this process (on real files) so that hypothesis can try many
modules; `tests/test_fix.py` runs the same paths as a subprocess.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import jaxtarget.rules.base as rules_base
from jaxtarget.cli import main
from jaxtarget.fixes.layout import FixContext
from jaxtarget.model import Edit, Fix
from jaxtarget.rules.base import Violation

# ---------------------------------------------------------------- generated modules

HEADERS = st.sampled_from(
    [
        "",
        '"""A module."""\n',
        '"""A module\nover two lines."""\nfrom __future__ import annotations\n',
        "# -*- coding: utf-8 -*-\n",
    ]
)
IMPORTS = (
    "from functools import partial\n",
    "import jax\n",
    "import jax.numpy as jnp\n",
    "from jax import lax\n",
    "import jax.lax as L\n",
    "from jax.sharding import PartitionSpec as P\n",
)

#: one statement, as lines relative to the body's indentation ("\t" stands for one indent step)
SIMPLE: tuple[tuple[str, ...], ...] = (
    ("w, _ = jnp.linalg.eig(a)",),
    ("return jnp.linalg.eig(a)[0]",),
    ("y = L.psend(x, 'i', perm)",),
    ("lax.psend(x, 'i', perm)",),
    (
        "token = lax.psend(x, 'i', perm)",
        "y = lax.precv(token, jax.ShapeDtypeStruct(x.shape, x.dtype), 'i', perm)",
    ),
    ("v = jnp.linalg.eigvals(", "\ta,", ")"),
    ("# a comment about jnp.linalg.eig",),
    ('doc = """jnp.linalg.eig(a)', "  inside a string", '"""'),
    ("z = 1  # trailing comment",),
    ("pass",),
    ("",),
)
COMPOUND = ("if flag:", "for i in range(3):", "with ctx:", "while cond:")


def _statement(depth: int) -> st.SearchStrategy[list[str]]:
    simple = st.sampled_from(SIMPLE).map(list)
    if depth >= 2:
        return simple

    def nest(head: str, body: list[list[str]]) -> list[str]:
        lines = [head]
        for stmt in body:
            lines.extend("\t" + line if line else line for line in stmt)
        if not any(line.strip() and not line.strip().startswith("#") for line in lines[1:]):
            lines.append("\tpass")
        return lines

    compound = st.builds(
        nest, st.sampled_from(COMPOUND), st.lists(_statement(depth + 1), min_size=1, max_size=3)
    )
    return st.one_of(simple, simple, compound)


def _function(name: str, body: list[list[str]], sharded: bool) -> list[str]:
    lines = ['@partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))'] if sharded else []
    lines.append(f"def {name}(x, a, perm, flag, cond, ctx):")
    for stmt in body:
        lines.extend("\t" + line if line else line for line in stmt)
    lines.append("\treturn x")
    return lines


@st.composite
def modules(draw: st.DrawFn) -> tuple[str, str, str]:
    """(source, newline, indent unit) of a module mixing fixable calls with other code."""
    newline = draw(st.sampled_from(["\n", "\r\n"]))
    unit = draw(st.sampled_from(["    ", "  ", "\t"]))
    parts = [draw(HEADERS)]
    # `import jax` may be missing: the guard then adds it
    optional = ("import jax\n", "import jax.lax as L\n")
    parts += [imp for imp in IMPORTS if imp not in optional or draw(st.booleans())]
    lines: list[str] = []
    for i in range(draw(st.integers(1, 3))):
        body = draw(st.lists(_statement(0), min_size=1, max_size=4))
        lines += ["", "", *_function(f"f{i}", body, draw(st.booleans()))]
    if draw(st.booleans()):
        lines += ["", "w = jnp.linalg.eig(A)"]
    # "\t" marks indent steps; the module's own unit replaces them
    body = "\n".join(re.sub(r"^\t+", lambda m: unit * len(m.group(0)), line) for line in lines) + "\n"
    source = "".join(parts) + body
    return source.replace("\n", newline), newline, unit


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["check", *args])
    return code, capsys.readouterr().out


def _indents(text: str) -> set[str]:
    """The leading whitespace of every line outside brackets and strings that starts a statement."""
    return {
        m.group(1) for m in re.finditer(r"^([ \t]+)(?:if|else|raise|return|w|y|lax|L|token)\b", text, re.M)
    }


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    module=modules(),
    targets=st.sampled_from(["cpu", "tpu", "cpu,tpu"]),
    unsafe=st.booleans(),
    bom=st.booleans(),
)
def test_fixed_files_compile_keep_their_layout_and_a_second_fix_changes_nothing(
    tmp_path_factory: pytest.TempPathFactory,
    capsys: pytest.CaptureFixture[str],
    module: tuple[str, str, str],
    targets: str,
    unsafe: bool,
    bom: bool,
) -> None:
    source, newline, unit = module
    folder = tmp_path_factory.mktemp("gen")
    path = folder / "gen.py"
    mark = b"\xef\xbb\xbf" if bom else b""
    path.write_bytes(mark + source.encode())
    compile(source, "gen.py", "exec", dont_inherit=True)  # the generator makes valid modules
    flags = ["--target", targets, "--fix", *(["--unsafe-fixes"] if unsafe else [])]
    _run(capsys, str(path), *flags)
    fixed = path.read_bytes()
    compile(fixed, "gen.py", "exec", dont_inherit=True)
    assert fixed.startswith(mark) and not fixed[len(mark) :].startswith(b"\xef\xbb\xbf")
    text = fixed[len(mark) :].decode()
    # line endings and the indentation unit are the module's own
    if newline == "\r\n":
        assert text.count("\n") == text.count("\r\n")
    else:
        assert "\r" not in text
    assert all(set(indent) <= set(unit) for indent in _indents(text)), _indents(text)
    # nothing fixable is left: a second run changes no byte and --diff has nothing to show
    _, out = _run(capsys, str(path), "--format", "json", *flags)
    assert path.read_bytes() == fixed
    assert all(item["fix"] is None for item in json.loads(out)), out
    assert _run(capsys, str(path), "--target", targets, "--diff", *flags[3:])[0] == 0


# ---------------------------------------------------------------- refused results

EIG = "import jax.numpy as jnp\n\nA = 'café'\nw = jnp.linalg.eig(A)\n"


def _replacing_line(text: str) -> rules_base.FixBuilder:
    """A guard fix that replaces the finding's line with ``text``."""

    def build(ctx: FixContext, code: str, v: Violation) -> Fix:
        line = v.ref.span.line
        return Fix("guard", code, "broken", (Edit(line, 0, line, len(ctx.lines.text(line)), text),))

    return build  # type: ignore[return-value]


@pytest.mark.parametrize(
    ("replacement", "encoding", "why"),
    [
        # parses, but compile() refuses a return outside a function
        (
            "return 1",
            "utf-8",
            "fixed text would not compile (SyntaxError: 'return' outside function (line 4))",
        ),
        ("w = (", "utf-8", "fixed text would not compile (SyntaxError: '(' was never closed (line 4))"),
        ("w = '→'", "latin-1", "fixed text does not fit the file's encoding (iso-8859-1): '→'"),
        # the finding stays: the fix never converges
        ("w = jnp.linalg.eig(A)  # again", "utf-8", "fixes did not converge after 100 rounds"),
    ],
)
def test_a_fix_whose_result_is_broken_leaves_the_file_untouched_and_is_reported(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    replacement: str,
    encoding: str,
    why: str,
) -> None:
    monkeypatch.setattr(rules_base, "guard_fix", _replacing_line(replacement))
    header = "# -*- coding: latin-1 -*-\n" if encoding == "latin-1" else ""
    data = (header + EIG).encode(encoding)
    path = tmp_path / "eig.py"
    path.write_bytes(data)
    for flag in ("--fix", "--diff"):
        code = main(["check", str(path), "--target", "tpu", flag])
        captured = capsys.readouterr()
        assert code == 1
        assert path.read_bytes() == data
        report = captured.out if flag == "--fix" else captured.err
        assert f"eig.py:1:1: fixes not applied: {why}" in report
        if flag == "--fix":
            assert "JT003" in captured.out  # the finding is still reported
        else:
            assert captured.out == ""


def test_a_module_in_newer_grammar_is_refused_a_fix_that_does_not_parse(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # PEP 695 (Python 3.12) need not compile in the Python running the check, only parse,
    # before and after the fix
    monkeypatch.setattr(rules_base, "guard_fix", _replacing_line("w = ("))
    source = EIG + "\n\ndef first[T](xs: list[T]) -> T:\n    return xs[0]\n"
    path = tmp_path / "eig.py"
    path.write_text(source)
    assert main(["check", str(path), "--target", "tpu", "--fix"]) == 1
    assert path.read_text() == source
    out = capsys.readouterr().out
    assert "eig.py:1:1: fixes not applied: fixed text would not compile (SyntaxError: " in out
    assert "JT003" in out


@pytest.mark.parametrize(
    ("after", "marked"),
    [("x = 1\ny = 3\n", False), ("x = 1\ny = 3", True), ("x = 1\r\ny = 3\r\n", False)],
    ids=["newline", "no-newline", "crlf"],
)
def test_a_diff_marks_a_last_line_without_a_line_break_as_diff_does(after: str, marked: bool) -> None:
    from jaxtarget.fixes.apply import unified_diff

    before = after.replace("3", "2")
    diff = unified_diff(before, after, "m.py")
    assert diff.startswith("--- a/m.py\n+++ b/m.py\n"), diff
    assert diff.count("\\ No newline at end of file\n") == (2 if marked else 0), diff
    assert f"-{before.splitlines()[1]}" in diff and f"+{after.splitlines()[1]}" in diff
