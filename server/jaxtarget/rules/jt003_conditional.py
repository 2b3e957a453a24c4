"""JT003's entries whose limit depends on an argument: dot-algorithm presets, decomposition
algorithms, Pallas without interpret mode, and experimental entry points.

Measured like jt003_catalog.py's; where a limit cannot be cross-lowered from a CPU-only
jaxlib the probe says so (``verifiable=False`` or ``artifacts``).
"""

from __future__ import annotations

from ..apis import (
    NO_TPU,
    AllOf,
    Api,
    ArgCondition,
    ArrayRank,
    Condition,
    Instance,
    Lowering,
    Member,
    ProbeCase,
    Value,
    square_probe,
)
from .jt003_catalog import limited

# ---------------------------------------------------------------- dot-algorithm presets

_PRESET = "jax.lax.DotAlgorithmPreset"
#: presets the CPU backend has no algorithm for (DEFAULT, F16_F16_F16, F32_F32_F32, F64_F64_F64
#: and BF16_BF16_F32(_X3, _X6) lower everywhere)
NOT_CPU_PRESETS = (
    "TF32_TF32_F32",
    "TF32_TF32_F32_X3",
    "BF16_BF16_BF16",
    "BF16_BF16_F32_X9",
    "F16_F16_F32",
    "ANY_F8_ANY_F8_F32",
    "ANY_F8_ANY_F8_F32_FAST_ACCUM",
    "ANY_F8_ANY_F8_ANY",
    "ANY_F8_ANY_F8_ANY_FAST_ACCUM",
)
_NOT_CPU = tuple(Lowering(p) for p in ("cuda", "rocm", "tpu"))
_PRESET_TEXT = "with a precision= preset CPU lacks"
_PRESET_ERROR = "ValueError: The precision is not supported by dot_general on CPU"
#: the probe's operands and precision for VALUE (float8 operands for the ANY_F8 presets)
_PRESET_SETUP = (
    'dt = jnp.float8_e4m3fn if VALUE.startswith("ANY_F8") else jnp.float32\n'
    'prec = (lax.DotAlgorithm(jnp.float32, jnp.float32, jnp.float32) if VALUE == "DotAlgorithm"\n'
    "        else getattr(lax.DotAlgorithmPreset, VALUE))\n"
    "args = (jax.ShapeDtypeStruct((16, 16), dt), jax.ShapeDtypeStruct((16, 16), dt))\n"
)


def _preset_condition(position: int | None) -> ArgCondition:
    values: tuple[Value, ...] = (
        *NOT_CPU_PRESETS,
        *(Member(_PRESET, name) for name in NOT_CPU_PRESETS),
        Instance(("jax.lax.DotAlgorithm",)),
    )
    return ArgCondition("precision", values, _PRESET_TEXT, position=position)


def _preset(qualname: str, display: str, call: str, position: int | None = None) -> Api:
    """``call`` (over ``a``, ``b`` and ``prec``) with each preset CPU lacks, and a custom DotAlgorithm."""
    probe = ProbeCase(
        f"{_PRESET_SETUP}f = jax.jit(lambda a, b: {call})\n",
        values=(*NOT_CPU_PRESETS, "DotAlgorithm"),
    )
    return limited(
        qualname, display, _NOT_CPU, probe, condition=_preset_condition(position), error=_PRESET_ERROR
    )


