"""Targets, guards, shard_map context, conditions, suppression and positions."""

from __future__ import annotations

import re
import textwrap

import pytest

from jaxtarget.config import Layer, resolve
from jaxtarget.engine import Engine
from jaxtarget.environment import load_environment
from jaxtarget.rules.registry import APIS, RULES, rules_for_api
from jaxtarget.semantics.source import ChunkCache

from .conftest import CheckFn, jax_venv, make_engine, token_at

PAIR = textwrap.dedent(
    """\
    from functools import partial
    import jax
    from jax import lax

    @partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    def step(x):
        token = lax.psend(x, "i", [(0, 1)])
        return lax.precv(token, x, "i", [(0, 1)])
    """
)


def codes(analysis: object) -> list[str]:
    return [f.code for f in analysis.findings]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("targets", "expected"),
    [
        (("cuda",), []),
        (("rocm",), []),
        (("gpu",), []),
        (("tpu",), ["JT001", "JT001"]),
        (("cpu",), ["JT001", "JT001"]),
        (("cpu", "cuda"), ["JT001", "JT001"]),
    ],
)
def test_targets_decide_jt001(check: CheckFn, targets: tuple[str, ...], expected: list[str]) -> None:
    assert codes(check(PAIR, targets)) == expected


def test_message_names_api_and_failing_targets(check: CheckFn) -> None:
    f = check(PAIR, ("cpu", "tpu", "cuda")).findings[0]
    assert f.message == (
        "`lax.psend` only lowers on GPU (cuda, rocm); targets 'cpu', 'tpu' would raise NotImplementedError"
    )
    assert f.failing == ("cpu", "tpu")


def test_pair_is_linked_both_ways(check: CheckFn) -> None:
    send, recv = check(PAIR).findings
    assert send.related[0][0] == recv.span
    assert recv.related[0][0] == send.span


_HEAD = (
    "from functools import partial\nimport jax\nfrom jax import lax\n\n"
    '@partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))\n'
)
#: bodies of a shard_map'd function, and which precv (by line in the body) pairs with which psend
PAIRINGS = {
    # the token a psend returns, passed to precv: paired, whatever the axes and permutations say
    "token-variable": ('t = lax.psend(x, "i", p)\ny = lax.precv(t, x, "j", q)\nreturn y', {1: 0}),
    "token-inline": ('return lax.precv(\n    lax.psend(x, "i", p), x, "j", q\n)', {0: 1}),
    # no token link: the same axis and permutation pair them
    "same-axis-and-perm": ('lax.psend(x, "i", p)\nreturn lax.precv(other, x, "i", p)', {1: 0}),
    "other-axis": ('lax.psend(x, "i", p)\nreturn lax.precv(other, x, "j", p)', {}),
    "other-perm": ('lax.psend(x, "i", p)\nreturn lax.precv(other, x, "i", q)', {}),
    "token-of-another-name": ('t = lax.psend(x, "i", p)\nreturn lax.precv(u, x, "j", q)', {}),
    # two pairs: each precv with the psend whose token it receives, not the first psend
    "two-pairs": (
        'a = lax.psend(x, "i", p)\nb = lax.psend(x, "j", q)\n'
        'y = lax.precv(b, x, "k", r)\nz = lax.precv(a, x, "k", r)\nreturn y, z',
        {2: 1, 3: 0},
    ),
    # one psend pairs with one precv only, and one precv with one psend
    "two-sends-one-recv": (
        'lax.psend(x, "i", p)\nlax.psend(y, "i", p)\nreturn lax.precv(u, x, "i", p)',
        {2: 0},
    ),
    "one-send-two-recvs": (
        'lax.psend(x, "i", p)\ny = lax.precv(u, x, "i", p)\nz = lax.precv(v, x, "i", p)\nreturn y, z',
        {1: 0},
    ),
    # the axis and permutation spelled as keywords, at either end
    "keywords": (
        'lax.psend(x, axis_name="i", perm=p)\nreturn lax.precv(u, x, axis_name="i", perm=p)',
        {1: 0},
    ),
    "keyword-perm": ('lax.psend(x, "i", perm=p)\nreturn lax.precv(u, x, "i", p)', {1: 0}),
    "keyword-axis-other-perm": (
        'lax.psend(x, axis_name="i", perm=p)\nreturn lax.precv(u, x, "i", perm=q)',
        {},
    ),
    "keyword-token": (
        't = lax.psend(x, "i", p)\nreturn lax.precv(token=t, out_shape=x, axis_name="j", perm=q)',
        {1: 0},
    ),
    # the permutation in a mapping: what the psend sends to is not known
    "perm-in-a-mapping": ('lax.psend(x, "i", **where)\nreturn lax.precv(u, x, "i", p)', {}),
    # a token that no psend returned, or a psend's token handed to another collective
    "token-of-a-broadcast": ('t = lax.pbroadcast(x, "i", 0)\nreturn lax.precv(t, x, "j", q)', {}),
    "token-to-a-broadcast": ('t = lax.psend(x, "i", p)\nreturn lax.pbroadcast(t, "j", 0)', {}),
    # a token stored in a container is not the name the precv receives
    "token-in-a-list": (
        'tokens[0] = lax.psend(x, "i", p)\nt = lax.psend(x, "j", q)\nreturn lax.precv(t, x, "k", r)',
        {2: 1},
    ),
}


