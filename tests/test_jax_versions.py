"""check and hover under each jax release scripts/test.sh installs: what the user's jax lacks,
the upgrade that fixes each target, and the argument-decided entries read from the code."""

from __future__ import annotations

import importlib.metadata
import textwrap

import pytest

from jaxtarget.engine import Engine
from jaxtarget.lsp.hover import hover_markdown
from jaxtarget.platforms import PLATFORMS

from .conftest import JAX_VENVS, jax_venv, make_engine

RELEASES = tuple(JAX_VENVS)


def _engine(release: str, targets: tuple[str, ...]) -> Engine:
    """An engine on an interpreter with this jax: the suite's own where it has it."""
    own = importlib.metadata.version("jax") == release
    engine = make_engine(targets, None if own else jax_venv(release))
    assert engine.environment.jax_version == release
    return engine


def _findings(engine: Engine, source: str) -> dict[int, str]:
    return {f.span.line: f.message for f in engine.check(textwrap.dedent(source)).findings}


def _hovers(engine: Engine, source: str) -> dict[int, str]:
    analysis = engine.check(textwrap.dedent(source))
    assert analysis.module is not None
    return {r.span.line: hover_markdown(engine, r, analysis, None) for r in analysis.module.references}


# ---------------------------------------------------------------- what the user's jax lacks

NEWER = """\
from jax import lax
from jax.lax.linalg import SvdAlgorithm


def solve(dl, d, du, b, a):
    x = lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)
    u, s, vt = lax.linalg.svd(a, algorithm=SvdAlgorithm.POLAR)
    return x, u
"""
#: line -> (the call as messages name it, public from, the targets a present one fails on)
NEWER_USES = {
    6: ("`lax.linalg.tridiagonal_solve` with perturb_singular=True", "0.10.0", "target 'tpu'"),
    7: ("`lax.linalg.svd` with algorithm=SvdAlgorithm.POLAR", "0.8.1", "target 'cpu'"),
}


@pytest.mark.parametrize("release", RELEASES)
def test_a_keyword_or_member_the_jax_lacks_fails_everywhere(release: str) -> None:
    """tridiagonal_solve(perturb_singular=True) before 0.10.0 and SvdAlgorithm.POLAR before
    0.8.1 raise on every platform: no platform verdict, the release that has them."""
    engine = _engine(release, PLATFORMS)
    findings, hovers = _findings(engine, NEWER), _hovers(engine, NEWER)
    for line, (call, since, failing) in NEWER_USES.items():
        if tuple(map(int, release.split("."))) < tuple(map(int, since.split("."))):
            assert findings[line] == (
                f"{call} is not in jax {release} (public from {since}); the call fails on every "
                "platform (targets 'cpu', 'cuda', 'rocm', 'tpu' here)"
            ), findings
            assert hovers[line].startswith(
                f"**✗ {call} is not in jax {release} (public from {since})**: the call fails on every platform"
            ), hovers[line]
            assert "**Backend support**" not in hovers[line] and "| ✓ |" not in hovers[line]
        else:
            assert findings[line].startswith(f"{call} only lowers on "), findings
            assert findings[line].endswith(f"; {failing} would fail to lower"), findings
            assert "**Backend support**" in hovers[line] and "is not in jax" not in hovers[line]
    # the finding offers no backend guard (no backend runs it), only the suppression
    analysis = engine.check(NEWER)
    for finding in analysis.findings:
        kinds = [fix.kind for fix in analysis.fixes(finding)]
        if "is not in jax" in finding.message:
            assert kinds == ["suppress"], kinds
        else:
            assert "guard" in kinds, kinds


# modelled on Pallas TPU kernels written for jax 0.6 (pltpu.TPUCompilerParams, renamed
# CompilerParams and removed in 0.7.2) and on code importing newer modules
GONE_OR_NEW = """\
import jax.scipy.linalg as jsl
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.fused import fused


def copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x, a, b, c):
    y = pl.pallas_call(copy, out_shape=x, compiler_params=pltpu.TPUCompilerParams())(x)
    z = jsl.solve_sylvester(a, b, c)
    w = fused(copy)
    v = pltpu.NotAThing()
    return y, z, w, v
"""
#: line -> (the use as messages name it, what the catalog says of its existence, the
#: targets' verdict where the jax has it)
GONE_OR_NEW_USES = {
    12: (
        "`pallas_call` with pltpu.TPUCompilerParams, without interpret=True",
        ("removed in", "0.7.2"),
        "`pallas_call` with pltpu.TPUCompilerParams, without interpret=True only lowers on cuda, rocm, tpu; "
        "target 'cpu' would fail to lower",
    ),
    13: (
        "`jax.scipy.linalg.solve_sylvester`",
        ("public from", "0.8.0"),
        "`jax.scipy.linalg.solve_sylvester` only lowers on cpu; target 'tpu' would fail to lower",
    ),
    14: (
        "`fused`",
        ("public from", "0.7.2"),
        "`fused` only lowers on cuda; targets 'cpu', 'tpu' would fail to lower",
    ),
}