PRESETS: tuple[Api, ...] = (
    _preset("jax.lax.dot", "lax.dot", "lax.dot(a, b, precision=prec)", position=2),
    _preset(
        "jax.lax.dot_general",
        "lax.dot_general",
        "lax.dot_general(a, b, (((1,), (0,)), ((), ())), precision=prec)",
        position=3,
    ),
    _preset("jax.numpy.dot", "jnp.dot", "jnp.dot(a, b, precision=prec)"),
    _preset("jax.numpy.matmul", "jnp.matmul", "jnp.matmul(a, b, precision=prec)"),
    _preset("jax.numpy.einsum", "jnp.einsum", 'jnp.einsum("ij,jk->ik", a, b, precision=prec)'),
    limited(
        "jax.default_matmul_precision",
        "jax.default_matmul_precision",
        _NOT_CPU,
        ProbeCase(
            'dt = jnp.float8_e4m3fn if VALUE.startswith("ANY_F8") else jnp.float32\n'
            "def g(a, b):\n"
            "    with jax.default_matmul_precision(VALUE):\n"
            "        return a @ b\n"
            "f = jax.jit(g)\n"
            "args = (jax.ShapeDtypeStruct((16, 16), dt), jax.ShapeDtypeStruct((16, 16), dt))\n",
            values=NOT_CPU_PRESETS,
        ),
        condition=ArgCondition("new_val", NOT_CPU_PRESETS, "with a preset CPU lacks", position=0),
        error=_PRESET_ERROR,
    ),
    # the same default set for the whole process: every later matmul uses the preset
    limited(
        "jax.config.update",
        "jax.config.update",
        _NOT_CPU,
        ProbeCase(
            'dt = jnp.float8_e4m3fn if VALUE.startswith("ANY_F8") else jnp.float32\n'
            "def g(a, b):\n"
            "    old = jax.config.jax_default_matmul_precision\n"
            '    jax.config.update("jax_default_matmul_precision", VALUE)\n'
            "    try:\n"
            "        return a @ b\n"
            "    finally:\n"
            '        jax.config.update("jax_default_matmul_precision", old)\n'
            "f = jax.jit(g)\n"
            "args = (jax.ShapeDtypeStruct((16, 16), dt), jax.ShapeDtypeStruct((16, 16), dt))\n",
            values=NOT_CPU_PRESETS,
        ),
        condition=AllOf(
            (
                ArgCondition("name", "jax_default_matmul_precision", "", position=0),
                ArgCondition("val", NOT_CPU_PRESETS, "", position=1),
            ),
            'with "jax_default_matmul_precision" set to a preset CPU lacks',
        ),
        error=_PRESET_ERROR,
    ),
)

# ---------------------------------------------------------------- decompositions by algorithm

_SVD_ALG = "jax.lax.linalg.SvdAlgorithm"
_EIGH_IMPL = "jax.lax.linalg.EighImplementation"
_EIG_IMPL = "jax.lax.linalg.EigImplementation"
_GPU_TPU = (Lowering("cuda"), Lowering("rocm"), Lowering("tpu"))


def _by_member(
    qualname: str,
    keyword: str,
    cls: str,
    member: str,
    lowers_on: tuple[Lowering, ...],
    error: str,
    public_since: str | None = None,
    member_since: bool = False,
) -> Api:
    """``qualname(x, keyword=cls.member)`` on a 3x3 matrix."""
    short = cls.rsplit(".", 1)[1]
    display = qualname.replace("jax.lax.", "lax.")
    probe = ProbeCase(
        square_probe(f"{display}(a[0], {keyword}={display.rsplit('.', 1)[0]}.{short}.{member})"),
        requires=(f"{cls}.{member}",) if member_since else (cls,),
        errors=("NotImplementedError", "ValueError"),
    )
    cond = ArgCondition(keyword, Member(cls, member), f"with {keyword}={short}.{member}")
    return limited(
        qualname, display, lowers_on, probe, condition=cond, error=error, public_since=public_since
    )


_SVD_TPU_ERROR = (
    "NotImplementedError: Only the POLAR (which is also DEFAULT on TPU) SVD algorithm is supported on TPU."
)
_SVD_CPU_ERROR = "NotImplementedError: The SVD Jacobi and Polar algorithms are not implemented on CPU."
_EIG_CPU_ERROR = "ValueError: Only the lapack implementation is supported on CPU."
_CUSOLVER_ARTIFACT = "cusolver 11.7.1 or newer"  # "requires [jaxlib 0.8 and] cusolver 11.7.1 ..."


def _cusolver_eig(text: str, lowers_on: tuple[Lowering, ...], call: str, negated: bool) -> Api:
    """``lax.linalg.eig(x, implementation=CUSOLVER)``, with or without left eigenvectors."""
    member = ArgCondition("implementation", Member(_EIG_IMPL, "CUSOLVER"), "")
    left = ArgCondition("compute_left_eigenvectors", False, "", negated=negated)
    return limited(
        "jax.lax.linalg.eig",
        "lax.linalg.eig",
        lowers_on,
        ProbeCase(
            square_probe(call),
            requires=(_EIG_IMPL,),
            errors=("NotImplementedError", "ValueError", "RuntimeError"),
            # a CPU-only jaxlib has no cuSOLVER whose version the CUDA lowering checks
            # (ROCm fails with the same text for real: a fact only a GPU jaxlib verifies)
            artifacts=(_CUSOLVER_ARTIFACT,),
        ),
        condition=AllOf((member, left), f"with implementation=EigImplementation.CUSOLVER {text}"),
        error=_EIG_CPU_ERROR,
        public_since="0.8.0",
    )


