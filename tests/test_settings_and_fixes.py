"""Server defaults agree with package.json; fixes keep modules valid, idempotent and intact."""

from __future__ import annotations

import ast
import io
import json
import tokenize

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxtarget.config import default_wire, parse_editor_settings
from jaxtarget.engine import fix_all
from jaxtarget.fixes.layout import apply_edits

from .conftest import ROOT, CheckFn


def test_server_defaults_match_package_json() -> None:
    props = json.loads((ROOT / "package.json").read_text())["contributes"]["configuration"]["properties"]
    wire = default_wire()
    for key, value in wire.items():
        if isinstance(value, dict) and key == "probe":
            for sub, subval in value.items():
                assert props[f"jaxtarget.probe.{sub}"]["default"] == subval
        else:
            assert props[f"jaxtarget.{key}"]["default"] == value, key
    assert set(props["jaxtarget.targetBackends"]["items"]["enum"]) == {
        "auto",
        "cpu",
        "cuda",
        "rocm",
        "tpu",
        "gpu",
    }


def test_bad_editor_values_are_named() -> None:
    layer, problems = parse_editor_settings(
        {"targetBackends": "cpu,metal", "probe": {"timeoutSeconds": -1}, "x": 1}
    )
    assert layer.target_backends is None and layer.probe_timeout_seconds is None
    assert [p.key for p in problems] == ["targetBackends", "probe.timeoutSeconds", "x"]


SNIPPETS = st.sampled_from(
    [
        "x = 1",
        "def helper(a):\n{i}return a",
        "class K:\n{i}'''doc'''\n{i}def m(self):\n{i}{i}return 2",
        "# a comment with lax.psend in it",
        "text = '''\nline one\n    indented inside a string\n'''",
        "if flag:\n{i}y = 2\nelse:\n{i}y = 3",
        "@decorator\ndef deco():\n{i}pass",
        "values = [\n{i}1,\n{i}2,\n]",
    ]
)


def _block(snips: list[str], unit: str, depth: int) -> str:
    pad = unit * depth
    out = []
    for s in snips:
        for line in s.replace("{i}", unit).split("\n"):
            out.append(pad + line if line.strip() else line)
    return "\n".join(out) + ("\n" if out else "")


@st.composite
def modules(draw: st.DrawFn) -> tuple[str, str]:
    unit = draw(st.sampled_from(["    ", "  ", "\t"]))
    depth = draw(st.integers(0, 2))
    before = draw(st.lists(SNIPPETS, max_size=3))
    after = draw(st.lists(SNIPPETS, max_size=3))
    inner_before = draw(st.lists(SNIPPETS, max_size=2))
    header = draw(
        st.sampled_from(
            [
                "import jax\nfrom jax import lax\n",
                "from jax import lax\n",
                '"""Doc."""\nimport jax.lax as lax\n',
            ]
        )
    )
    nl = draw(st.sampled_from(["\n", "\r\n"]))
    body = ""
    pad = ""
    for level in range(depth):
        body += pad + ("def outer():\n" if level == 0 else "for i in range(2):\n")
        pad += unit
    body += _block(inner_before, unit, depth)
    body += f'{pad}token = lax.psend(x, "i", [(0, 1)])\n{pad}y = lax.precv(token, x, "i", [(0, 1)])\n'
    source = header + _block(before, unit, 0) + body + _block(after, unit, 0)
    return source.replace("\n", nl), unit


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=modules())
def test_guard_fixes_keep_code_valid_and_idempotent(check: CheckFn, case: tuple[str, str]) -> None:
    source, _unit = case
    ast.parse(source)
    analysis = check(source)
    jt001 = [f for f in analysis.findings if f.code == "JT001"]
    assert len(jt001) == 2
    for kind in ("guard", "ppermute", "suppress"):
        fixes = [fx for fx in analysis.fixes(jt001[0]) if fx.kind == kind]
        assert fixes, kind
        new = apply_edits(source, fixes[0].edits)
        ast.parse(new)
        remaining = [f for f in check(new).findings if f.code == "JT001" and "psend" in f.message]
        assert remaining == [], (kind, new)
        # every original line outside the rewritten statements survives byte for byte, in order
        old_lines = source.splitlines(keepends=True)
        new_lines = new.splitlines(keepends=True)
        kept = [ln for ln in old_lines if "lax.psend" not in ln and "lax.precv" not in ln]
        it = iter(new_lines)
        assert all(any(ln == cand for cand in it) for ln in kept), (kind, new)
        if kind != "suppress":
            guard = next(ln for ln in new_lines if ln.lstrip().startswith("if has_gpu_backend"))
            send = next(ln for ln in new_lines if "token = lax.psend" in ln)
            guard_indent = guard[: len(guard) - len(guard.lstrip())]
            send_indent = send[: len(send) - len(send.lstrip())]
            assert send_indent.startswith(guard_indent) and len(send_indent) > len(guard_indent)
            indents = [
                t.string
                for t in tokenize.generate_tokens(io.StringIO(source).readline)
                if t.type == tokenize.INDENT
            ]
            uses_tabs = bool(indents) and "\t" in indents[0]
            assert ("\t" in send_indent) == uses_tabs
    fixed = fix_all(source, check)
    ast.parse(fixed)
    assert [f for f in check(fixed).findings if f.code == "JT001"] == []
    assert fix_all(fixed, check) == fixed


def test_no_guard_for_a_statement_sharing_its_line(check: CheckFn) -> None:
    source = 'from jax import lax\na = 1; token = lax.psend(x, "i", p)\n'
    finding = next(f for f in check(source).findings if f.code == "JT001")
    kinds = [fx.kind for fx in check(source).fixes(finding)]
    assert "guard" not in kinds and "suppress" in kinds


def test_guard_keeps_decorators_with_their_function(check: CheckFn) -> None:
    source = (
        "import jax\nfrom jax import lax\n"
        "if True:\n    @jax.jit\n    def f(x):\n        return lax.psend(x, 'i', p)\n"
    )
    analysis = check(source)
    finding = next(f for f in analysis.findings if f.code == "JT001")
    fix = next(fx for fx in analysis.fixes(finding) if fx.kind == "guard")
    new = apply_edits(source, fix.edits)
    ast.parse(new)
    assert "        if has_gpu_backend():\n            return lax.psend" in new