@pytest.mark.parametrize("name", PAIRINGS)
def test_which_precv_pairs_with_which_psend(check: CheckFn, name: str) -> None:
    body, expected = PAIRINGS[name]
    source = _HEAD + "def step(x):\n" + textwrap.indent(body, "    ") + "\n"
    first = _HEAD.count("\n") + 2  # the line (1-based) of the body's first statement
    findings = [f for f in check(source).findings if f.code == "JT001"]
    by_line = {f.span.line - first: f for f in findings}
    got = {}
    for line, f in by_line.items():
        for span, text in f.related:
            got.setdefault(line, span.line - first)
            if "precv" in text:
                assert "psend" in f.message, (name, f.message)
    # each link is shown from both ends
    pairs = {recv: send for recv, send in got.items() if "precv" in by_line[recv].message}
    assert pairs == expected, (name, got)
    assert {send: recv for recv, send in expected.items()} == {
        line: other for line, other in got.items() if "psend" in by_line[line].message
    }, (name, got)


def test_a_psend_in_another_function_is_not_paired(check: CheckFn) -> None:
    source = (
        _HEAD
        + 'def a(x):\n    return lax.psend(x, "i", p)\n\n'
        + _HEAD
        + ('def b(x):\n    return lax.precv(x, x, "i", p)\n')
    )
    findings = [f for f in check(source).findings if f.code == "JT001"]
    assert len(findings) == 2 and all(f.related == () for f in findings), findings


GUARDED = {
    "helper": "if has_gpu_backend():\n    {call}\n",
    "default-backend-in": 'if jax.default_backend() in ("gpu", "cuda", "rocm"):\n    {call}\n',
    "default-backend-eq": 'if jax.default_backend() == "gpu":\n    {call}\n',
    "reversed-eq": 'if "gpu" == jax.default_backend():\n    {call}\n',
    "negated-else": "if not has_gpu_backend():\n    pass\nelse:\n    {call}\n",
    "not-equal-cpu-and-tpu": 'if jax.default_backend() not in ("cpu", "tpu"):\n    {call}\n',
    "early-return": "def f(x):\n    if not has_gpu_backend():\n        return x\n    {call}\n",
    "early-raise": 'def f(x):\n    if jax.default_backend() != "gpu":\n        raise RuntimeError\n    {call}\n',
    "assert": "def f(x):\n    assert has_gpu_backend()\n    {call}\n",
    "ternary": "y = {call} if has_gpu_backend() else x\n",
    "and": "ok = has_gpu_backend() and {call}\n",
    "skipif": '@pytest.mark.skipif(not has_gpu_backend(), reason="gpu")\ndef test_it():\n    {call}\n',
    "skipunless": "@unittest.skipUnless(has_gpu_backend(), 'gpu')\ndef test_it():\n    {call}\n",
    "pytestmark": "pytestmark = pytest.mark.skipif(not has_gpu_backend(), reason='gpu')\ndef test_it():\n    {call}\n",
    "nested": "if has_gpu_backend():\n    for i in range(3):\n        with ctx:\n            {call}\n",
}

