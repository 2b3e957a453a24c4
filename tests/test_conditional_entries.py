"""Catalog entries decided by an argument: read only where the call shows it, verdicts by jax version."""

from __future__ import annotations

import textwrap

import pytest

from jaxtarget.lsp.hover import hover_markdown
from jaxtarget.rules.registry import APIS, ENTRIES

from .conftest import CheckFn, jax_venv, make_engine


def _python(name: str) -> str:
    return jax_venv(name.removeprefix("jax-"))


def _messages(check: CheckFn, source: str, targets: tuple[str, ...]) -> list[tuple[int, str]]:
    analysis = check(textwrap.dedent(source), targets)
    return [(f.span.line, f.message) for f in analysis.findings if f.code == "JT003"]


def test_every_api_with_several_entries_has_distinct_conditions() -> None:
    for qualname, entries in ENTRIES.items():
        texts = [a.condition.text if a.condition else "" for a in entries]
        assert len(set(texts)) == len(texts), qualname
    assert (
        len(ENTRIES["jax.lax.linalg.svd"]) == 5 and len(ENTRIES["jax.experimental.pallas.pallas_call"]) == 6
    )


@pytest.mark.parametrize(
    ("statement", "found"),
    [
        ('jax.config.update("jax_default_matmul_precision", "TF32_TF32_F32")', True),
        ("jax.config.update('jax_default_matmul_precision', PREC)", True),
        ('config.update("jax_default_matmul_precision", "ANY_F8_ANY_F8_F32")', True),
        # a precision CPU has, another flag, a value that is not visible
        ('jax.config.update("jax_default_matmul_precision", "bfloat16")', False),
        ('jax.config.update("jax_enable_x64", True)', False),
        ('jax.config.update("jax_default_matmul_precision", value)', False),
    ],
)
def test_default_matmul_precision_set_through_the_config(check: CheckFn, statement: str, found: bool) -> None:
    source = f"""\
    import jax
    from jax import config

    PREC = "BF16_BF16_BF16"


    def setup(value):
        {statement}
    """
    for targets, expect in ((("cpu",), found), (("tpu",), False)):
        messages = _messages(check, source, targets)
        assert bool(messages) == expect, (targets, messages)
    if found:
        assert _messages(check, source, ("cpu",))[0][0] == 8


@pytest.mark.parametrize(
    ("call", "found"),
    [
        # enum member, string, custom algorithm, a module constant, a partial's keyword and position
        ("lax.dot(a, b, precision=lax.DotAlgorithmPreset.BF16_BF16_BF16)", True),
        ('jnp.dot(a, b, precision="ANY_F8_ANY_F8_F32")', True),
        (
            "jnp.einsum('ij,jk', a, b, precision=lax.DotAlgorithm(jnp.float32, jnp.float32, jnp.float32))",
            True,
        ),
        ("jnp.matmul(a, b, precision=PREC)", True),
        ('functools.partial(lax.dot, precision="F16_F16_F32")(a, b)', True),
        ("functools.partial(lax.dot_general, dimension_numbers=dn)(a, b, dn, PREC)", False),
        ("lax.dot_general(a, b, dn, PREC)", True),
        # lax.dot's precision is its third positional
        ("lax.dot(a, b, PREC)", True),
        ("lax.dot(a, PREC)", False),
        # presets CPU has, precisions that are not visible, anything passed through **kwargs
        ('jnp.dot(a, b, precision="BF16_BF16_F32")', False),
        ("jnp.dot(a, b, precision=lax.DotAlgorithmPreset.F32_F32_F32)", False),
        ("jnp.dot(a, b, precision=precision)", False),
        ("jnp.dot(a, b, **options)", False),
        ('jnp.dot(a, b, precision="highest")', False),
    ],
)
def test_dot_presets_are_found_only_where_visible(check: CheckFn, call: str, found: bool) -> None:
    source = f"""\
    import functools
    import jax.numpy as jnp
    from jax import lax

    PREC = lax.DotAlgorithmPreset.TF32_TF32_F32


    def f(a, b, dn, precision, options):
        return {call}
    """
    messages = _messages(check, source, ("cpu",))
    assert bool(messages) == found, messages
    if found:
        assert "precision= preset CPU lacks only lowers on cuda, rocm, tpu; target 'cpu'" in messages[0][1]