ALGORITHMS: tuple[Api, ...] = (
    limited(
        "jax.lax.linalg.eigh",
        "lax.linalg.eigh",
        (Lowering("tpu"),),
        ProbeCase(square_probe("lax.linalg.eigh(a[0], subset_by_index=(0, 2))")),
        condition=ArgCondition("subset_by_index", None, "with subset_by_index"),
        error="NotImplementedError: subset_by_index not supported on CPU and GPU",
    ),
    limited(
        "jax.lax.linalg.svd",
        "lax.linalg.svd",
        (Lowering("tpu"),),
        ProbeCase(square_probe("lax.linalg.svd(a[0], full_matrices=False, subset_by_index=(0, 2))")),
        condition=ArgCondition("subset_by_index", None, "with subset_by_index"),
        error="NotImplementedError: subset_by_index not implemented for CPU and GPU",
    ),
    _by_member(
        "jax.lax.linalg.svd",
        "algorithm",
        _SVD_ALG,
        "QR",
        (*NO_TPU, Lowering("tpu", until="0.8.1")),
        _SVD_TPU_ERROR,
    ),
    _by_member(
        "jax.lax.linalg.svd",
        "algorithm",
        _SVD_ALG,
        "JACOBI",
        (Lowering("cuda"), Lowering("rocm"), Lowering("tpu", until="0.8.1")),
        _SVD_CPU_ERROR,
    ),
    _by_member("jax.lax.linalg.svd", "algorithm", _SVD_ALG, "POLAR", _GPU_TPU, _SVD_CPU_ERROR, "0.8.1", True),
    _by_member(
        "jax.lax.linalg.svd",
        "algorithm",
        _SVD_ALG,
        "DIVIDE_AND_CONQUER",
        (Lowering("cpu"), Lowering("rocm")),
        "NotImplementedError: Divide-and-conquer SVD is only supported on AMD GPUs",
        "0.10.0",
        True,
    ),
    _by_member(
        "jax.lax.linalg.eigh",
        "implementation",
        _EIGH_IMPL,
        "QR",
        NO_TPU,
        "NotImplementedError: QR algorithm is not supported on TPU",
        "0.8.1",
    ),
    _by_member(
        "jax.lax.linalg.eigh",
        "implementation",
        _EIGH_IMPL,
        "JACOBI",
        _GPU_TPU,
        "NotImplementedError: Jacobi implementation is not supported on CPU",
        "0.8.1",
    ),
    _by_member(
        "jax.lax.linalg.eigh",
        "implementation",
        _EIGH_IMPL,
        "QDWH",
        (Lowering("tpu"),),
        "NotImplementedError: QDWH implementation is only supported on TPU",
        "0.8.1",
    ),
    _by_member(
        "jax.lax.linalg.eig",
        "implementation",
        _EIG_IMPL,
        "MAGMA",
        (Lowering("cuda"), Lowering("rocm")),
        _EIG_CPU_ERROR,
        "0.8.0",
    ),
    # cuSOLVER's geev computes right eigenvectors only, and only jax's CUDA lowering
    # (cusolver 11.7.1 or newer) uses it: ROCm raises "requires cusolver" whatever the
    # version, so the default call (left eigenvectors too) lowers nowhere
    _cusolver_eig(
        "and left eigenvectors",
        (),
        "lax.linalg.eig(a[0], implementation=lax.linalg.EigImplementation.CUSOLVER)",
        negated=True,
    ),
    _cusolver_eig(
        "and compute_left_eigenvectors=False",
        (Lowering("cuda"),),
        "lax.linalg.eig(a[0], implementation=lax.linalg.EigImplementation.CUSOLVER,"
        " compute_left_eigenvectors=False)",
        negated=False,
    ),
    limited(
        "jax.lax.linalg.eig",
        "lax.linalg.eig",
        (Lowering("cpu", until="0.8.0"), Lowering("cuda"), Lowering("rocm")),
        ProbeCase(square_probe("lax.linalg.eig(a[0], use_magma=True)"), errors=("NotImplementedError",)),
        condition=ArgCondition("use_magma", True, "with use_magma=True"),
        error=_EIG_CPU_ERROR,
    ),
    limited(
        "jax.lax.linalg.tridiagonal_solve",
        "lax.linalg.tridiagonal_solve",
        NO_TPU,
        ProbeCase(
            "f = jax.jit(lambda dl, d, du, b: lax.linalg.tridiagonal_solve(dl, d, du, b, perturb_singular=True))\n"
            "args = tuple(jax.ShapeDtypeStruct((4,), jnp.float32) for _ in range(3))"
            " + (jax.ShapeDtypeStruct((4, 1), jnp.float32),)\n",
            requires=("jax.lax.linalg.tridiagonal_solve(perturb_singular)",),
        ),
        condition=ArgCondition("perturb_singular", True, "with perturb_singular=True"),
        error="NotImplementedError: perturb_singular=True is not supported on this platform.",
        public_since="0.10.0",
    ),
)