UNGUARDED = {
    "else-branch": "if has_gpu_backend():\n    pass\nelse:\n    {call}\n",
    "cpu-branch": 'if jax.default_backend() == "cpu":\n    {call}\n',
    "unrelated-condition": "if debug:\n    {call}\n",
    "after-non-exiting-if": "def f(x):\n    if not has_gpu_backend():\n        print(x)\n    {call}\n",
    "ternary-else": "y = x if has_gpu_backend() else {call}\n",
    "os-platform": 'import sys\nif sys.platform == "linux":\n    {call}\n',
    "any-platform-attribute": 'if config.platform == "gpu":\n    {call}\n',
    "helper-that-is-not-a-backend-test": "def on_gpu():\n    return True\nif on_gpu():\n    {call}\n",
}

HEADER = "import jax\nfrom jax import lax\n"
#: the helper the guard fix writes: a predicate recognised by what it returns
GUARD_HEADER = (
    "import jax\nfrom jax import lax\n\n"
    "def has_gpu_backend() -> bool:\n"
    '    """True when JAX runs on a GPU backend (cuda or rocm)."""\n'
    '    return jax.default_backend() in ("gpu", "cuda", "rocm")\n\n'
)
CALL = 'lax.psend(x, "i", [(0, 1)])'


@pytest.mark.parametrize("name", sorted(GUARDED))
def test_gpu_guards_silence_non_gpu_targets(check: CheckFn, name: str) -> None:
    source = GUARD_HEADER + GUARDED[name].format(call=CALL)
    assert "JT001" not in codes(check(source, ("cpu", "tpu"))), name


@pytest.mark.parametrize("name", sorted(UNGUARDED))
def test_other_branches_are_reported(check: CheckFn, name: str) -> None:
    source = GUARD_HEADER + UNGUARDED[name].format(call=CALL)
    assert "JT001" in codes(check(source, ("cpu",))), name


CUDNN = 'q = jax.nn.dot_product_attention(q, k, v, implementation="cudnn")'  # lowers on cuda only


def test_cuda_only_guard_still_reports_rocm_for_cuda_only_api(check: CheckFn) -> None:
    bare = HEADER + CUDNN + "\n"
    assert codes(check(bare, ("cuda",))) == []
    (f,) = check(bare, ("cuda", "rocm")).findings
    assert f.code == "JT003" and f.failing == ("rocm",)
    # a GPU guard lets rocm run the call too: rocm is still reported, cuda is not
    for test in ('jax.default_backend() == "gpu"', "has_gpu_backend()"):
        gpu_guarded = GUARD_HEADER + f"if {test}:\n    {CUDNN}\n"
        assert codes(check(gpu_guarded, ("cuda",))) == [], test
        (f,) = check(gpu_guarded, ("cuda", "rocm")).findings
        assert f.code == "JT003" and f.failing == ("rocm",), test
        assert token_at(gpu_guarded, f.span.line, f.span.col, f.span.end_col) == "dot_product_attention"
    # a cuda-only guard: rocm never reaches the call, so neither target is reported
    for test in ('jax.default_backend() == "cuda"', 'jax.devices()[0].platform == "cuda"'):
        cuda_guarded = HEADER + f"if {test}:\n    {CUDNN}\n"
        assert codes(check(cuda_guarded, ("cuda", "rocm"))) == [], test
        # the else branch is where rocm goes: the call there is reported for rocm
        in_else = HEADER + f"if {test}:\n    pass\nelse:\n    {CUDNN}\n"
        (f,) = check(in_else, ("cuda", "rocm")).findings
        assert f.code == "JT003" and f.failing == ("rocm",), test