@pytest.mark.parametrize(
    ("args", "targets", "expected"),
    [
        ("", ("cpu",), "without interpret=True only lowers on cuda, tpu; target 'cpu'"),
        (", interpret=False", ("cpu",), "without interpret=True"),
        (", interpret=True", ("cpu",), None),
        (", interpret=flag", ("cpu",), None),
        (", **options", ("cpu",), None),
        (', interpret=jax.default_backend() == "cpu"', ("cpu",), None),
        # another operand decides on cpu (`flag`): not visible there; visibly False elsewhere
        # (modelled on jax-ml/jax tests/pallas/pallas_shape_poly_test.py, `eager and ...`)
        (', interpret=flag and jax.default_backend() == "cpu"', ("cpu",), None),
        (', interpret=flag and jax.default_backend() == "cpu"', ("rocm",), "without interpret=True"),
        (', interpret=flag or jax.default_backend() == "cpu"', ("cpu",), None),
        (', interpret=flag or jax.default_backend() == "cpu"', ("rocm",), None),
        (', interpret=jax.default_backend() != "cpu"', ("cpu",), "without interpret=True"),
        (", compiler_params=pltpu.CompilerParams()", ("cuda",), "with TPU compiler_params"),
        (", compiler_params=plgpu.CompilerParams(num_warps=4)", ("tpu",), "with Triton compiler_params"),
        (", compiler_params=plgpu.CompilerParams(num_warps=4)", ("cuda",), None),
        # the parameters refine the default GPU backend's entry (Mosaic GPU: no ROCm in 0.10.2)
        (", compiler_params=plgpu.CompilerParams(num_warps=4)", ("rocm",), None),
        (", compiler_params=params", ("tpu",), None),
        # Triton parameters only on GPUs: elsewhere the default entry stands (modelled on
        # openxla/tokamax tokamax/_src/hlo_utils_test.py)
        (
            ', compiler_params=plgpu.CompilerParams() if jax.default_backend() == "gpu" else None',
            ("cpu",),
            "without interpret=True only lowers on cuda, tpu; target 'cpu'",
        ),
        (
            ', compiler_params=plgpu.CompilerParams() if jax.default_backend() == "gpu" else None',
            ("tpu",),
            None,
        ),
        (
            ', compiler_params=plgpu.CompilerParams() if jax.default_backend() == "gpu" else None',
            ("cuda",),
            None,
        ),
        (
            ', compiler_params=plgpu.CompilerParams() if jax.default_backend() == "tpu" else None',
            ("tpu",),
            "with Triton compiler_params",
        ),
        # Mosaic GPU through pallas_call (jax 0.10.2: cuda and rocm lower it, tpu does not)
        (", compiler_params=plmgpu.CompilerParams()", ("tpu",), "with Mosaic GPU compiler_params"),
        (", compiler_params=plmgpu.CompilerParams()", ("cuda", "rocm"), None),
    ],
)
def test_pallas_call_outside_interpret_mode(
    check: CheckFn, args: str, targets: tuple[str, ...], expected: str | None
) -> None:
    source = f"""\
    import jax
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu
    from jax.experimental.pallas import mosaic_gpu as plmgpu
    from jax.experimental.pallas import triton as plgpu


    def f(kernel, out, flag, params, options):
        return pl.pallas_call(kernel, out_shape=out{args})
    """
    messages = _messages(check, source, targets)
    if expected is None:
        assert messages == []
    else:
        ((_, message),) = messages
        assert expected in message, message


@pytest.mark.parametrize(
    ("arg", "found"),
    [
        ("jnp.eye(n)", True),
        ("np.identity(3)", True),
        ("jnp.zeros((n, n))", True),
        ("jnp.array([[1.0, 2.0], [3.0, 4.0]])", True),
        ("[[1, 2], [3, 4]]", True),
        ("SQUARE", True),
        ("[1.0, 2.0]", False),
        ("jnp.zeros(n)", False),
        ("zeros", False),
        ("[row, row]", False),
    ],
)
def test_poly_of_a_visibly_square_matrix(check: CheckFn, arg: str, found: bool) -> None:
    source = f"""\
    import numpy as np
    import jax.numpy as jnp

    SQUARE = jnp.eye(4)


    def f(zeros, n, row):
        return jnp.poly({arg})
    """
    assert bool(_messages(check, source, ("tpu",))) == found