def _release(text: str) -> tuple[int, ...]:
    return tuple(map(int, text.split(".")))


@pytest.mark.parametrize("release", RELEASES)
def test_a_name_the_jax_has_nothing_under_is_reported_absent(release: str) -> None:
    """A name jax removed (pltpu.TPUCompilerParams from 0.7.2) or has not made yet
    (solve_sylvester before 0.8.0, the jax.experimental.fused module before 0.7.2) does not
    resolve in that jax: it is read from its import statement and reported as absent there,
    with its platform verdict in the releases that have it; a name no release has gives
    nothing (line 15)."""
    engine = _engine(release, ("cpu", "tpu"))
    findings, hovers = _findings(engine, GONE_OR_NEW), _hovers(engine, GONE_OR_NEW)
    expected = {}
    for line, (use, (how, when), present) in GONE_OR_NEW_USES.items():
        gone = (
            _release(release) >= _release(when) if how == "removed in" else _release(release) < _release(when)
        )
        if gone:
            expected[line] = (
                f"{use} is not in jax {release} ({how} {when}); the call fails on every platform "
                "(targets 'cpu', 'tpu' here)"
            )
            assert hovers[line].startswith(f"**✗ {use} is not in jax {release} ({how} {when})**"), hovers[
                line
            ]
        elif line != 12 or _release(release) < (0, 8, 2):  # TPU params lower on GPUs only before 0.8.2
            expected[line] = present
    assert findings == expected, findings


DYNAMIC_ROOT = """\
import jax.numpy as jnp
from jax import lax


def spread(x, i):
    return lax.pbroadcast(x, "i", jnp.int32(i))
"""


@pytest.mark.parametrize("release", RELEASES)
def test_a_broadcast_from_a_source_array(release: str) -> None:
    """`lax.pbroadcast` with an int32 array source: a dynamic-root broadcast (its own
    primitive, GPU-only) from 0.12.0; before, jax rejects the unhashable source everywhere."""
    (message,) = _findings(_engine(release, ("cpu", "tpu")), DYNAMIC_ROOT).values()
    if release == "0.12.0.1":
        assert message == (
            "`lax.pbroadcast` only lowers on GPU (cuda, rocm); targets 'cpu', 'tpu' would raise NotImplementedError"
        )
    else:
        assert message == (
            f"`lax.pbroadcast` with a source array is not in jax {release} (public from 0.12.0); "
            "the call fails on every platform (targets 'cpu', 'tpu' here)"
        )


FALLBACK = """\
from jax import lax


def solve(dl, d, du, b):
    try:
        return lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True)
    except TypeError:  # jax before 0.10.0 has no perturb_singular
        return lax.linalg.tridiagonal_solve(dl, d, du, b)
"""


@pytest.mark.parametrize("release", RELEASES)
def test_a_version_fallback_is_not_reported_as_absent(release: str) -> None:
    """`except TypeError` around the newer call: silent where jax lacks it; where jax has
    it, the call runs and tpu still fails to lower it (TypeError does not catch that)."""
    messages = list(_findings(_engine(release, ("cpu", "tpu")), FALLBACK).values())
    if release in ("0.7.0", "0.8.2", "0.9.1"):
        assert messages == []
    else:
        assert messages == [
            "`lax.linalg.tridiagonal_solve` with perturb_singular=True only lowers on cpu, cuda, rocm; "
            "target 'tpu' would fail to lower"
        ]


# ---------------------------------------------------------------- the upgrade for every target

SCALED = """\
import jax


def project(a, b, scale_a, scale_b):
    return jax.nn.scaled_matmul(a, b, scale_a, scale_b)
"""


@pytest.mark.parametrize(
    ("release", "note"),
    [
        ("0.7.0", "lowers on rocm from jax 0.8.2 and on cpu, tpu from jax 0.11.0; you have 0.7.0"),
        ("0.8.2", "lowers on cpu, tpu from jax 0.11.0; you have 0.8.2"),
        # rocm lost it in 0.9.1 and has it again from 0.10.0
        ("0.9.1", "lowers on rocm from jax 0.10.0 and on cpu, tpu from jax 0.11.0; you have 0.9.1"),
        ("0.10.2", "lowers on cpu, tpu from jax 0.11.0; you have 0.10.2"),
        ("0.12.0.1", None),
    ],
)
def test_the_upgrade_note_names_every_failing_targets_release(release: str, note: str | None) -> None:
    engine = _engine(release, ("cpu", "rocm", "tpu"))
    messages = list(_findings(engine, SCALED).values())
    (hover,) = _hovers(engine, SCALED).values()
    if note is None:
        assert messages == [] and hover.startswith("**✓ Lowers on every target"), (messages, hover)
        return
    (message,) = messages
    assert message.endswith(f"would fail to lower ({note})"), message
    assert f". {note[0].upper()}{note[1:]}." in hover, hover