@pytest.mark.parametrize(
    "decorated",
    [
        '@partial(jax.shard_map, mesh=m, in_specs=P("i"), out_specs=P("i"))\ndef f(x):\n    return {call}\n',
        '@jax.shard_map(mesh=m, in_specs=P("i"), out_specs=P("i"))\ndef f(x):\n    return {call}\n',
        'def f(x):\n    return {call}\ng = jax.jit(jax.shard_map(f, mesh=m, in_specs=P("i"), out_specs=P("i")))\n',
        'from jax.experimental.shard_map import shard_map as smap\ndef f(x):\n    return {call}\ng = smap(f, m, P("i"), P("i"))\n',
        'def inner(x):\n    return {call}\ndef f(x):\n    return inner(x)\ng = jax.shard_map(f, mesh=m, in_specs=P("i"), out_specs=P("i"))\n',
        'g = jax.shard_map(lambda x: {call}, mesh=m, in_specs=P("i"), out_specs=P("i"))\n',
    ],
)
def test_shard_map_context_silences_jt002(check: CheckFn, decorated: str) -> None:
    source = "from functools import partial\n" + HEADER + decorated.format(call=CALL)
    assert "JT002" not in codes(check(source, ("cuda",)))


def test_jit_without_shard_map_is_jt002_information(check: CheckFn) -> None:
    source = HEADER + "@jax.jit\ndef f(x):\n    return " + CALL + "\n"
    findings = check(source, ("cuda",)).findings
    assert [(f.code, f.severity) for f in findings] == [("JT002", "information")]


def test_alias_assignment_is_not_jt002(check: CheckFn) -> None:
    assert codes(check(HEADER + "send = lax.psend\n", ("cuda",))) == []


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ("import jax.numpy as jnp\nw = jnp.linalg.eig(a)\n", ["JT003"]),
        ("from jax import lax\nq = lax.linalg.qr(a)\n", []),
        ("from jax import lax\nq = lax.linalg.qr(a, pivoting=True)\n", ["JT003"]),
        ("import jax.scipy.linalg as sl\nq = sl.qr(a, pivoting=False)\n", []),
        ("import jax\nq = jax.nn.dot_product_attention(q, k, v)\n", []),
        (
            'import jax\nq = jax.nn.dot_product_attention(q, k, v, implementation="cudnn")\n',
            ["JT003"],
        ),
        ("import jax\ny = jax.nn.scaled_dot_general(a, b, dn)\n", []),
        ("import jax\ny = jax.nn.scaled_dot_general(a, b, dn, configs=cfgs)\n", ["JT003"]),
    ],
)
def test_conditions_on_arguments(check: CheckFn, source: str, expected: list[str]) -> None:
    assert codes(check(source, ("tpu",))) == expected


def test_a_broadcast_from_a_source_array_is_the_dynamic_broadcast(check: CheckFn) -> None:
    """`pbroadcast(x, axis, jnp.int32(i))`: the source is the third argument, by place or by name.

    jax 0.10.2 has no dynamic broadcast yet (public from 0.12.0): the call fails everywhere.
    """
    source = (
        "import jax.numpy as jnp\nfrom jax import lax\n\n\ndef spread(x, i):\n"
        '    a = lax.pbroadcast(x, "i", jnp.int32(i))\n'
        '    b = lax.pbroadcast(x, "i", source=jnp.int32(i))\n'
        '    c = lax.pbroadcast(x, "i", 0)\n'
        "    d = lax.pbroadcast(x, jnp.int32(i), 0)\n"
        "    return a, b, c, d\n"
    )
    found = check(source, ("tpu",), python=jax_venv("0.10.2")).findings
    dynamic = "`lax.pbroadcast` with a source array is not in jax 0.10.2 (public from 0.12.0)"
    static = "`lax.pbroadcast` only lowers on GPU (cuda, rocm); target 'tpu' would raise NotImplementedError"
    assert [(f.code, f.span.line, f.message.startswith(dynamic)) for f in found] == [
        ("JT001", 6, True),
        ("JT001", 7, True),
        ("JT001", 8, False),
        ("JT001", 9, False),
    ]
    assert [f.message for f in found[2:]] == [static, static]