# ---------------------------------------------------------------- experimental and private entry points

_PALLAS = "jax.experimental.pallas.pallas_call"
#: TPU interpret mode given to the Pallas calls under a `with` block, or in the whole process
_INTERPRET_SETTERS = frozenset(
    {
        "jax.experimental.pallas.tpu.force_tpu_interpret_mode",
        "jax.experimental.pallas.tpu.set_tpu_interpret_mode",
    }
)
_NOT_INTERPRETED = ArgCondition(
    "interpret", True, "without interpret=True", negated=True, set_by=_INTERPRET_SETTERS
)
_PALLAS_PROBE = (
    "from jax.experimental import pallas as pl\n"
    "def kernel(x_ref, o_ref):\n"
    "    o_ref[...] = x_ref[...] + 1.0\n"
    "f = jax.jit(pl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), jnp.float32){extra}))\n"
    "args = (jax.ShapeDtypeStruct((8, 128), jnp.float32),)\n"
)
#: a CPU-only jaxlib cannot lower Pallas for a GPU: jax 0.9.x goes through Mosaic GPU, which an
#: install without absl-py lacks, and 0.12 asks the (absent) GPU for its compute capability
_PALLAS_ARTIFACTS = (
    "To use Pallas on GPU, install jaxlib",
    # Triton asks the GPU for its compute capability (jax 0.12)
    "No supported GPU devices found",
)
_PALLAS_CPU = "ValueError: Only interpret mode is supported on CPU backend."
_MOSAIC_GPU_PARAMS = ("jax.experimental.pallas.mosaic_gpu.CompilerParams",)
_TPU_PARAMS = ("jax.experimental.pallas.tpu.CompilerParams",)
_TRITON_PARAMS = ("jax.experimental.pallas.triton.CompilerParams",)


def _pallas(
    text: str,
    lowers_on: tuple[Lowering, ...],
    extra: str,
    params: tuple[str, ...],
    setup: str = "",
    removed_in: str | None = None,
) -> Api:
    condition: Condition = _NOT_INTERPRETED
    if params:
        condition = AllOf((_NOT_INTERPRETED, ArgCondition("compiler_params", Instance(params), "")), text)
    probe = ProbeCase(
        setup + _PALLAS_PROBE.format(extra=extra),
        requires=params[:1],
        errors=("ValueError", "AssertionError"),
        artifacts=_PALLAS_ARTIFACTS,
    )
    return limited(
        _PALLAS,
        "pallas_call",
        lowers_on,
        probe,
        condition=condition,
        error=_PALLAS_CPU,
        removed_in=removed_in,
    )