def test_enum_members_through_aliases_constants_and_partial(check: CheckFn) -> None:
    source = """\
    import functools
    from jax import lax
    from jax.lax import linalg as L
    from jax.lax.linalg import EighImplementation as Impl

    JACOBI = L.SvdAlgorithm.JACOBI


    def f(a):
        lax.linalg.svd(a, algorithm=JACOBI)
        functools.partial(L.eigh, implementation=Impl.QDWH)(a)
        lax.linalg.eig(a, implementation=lax.linalg.EigImplementation.LAPACK)
        lax.linalg.svd(a, algorithm=L.SvdAlgorithm.DEFAULT)
    """
    messages = _messages(check, source, ("cpu",))
    assert [line for line, _ in messages] == [10, 11]
    assert "with algorithm=SvdAlgorithm.JACOBI only lowers on GPU (cuda, rocm)" in messages[0][1]
    assert "with implementation=EighImplementation.QDWH only lowers on tpu" in messages[1][1]


def test_the_narrower_entry_is_reported_where_several_hold(check: CheckFn) -> None:
    source = """\
    from jax import lax


    def f(a):
        return lax.linalg.eig(a, implementation=lax.linalg.EigImplementation.MAGMA)
    """
    ((_, message),) = _messages(check, source, ("tpu",))
    assert "`lax.linalg.eig` with implementation=EigImplementation.MAGMA only lowers on GPU" in message


def test_cusolver_eig_lowers_nowhere_with_left_eigenvectors(check: CheckFn) -> None:
    """cuSOLVER's geev gives right eigenvectors only (measured on an NVIDIA H200), and ROCm has no geev."""
    source = """\
    from jax import lax

    CUSOLVER = lax.linalg.EigImplementation.CUSOLVER


    def both(a):
        return lax.linalg.eig(a, implementation=CUSOLVER)


    def right(a):
        return lax.linalg.eig(a, implementation=CUSOLVER, compute_left_eigenvectors=False)
    """
    nowhere = "`lax.linalg.eig` with implementation=EigImplementation.CUSOLVER and left eigenvectors lowers on no platform"
    right = "`lax.linalg.eig` with implementation=EigImplementation.CUSOLVER and compute_left_eigenvectors=False only lowers on cuda"
    assert [(ln, m.split(";")[0]) for ln, m in _messages(check, source, ("cuda",))] == [(7, nowhere)]
    assert [(ln, m.split(";")[0]) for ln, m in _messages(check, source, ("rocm",))] == [
        (7, nowhere),
        (11, right),
    ]
    analysis = check(textwrap.dedent(source), ("cuda",))
    # no backend test makes it run: only the suppression is offered
    assert [fx.kind for fx in analysis.fixes(analysis.findings[0])] == ["suppress"]


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("x.astype(jnp.float16)", True),
        ('x.astype("float16")', True),
        ("jnp.ones((1, 8, 2, 16), dtype=jnp.float16)", True),
        ("jnp.float16(x)", True),
        ("HALF", True),
        ("x.astype(jnp.bfloat16)", False),
        ("jnp.ones((1, 8, 2, 16), dtype=jnp.float32)", False),
        ("x", False),
    ],
)
def test_float16_attention_is_found_where_the_dtype_is_visible(
    check: CheckFn, query: str, found: bool
) -> None:
    source = f"""\
    import jax
    import jax.numpy as jnp

    HALF = jnp.zeros((1, 8, 2, 16), jnp.float16).astype(jnp.float16)


    def attend(x, k, v):
        return jax.nn.dot_product_attention({query}, k, v)
    """
    messages = _messages(check, source, ("cpu", "tpu"))
    assert bool(messages) == found, messages
    if found:
        assert messages[0][1].startswith(
            "`jax.nn.dot_product_attention` of float16 arrays only lowers on cuda, rocm, tpu; target 'cpu'"
        )