def test_schur_is_cpu_only(check: CheckFn) -> None:
    source = "from jax.scipy.linalg import schur\nt, z = schur(a)\n"
    assert codes(check(source, ("cpu",))) == []
    assert check(source, ("gpu",)).findings[0].failing == ("cuda", "rocm")


@pytest.mark.parametrize(
    ("comment", "silenced"),
    [
        ("# jaxtarget: ignore[JT001]", True),
        ("# jaxtarget: ignore[JT003]", False),
        ("# jaxtarget: ignore", True),
        ("# noqa: JT001", True),
        ("# noqa: JT002, JT001", True),
        ("# noqa: E501", False),
        ("# noqa", True),
        ("# fine", False),
    ],
)
def test_suppression_comments(check: CheckFn, comment: str, silenced: bool) -> None:
    source = HEADER + f"y = {CALL}  {comment}\n"
    assert ("JT001" not in codes(check(source))) is silenced


def test_suppression_text_in_a_string_does_not_count(check: CheckFn) -> None:
    source = HEADER + f'y = ({CALL}, "# jaxtarget: ignore")\n'
    assert "JT001" in codes(check(source))


def test_select_ignore_and_severity() -> None:
    env = load_environment(None)
    source = HEADER + "@jax.jit\ndef f(x):\n    return " + CALL + "\n"
    only2 = Engine(resolve(Layer(target_backends=("cpu",), select=("JT002",))), env).check(source)
    assert [f.code for f in only2.findings] == ["JT002"]
    no1 = Engine(resolve(Layer(target_backends=("cpu",), ignore=("JT001",))), env).check(source)
    assert [f.code for f in no1.findings] == ["JT002"]
    sev = Engine(resolve(Layer(target_backends=("cpu",), severity={"JT001": "warning"})), env).check(source)
    assert sev.findings[0].severity == "warning"


def test_columns_count_code_points_after_non_bmp_characters(check: CheckFn) -> None:
    source = HEADER + f'y = ("🚀🚀", {CALL})\n'
    f = check(source).findings[0]
    line = source.splitlines()[2]
    assert f.span.col == line.index("psend")
    assert token_at(source, f.span.line, f.span.col, f.span.end_col) == "psend"


def test_syntax_error_still_yields_findings_for_the_rest(check: CheckFn) -> None:
    source = HEADER + "def broken(:\n    pass\n" + f"y = {CALL}\n" + "z = (1,\n"
    analysis = check(source)
    assert analysis.syntax_error and analysis.syntax_error.startswith("SyntaxError")
    assert "JT001" in codes(analysis)