EXPERIMENTAL: tuple[Api, ...] = (
    _pallas(
        "without interpret=True",
        (
            Lowering("cuda"),
            Lowering("rocm", until="0.9.1"),
            # Mosaic GPU, the default from 0.9.1, has no ROCm; 0.11.2 made Triton the default again
            Lowering("rocm", since="0.11.2"),
            Lowering("tpu"),
        ),
        "",
        (),
    ),
    _pallas(
        "with TPU compiler_params, without interpret=True",
        (Lowering("cuda", until="0.8.2"), Lowering("rocm", until="0.8.2"), Lowering("tpu")),
        ", compiler_params=pltpu.CompilerParams()",
        _TPU_PARAMS,
        "from jax.experimental.pallas import tpu as pltpu\n",
    ),
    _pallas(
        "with pltpu.TPUCompilerParams, without interpret=True",
        (Lowering("cuda", until="0.8.2"), Lowering("rocm", until="0.8.2"), Lowering("tpu")),
        ", compiler_params=pltpu.TPUCompilerParams()",
        ("jax.experimental.pallas.tpu.TPUCompilerParams",),  # the deprecated name, gone in 0.7.2
        "from jax.experimental.pallas import tpu as pltpu\n",
        removed_in="0.7.2",
    ),
    # Mosaic GPU kernels through pallas_call: ROCm refused in 0.9.1-0.9.x (before the
    # registered rule of 0.10.0 skipped the check), the rule gone in 0.11.2 (plgpu.kernel)
    _pallas(
        "with Mosaic GPU compiler_params, without interpret=True",
        (
            Lowering("cuda", until="0.11.2"),
            Lowering("rocm", until="0.9.1"),
            Lowering("rocm", since="0.10.0", until="0.11.2"),
            Lowering("tpu", until="0.8.2"),
        ),
        ", compiler_params=plmgpu.CompilerParams()",
        _MOSAIC_GPU_PARAMS,
        "from jax.experimental.pallas import mosaic_gpu as plmgpu\n",
    ),
    _pallas(
        "with Triton compiler_params, without interpret=True",
        (Lowering("cuda"), Lowering("rocm"), Lowering("tpu", until="0.8.2")),
        ", compiler_params=plgpu.CompilerParams(num_warps=4)",
        _TRITON_PARAMS,
        "from jax.experimental.pallas import triton as plgpu\n",
    ),
    _pallas(
        "with plgpu.TritonCompilerParams, without interpret=True",
        (Lowering("cuda"), Lowering("rocm"), Lowering("tpu", until="0.8.2")),
        ", compiler_params=plgpu.TritonCompilerParams(num_warps=4)",
        ("jax.experimental.pallas.triton.TritonCompilerParams",),
        "from jax.experimental.pallas import triton as plgpu\n",
        removed_in="0.7.2",
    ),
    limited(
        "jax.experimental.buffer_callback.buffer_callback",
        "buffer_callback",
        NO_TPU,
        ProbeCase(
            "from jax.experimental.buffer_callback import buffer_callback\n"
            "def cb(ctx, out, x):\n"
            "    pass\n"
            "f = jax.jit(buffer_callback(cb, jax.ShapeDtypeStruct((4,), jnp.float32)))\n"
            "args = (jax.ShapeDtypeStruct((4,), jnp.float32),)\n"
        ),
        error="ValueError: `buffer_callback` not supported on tpu backend.",
    ),
    limited(
        "jax.experimental.fused.fused",
        "fused",
        (Lowering("cuda"),),
        ProbeCase(
            "from jax.experimental.fused import fused\n"
            "from jax._src import core\n"
            'space = getattr(getattr(jax, "memory", None), "Space", None)\n'
            "space = core.MemorySpace.Device if space is None else space.Device\n"
            "f = jax.jit(fused(out_spaces=(space,))(lambda x: jnp.sin(x) * 2))\n"
            "args = (jax.ShapeDtypeStruct((8,), jnp.float32),)\n"
        ),
        public_since="0.7.2",
    ),
    limited(
        "jax.numpy.poly",
        "jnp.poly",
        NO_TPU,
        ProbeCase(square_probe("jnp.poly(a[0])")),
        condition=ArgCondition(
            "seq_of_zeros",
            ArrayRank(
                2,
                wrappers=tuple(f"{m}.{f}" for m in ("jax.numpy", "numpy") for f in ("array", "asarray")),
                square=tuple(f"{m}.{f}" for m in ("jax.numpy", "numpy") for f in ("eye", "identity")),
                shaped=tuple(
                    f"{m}.{f}" for m in ("jax.numpy", "numpy") for f in ("zeros", "ones", "empty", "full")
                ),
            ),
            "of a 2-D array",
            position=0,
        ),
    ),
)