# ---------------------------------------------------------------- argument-decided entries

DECIDED = """\
import jax
import jax.numpy as jnp
from jax import lax
from jax._src.cudnn import fused_attention_stablehlo as fa
from jax.experimental import rnn


def layer(a, b, q, k, v, x, h, c, w, lengths):
    y = lax.dot(a, b, precision=lax.DotAlgorithmPreset.TF32_TF32_F32)
    z = jnp.einsum("ij,jk->ik", a, b, precision="BF16_BF16_BF16")
    p = jnp.poly(jnp.eye(3))
    att = jax.nn.dot_product_attention(q.astype(jnp.float16), k, v)
    o = fa.dot_product_attention(q, k, v)
    r = rnn.lstm(x, h, c, w, lengths, input_size=8, hidden_size=8, num_layers=1, dropout=0.0, bidirectional=False)
    return y, z, p, att, o, r


def portable(a, b, q, k, v, precision):
    with jax.default_matmul_precision(precision):
        y = lax.dot(a, b, precision=precision)
    p = jnp.poly(a)
    att = jax.nn.dot_product_attention(q.astype(jnp.bfloat16), k, v)
    try:
        o = fa.dot_product_attention(q, k, v)
    except RuntimeError:  # no cuDNN: it fails while tracing
        o = att
    return y, p, o
"""
#: line -> the platforms that fail it, the same in every release (jax 0.7.0 to 0.12.0.1)
DECIDED_FAILS = {
    9: {"cpu"},  # a dot-algorithm preset CPU has no algorithm for
    10: {"cpu"},  # the same, spelled as a string
    11: {"tpu"},  # the roots of a visibly square matrix's polynomial: an eig
    12: {"cpu"},  # float16 attention: F16_F16_F32 dot_general
    13: {"cpu", "rocm", "tpu"},  # the private cuDNN attention
    14: {"cpu", "tpu"},  # the cuDNN/MIOpen LSTM
}


@pytest.mark.parametrize("release", RELEASES)
def test_argument_decided_entries_under_each_release(release: str) -> None:
    """Presets, jnp.poly, float16 attention, the private cuDNN attention and rnn.lstm:
    check and hover give the same verdict in every release, and nothing where the argument
    is not visible or a `try` catches the trace-time cuDNN failure."""
    engine = _engine(release, PLATFORMS)
    findings, hovers = _findings(engine, DECIDED), _hovers(engine, DECIDED)
    assert set(findings) == set(DECIDED_FAILS), findings
    for line, failing in DECIDED_FAILS.items():
        listed = ", ".join(f"'{p}'" for p in PLATFORMS if p in failing)
        assert findings[line].endswith(f"{listed} would fail to lower"), findings[line]
        hover = hovers[line]
        assert hover.startswith(f"**✗ Fails on {', '.join(p for p in PLATFORMS if p in failing)}**"), hover
        assert f", jax {release}):" in hover, hover
        row = hover.split("|---" * len(PLATFORMS) + "|\n", 1)[1].split("\n", 1)[0]
        assert row == "|" + "|".join(" ✗ " if p in failing else " ✓ " for p in PLATFORMS) + "|", row


GONE_BEHIND_A_CHOICE = """\
import jax
from jax.experimental import pallas as pl

if jax.__version__ >= "0.4.31":
    from jax.experimental.pallas import tpu as pltpu
else:
    pltpu = None


def run(kernel, x):
    return pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.TPUCompilerParams())(x)
"""


def test_a_removed_name_bound_one_of_two_ways_is_reported_absent() -> None:
    """The module bound by one branch of an `if` (resolved with the whole file): the removed
    class under it is still read from the import, in the jax the suite runs (>= 0.7.2)."""
    engine = make_engine(("cpu",), None)
    release = engine.environment.jax_version
    assert _release(release) >= (0, 7, 2)
    assert _findings(engine, GONE_BEHIND_A_CHOICE) == {
        11: f"`pallas_call` with pltpu.TPUCompilerParams, without interpret=True is not in jax {release} "
        "(removed in 0.7.2); the call fails on every platform (target 'cpu' here)"
    }