DEGENERATE_ENGINE = make_engine(("cpu",))
_ON_LINE_3 = [("JT001", 3), ("JT002", 3)]  # CALL at module level on line 3: not under shard_map either
#: source -> the findings (code, line), or a word the syntax error must name when nothing is found,
#: or None: either the call's findings or no findings with a syntax error that says why
DEGENERATE: dict[str, tuple[str, list[tuple[str, int]] | str | None]] = {
    "empty": ("", []),
    "newline": ("\n", []),
    "plain": ("x = 1\n", []),
    "dangling-attribute": ("lax.", []),
    "partial-name": ("from jax import lax\nlax.ps", []),
    "bom": ("\ufeffimport jax\n", []),
    "bom-then-call": ("\ufeff" + HEADER + f"y = {CALL}\n", _ON_LINE_3),
    "crlf": ((HEADER + f"y = {CALL}\n").replace("\n", "\r\n"), _ON_LINE_3),
    "bare-cr": ((HEADER + f"y = {CALL}\n").replace("\n", "\r"), _ON_LINE_3),
    "no-final-newline": (HEADER + f"y = {CALL}", _ON_LINE_3),
    "form-feed": (HEADER + f"\x0cy = {CALL}\n", _ON_LINE_3),
    "huge-string": (HEADER + "s = '" + "a" * 2_000_000 + f"'\ny = {CALL}\n", [("JT001", 4), ("JT002", 4)]),
    "deep-brackets": (
        HEADER + "x = " + "(" * 1000 + ")" * 1000 + f"\ny = {CALL}\n",
        [("JT001", 4), ("JT002", 4)],
    ),
    "nul": (HEADER + f"y = {CALL}\n\0\n", "null bytes"),
    "nul-only": ("\0", "null bytes"),
    "binary": (bytes(range(256)).decode("latin-1"), "null bytes"),
    "invalid-utf8": (HEADER + f"y = {CALL}\n" + b"s = '\xff\xfe'\n".decode("utf-8", "surrogateescape"), None),
    "huge-line": (HEADER + f"y = {CALL}\n" + "x = " + "+".join(["1"] * 200_000) + "\n", None),
}


@pytest.mark.parametrize("sparse", [False, True], ids=["whole", "sparse"])
@pytest.mark.parametrize("name", sorted(DEGENERATE))
def test_degenerate_input_does_not_raise(name: str, sparse: bool) -> None:
    source, expected = DEGENERATE[name]
    engine = DEGENERATE_ENGINE
    analysis = engine.check(source, sparse=sparse, cache=ChunkCache() if sparse else None)
    found = [(f.code, f.span.line) for f in analysis.findings]
    if isinstance(expected, list):
        assert found == expected
    elif isinstance(expected, str):
        assert found == []
        assert analysis.syntax_error is not None and expected in analysis.syntax_error
    elif found:
        assert found == _ON_LINE_3
    else:
        assert analysis.syntax_error, "no findings and no reason given"
    lines = re.split(r"\r\n|\r|\n", source)  # Python's own line breaks (not form feeds)
    for f in analysis.findings:
        assert lines[f.span.line - 1][f.span.col : f.span.end_col] == "psend"
    # and the engine is still sound afterwards
    assert codes(engine.check(PAIR, sparse=sparse, cache=ChunkCache() if sparse else None)) == [
        "JT001",
        "JT001",
    ]


def test_large_module(check: CheckFn) -> None:
    body = "".join(f"v{i} = foo({i})\n" for i in range(50_000))
    analysis = check(HEADER + body + f"y = {CALL}\n")
    assert codes(analysis) == ["JT001", "JT002"]
    assert analysis.findings[0].span.line == 50_003


def test_every_api_exists_in_the_installed_jax_and_belongs_to_its_rules() -> None:
    """Each catalog name is a real attribute of the installed jax; shared APIs name their rules."""
    import importlib

    def lookup(qualname: str) -> object:
        """The object a dotted name names: its longest importable module, then attributes."""
        parts = qualname.split(".")
        for i in range(len(parts) - 1, 0, -1):
            try:
                found: object = importlib.import_module(".".join(parts[:i]))
            except ModuleNotFoundError:
                continue
            for part in parts[i:]:
                found = getattr(found, part)
            return found
        raise AssertionError(qualname)

    for api in APIS.values():
        qualname = api.qualname
        assert callable(lookup(qualname)), qualname
        assert qualname.endswith(api.display.split(".", 1)[-1]), (qualname, api.display)
    assert [r.code for r in rules_for_api("jax.lax.psend")] == ["JT001", "JT002"]
    assert [r.code for r in rules_for_api("jax.lax.pbroadcast")] == ["JT001"]
    assert [r.code for r in rules_for_api("jax.numpy.linalg.eig")] == ["JT003"]
    assert sum(len(rule.apis) for rule in RULES) == len(APIS) + 2  # psend and precv twice