# a nested function's **kwargs filled by functools.partial in the function that defines
# it (modelled on nebius/kvax kvax/ops/flash_attention_cudnn.py)
HANDED_IN = """\
import functools

import jax
from jax.experimental.shard_map import shard_map


def flash(query, key, value, mesh, scale=1.0):
    def _attn(query, key, value, *args, **kwargs):
        return jax.nn.dot_product_attention(query, key, value, *args, **kwargs)

    fn = functools.partial(_attn, scale=scale, implementation="cudnn")
    fn = shard_map(fn, mesh=mesh, in_specs=None, out_specs=None)
    return fn(query, key, value)


def flash_xla(query, key, value, mesh, scale=1.0):
    def _attn(query, key, value, *args, **kwargs):
        return jax.nn.dot_product_attention(query, key, value, *args, **kwargs)

    fn = functools.partial(_attn, scale=scale, implementation="xla")
    return fn(query, key, value)


def flash_mixed(query, key, value, impl):
    def _attn(query, key, value, **kwargs):
        return jax.nn.dot_product_attention(query, key, value, **kwargs)

    a = functools.partial(_attn, implementation="cudnn")
    return a(query, key, value), _attn(query, key, value)


def outer(**kwargs):
    return jax.nn.dot_product_attention(1, 2, 3, **kwargs)
"""


def test_a_keyword_handed_in_through_partial_into_kwargs(check: CheckFn) -> None:
    # only where every use of the nested function binds implementation="cudnn"
    assert [line for line, _ in _messages(check, HANDED_IN, ("cpu", "tpu"))] == [9]


SVD_QR = """\
from jax import lax
from jax.lax.linalg import SvdAlgorithm


def decompose(a):
    return lax.linalg.svd(a, algorithm=SvdAlgorithm.QR)
"""
PALLAS = """\
from jax.experimental import pallas as pl


def add_one(kernel, out):
    return pl.pallas_call(kernel, out_shape=out)
"""


@pytest.mark.parametrize(
    ("venv", "svd_on_tpu", "pallas_on_rocm"),
    [
        # QR SVD lowered on TPU before 0.8.1; the Mosaic GPU default of 0.9.1-0.11.1 has no ROCm lowering
        ("jax-0.7.0", True, True),
        ("jax-0.8.2", False, True),
        ("own", False, False),
        ("jax-0.12.0.1", False, True),
    ],
)
def test_check_and_hover_follow_the_interpreters_jax(
    venv: str, svd_on_tpu: bool, pallas_on_rocm: bool
) -> None:
    python = None if venv == "own" else _python(venv)
    for source, target, lowers, key in (
        (SVD_QR, "tpu", svd_on_tpu, "jax.lax.linalg.svd[with algorithm=SvdAlgorithm.QR]"),
        (PALLAS, "rocm", pallas_on_rocm, "jax.experimental.pallas.pallas_call[without interpret=True]"),
    ):
        engine = make_engine((target,), python)
        analysis = engine.check(source)
        assert [f.code for f in analysis.findings] == ([] if lowers else ["JT003"]), (venv, key)
        assert analysis.module is not None
        (ref,) = analysis.module.references
        hover = hover_markdown(engine, ref, analysis, None)
        api = APIS[key]
        condition = api.condition.text if api.condition else ""
        assert f"(`{api.qualname}` {condition}, jax {engine.environment.jax_version})" in hover, hover
        if lowers:
            assert hover.startswith("**✓ Lowers on every target that reaches this line**"), hover
        else:
            assert hover.startswith(f"**✗ Fails on {target}**"), hover
    if venv == "own":
        (finding,) = make_engine(("rocm",), python).check(PALLAS).findings
        assert finding.message.endswith("(lowers on rocm from jax 0.11.2; you have 0.10.2)"), finding.message


# a use that passes none of the arguments that limit the API: hover agrees with check
UNLIMITED = """\
import jax
from jax import lax
from jax.experimental import pallas as pl


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x, a):
    out = pl.pallas_call(kernel, out_shape=x, interpret=True)(x)
    whole = lax.linalg.eigh(a)
    part = lax.linalg.eigh(a, subset_by_index=(0, 1))
    return out, whole, part
"""


def test_hover_agrees_with_check_where_no_limiting_argument_is_passed() -> None:
    engine = make_engine(("cpu",))
    analysis = engine.check(UNLIMITED)
    assert [(f.code, f.span.line) for f in analysis.findings] == [("JT003", 13)]
    assert analysis.module is not None
    heads = {
        ref.span.line: hover_markdown(engine, ref, analysis, None).split("\n", 1)[0]
        for ref in analysis.module.references
    }
    lowers = "**✓ Lowers on every target that reaches this line**: only a call"
    assert heads[11].startswith(f"{lowers} without interpret=True"), heads
    assert heads[12].startswith(f"{lowers} with subset_by_index"), heads
    assert heads[13].startswith("**✗ Fails on cpu**"), heads
