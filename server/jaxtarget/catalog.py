"""The rule catalog: every rule and every platform-limited JAX API, as data.

Nothing here runs analysis. The engine, the README's rule table, the CLI's
``rules``/``rule`` commands, hover and the probe all read these tables.
Platform facts are the measured ones for jax 0.7.0 … 0.10.2; the test suite
re-verifies each entry that can be cross-lowered against the installed JAX.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from .targets import GPU_PLATFORMS, PLATFORMS

Severity = Literal["error", "warning", "information", "hint"]
FixKind = Literal["guard", "ppermute", "skip-test", "suppress"]
ProbeMethod = Literal["export", "lower"]

DOCS_URL = "https://github.com/jaxtarget/jaxtarget/blob/main/docs/rules.md"


@dataclass(frozen=True)
class Lowering:
    """One platform that can lower an API, optionally only from a JAX version on."""

    platform: str
    since: str | None = None


@dataclass(frozen=True)
class ArgCondition:
    """The API is platform-limited only when called with ``keyword=value``.

    A ``value`` of None means: the keyword is passed with anything but ``None``.
    """

    keyword: str
    value: str | bool | int | None
    text: str


@dataclass(frozen=True)
class ProbeCase:
    """A small program that exercises an API, for cross-lowering checks.

    ``code`` runs with ``jax``, ``jnp``, ``lax``, ``shard_map``, ``mesh``
    (a one-axis mesh named ``"i"`` over ``N`` host devices), ``P`` and
    ``NamedSharding`` in scope, and must define ``f`` (a jitted callable) and
    ``args`` (a tuple of ``jax.ShapeDtypeStruct``).
    """

    code: str
    method: ProbeMethod = "lower"
    #: False where lowering cannot be checked on a CPU-only machine.
    verifiable: bool = True
    reason: str = ""


@dataclass(frozen=True)
class Api:
    """A public JAX API whose lowering is limited to some platforms."""

    qualname: str
    display: str
    rule: str
    lowers_on: tuple[Lowering, ...]
    error: str
    public_since: str | None = None
    condition: ArgCondition | None = None
    manual_sharding: bool = False
    probe: ProbeCase | None = None
    note: str = ""

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[1]

    def platforms(self, jax_version: tuple[int, ...] | None) -> frozenset[str]:
        """Platforms that lower this API in the given JAX version (None: newest known)."""
        result = set()
        for low in self.lowers_on:
            if low.since is None or jax_version is None or jax_version >= parse_version(low.since):
                result.add(low.platform)
        return frozenset(result)

    def lowers_text(self, jax_version: tuple[int, ...] | None) -> str:
        plats = self.platforms(jax_version)
        names = ", ".join(p for p in PLATFORMS if p in plats)
        if plats == GPU_PLATFORMS:
            return f"GPU ({names})"
        return names or "no platform"


@dataclass(frozen=True)
class Rule:
    """A diagnostic code with its documentation, in the manner of ruff's rule pages."""

    code: str
    name: str
    summary: str
    message: str
    why: str
    example: str
    fixed: str
    severity: Severity
    fixes: tuple[FixKind, ...]
    apis: tuple[Api, ...] = field(default=())

    @property
    def url(self) -> str:
        return f"{DOCS_URL}#{self.code.lower()}-{self.name}"


def parse_version(text: str) -> tuple[int, ...]:
    """'0.8.2' -> (0, 8, 2); trailing non-numeric parts ('0.9.0rc1', '.dev') are dropped."""
    parts: list[int] = []
    for piece in text.split("."):
        digits = ""
        for ch in piece:
            if not ch.isdigit():
                break
            digits += ch
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) != len(piece):
            break
    return tuple(parts)


_GPU = (Lowering("cuda"), Lowering("rocm"))
_NO_TPU = (Lowering("cpu"), Lowering("cuda"), Lowering("rocm"))
_CPU = (Lowering("cpu"),)

_SHARDED = (
    'perm = [(0, 1)]\nspec = P("i")\n'
    "arg = jax.ShapeDtypeStruct((2 * N,), jnp.float32, sharding=NamedSharding(mesh, spec))\n"
    "args = (arg,)\n"
)


def _sharded(body: str) -> str:
    return _SHARDED + body + "f = jax.jit(shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec))\n"


def _square(call: str, n_args: int = 1) -> str:
    return (
        f"f = jax.jit(lambda *a: {call})\n"
        f"args = tuple(jax.ShapeDtypeStruct((3, 3), jnp.float32) for _ in range({n_args}))\n"
    )


PSEND_PAIR_PROBE = ProbeCase(
    _sharded(
        "def body(x):\n"
        '    token = lax.psend(x, "i", perm)\n'
        '    return lax.precv(token, jax.ShapeDtypeStruct(x.shape, x.dtype), "i", perm)\n'
    ),
    method="export",
)

PPERMUTE_PROBE = ProbeCase(
    _sharded('def body(x):\n    return lax.ppermute(x, "i", perm)\n'),
    method="export",
)

_GPU_COLLECTIVE_NOTE = (
    "Lowering is registered only for the 'gpu' platform; every other platform "
    "hits a default rule that raises."
)

GPU_COLLECTIVES: tuple[Api, ...] = (
    Api(
        "jax.lax.psend",
        "lax.psend",
        "JT001",
        (Lowering("cuda"), Lowering("rocm", since="0.8.2")),
        "NotImplementedError: psend is currently only implemented on GPU",
        public_since="0.7.0",
        manual_sharding=True,
        probe=ProbeCase(
            _sharded('def body(x):\n    lax.psend(x, "i", perm)\n    return x\n'),
            method="export",
        ),
        note=_GPU_COLLECTIVE_NOTE,
    ),
    Api(
        "jax.lax.precv",
        "lax.precv",
        "JT001",
        _GPU,
        "NotImplementedError: precv is currently only implemented on GPU",
        public_since="0.7.0",
        manual_sharding=True,
        probe=ProbeCase(
            _sharded(
                "def body(x):\n"
                "    return lax.precv(lax.create_token(), jax.ShapeDtypeStruct(x.shape, x.dtype),"
                ' "i", perm)\n'
            ),
            method="export",
        ),
        note=_GPU_COLLECTIVE_NOTE,
    ),
    Api(
        "jax.lax.pbroadcast",
        "lax.pbroadcast",
        "JT001",
        _GPU,
        "NotImplementedError: MLIR translation rule for primitive 'pbroadcast' not found",
        public_since="0.6.1",
        probe=ProbeCase(_sharded('def body(x):\n    return lax.pbroadcast(x, "i", 0)\n'), method="export"),
    ),
)


def _limited(
    qualname: str,
    display: str,
    lowers_on: tuple[Lowering, ...],
    probe: ProbeCase | None,
    condition: ArgCondition | None = None,
    note: str = "",
) -> Api:
    return Api(
        qualname,
        display,
        "JT003",
        lowers_on,
        "NotImplementedError: MLIR translation rule for primitive not found",
        condition=condition,
        probe=probe,
        note=note,
    )


_PIVOTING = ArgCondition("pivoting", True, "with pivoting=True")
_CUDNN = ArgCondition("implementation", "cudnn", 'with implementation="cudnn"')

LIMITED_APIS: tuple[Api, ...] = (
    _limited("jax.numpy.linalg.eig", "jnp.linalg.eig", _NO_TPU, ProbeCase(_square("jnp.linalg.eig(*a)"))),
    _limited(
        "jax.numpy.linalg.eigvals",
        "jnp.linalg.eigvals",
        _NO_TPU,
        ProbeCase(_square("jnp.linalg.eigvals(*a)")),
    ),
    _limited("jax.lax.linalg.eig", "lax.linalg.eig", _NO_TPU, ProbeCase(_square("lax.linalg.eig(*a)"))),
    _limited(
        "jax.numpy.roots",
        "jnp.roots",
        _NO_TPU,
        ProbeCase(
            "f = jax.jit(lambda p: jnp.roots(p, strip_zeros=False))\n"
            "args = (jax.ShapeDtypeStruct((4,), jnp.float32),)\n"
        ),
    ),
    _limited(
        "jax.scipy.linalg.rsf2csf",
        "jax.scipy.linalg.rsf2csf",
        _NO_TPU,
        ProbeCase(_square("jax.scipy.linalg.rsf2csf(*a)", 2)),
    ),
    _limited(
        "jax.scipy.linalg.schur",
        "jax.scipy.linalg.schur",
        _CPU,
        ProbeCase(_square("jax.scipy.linalg.schur(*a)")),
    ),
    _limited(
        "jax.scipy.linalg.sqrtm",
        "jax.scipy.linalg.sqrtm",
        _CPU,
        ProbeCase(_square("jax.scipy.linalg.sqrtm(*a)")),
    ),
    _limited(
        "jax.scipy.linalg.funm",
        "jax.scipy.linalg.funm",
        _CPU,
        ProbeCase(_square("jax.scipy.linalg.funm(a[0], jnp.exp)")),
    ),
    _limited(
        "jax.scipy.linalg.solve_sylvester",
        "jax.scipy.linalg.solve_sylvester",
        _CPU,
        ProbeCase(_square("jax.scipy.linalg.solve_sylvester(*a)", 3)),
    ),
    _limited("jax.lax.linalg.schur", "lax.linalg.schur", _CPU, ProbeCase(_square("lax.linalg.schur(*a)"))),
    _limited(
        "jax.scipy.linalg.hessenberg",
        "jax.scipy.linalg.hessenberg",
        _CPU,
        ProbeCase(_square("jax.scipy.linalg.hessenberg(*a)")),
    ),
    _limited(
        "jax.lax.linalg.hessenberg",
        "lax.linalg.hessenberg",
        _CPU,
        ProbeCase(_square("lax.linalg.hessenberg(*a)")),
    ),
    _limited(
        "jax.lax.linalg.qr",
        "lax.linalg.qr",
        _NO_TPU,
        ProbeCase(_square("lax.linalg.qr(a[0], pivoting=True)")),
        condition=_PIVOTING,
    ),
    _limited(
        "jax.scipy.linalg.qr",
        "jax.scipy.linalg.qr",
        _NO_TPU,
        ProbeCase(_square("jax.scipy.linalg.qr(a[0], pivoting=True)")),
        condition=_PIVOTING,
    ),
    _limited(
        "jax.lax.linalg.tridiagonal",
        "lax.linalg.tridiagonal",
        _NO_TPU,
        ProbeCase(_square("lax.linalg.tridiagonal(a[0])")),
    ),
    _limited(
        "jax.nn.scaled_matmul",
        "jax.nn.scaled_matmul",
        (Lowering("cuda"), Lowering("rocm", since="0.9.0")),
        ProbeCase(
            "f = jax.jit(jax.nn.scaled_matmul)\n"
            "args = (jax.ShapeDtypeStruct((1, 128, 64), jnp.float8_e4m3fn),\n"
            "        jax.ShapeDtypeStruct((1, 128, 64), jnp.float8_e4m3fn),\n"
            "        jax.ShapeDtypeStruct((1, 128, 2), jnp.float8_e8m0fnu),\n"
            "        jax.ShapeDtypeStruct((1, 128, 2), jnp.float8_e8m0fnu))\n"
        ),
    ),
    _limited(
        "jax.nn.scaled_dot_general",
        "jax.nn.scaled_dot_general",
        (Lowering("cuda"), Lowering("rocm", since="0.9.0")),
        ProbeCase(
            'cfg = jax.nn.get_scaled_dot_general_config("mxfp8")\n'
            "f = jax.jit(lambda a, b: jax.nn.scaled_dot_general(\n"
            "    a, b, (((2,), (2,)), ((0,), (0,))), configs=[cfg, cfg, cfg]))\n"
            "args = (jax.ShapeDtypeStruct((1, 128, 64), jnp.bfloat16),\n"
            "        jax.ShapeDtypeStruct((1, 128, 64), jnp.bfloat16))\n"
        ),
        condition=ArgCondition("configs", None, "with block-scale configs"),
    ),
    _limited(
        "jax.nn.dot_product_attention",
        "jax.nn.dot_product_attention",
        (Lowering("cuda"),),
        ProbeCase(
            "f = jax.jit(lambda q, k, v: jax.nn.dot_product_attention(q, k, v,"
            ' implementation="cudnn"))\n'
            "args = tuple(jax.ShapeDtypeStruct((1, 8, 2, 16), jnp.bfloat16) for _ in range(3))\n",
            verifiable=False,
            reason="the cuDNN implementation fails at trace time on a machine without cuDNN",
        ),
        condition=_CUDNN,
    ),
)

RULES: tuple[Rule, ...] = (
    Rule(
        code="JT001",
        name="gpu-only-collective",
        summary="GPU-only collective used while a target backend cannot lower it",
        message="`{api}` only lowers on {lowers}; {failing} would raise {error}",
        why=(
            "`jax.lax.psend`, `jax.lax.precv` and `jax.lax.pbroadcast` register a lowering "
            "only for the GPU platforms (cuda, rocm). Compiling them for cpu or tpu raises "
            "`NotImplementedError` at lowering time, which typically shows up only when the "
            "program first runs on a laptop or in CI without a GPU. Guard the call with a "
            "backend check, provide a portable fallback such as `lax.ppermute`, or skip the "
            "test on non-GPU backends."
        ),
        example=(
            "def step(x):\n"
            '    token = lax.psend(x, "i", [(0, 1)])\n'
            '    return lax.precv(token, out_shape, "i", [(0, 1)])\n'
        ),
        fixed=(
            "def step(x):\n"
            "    if has_gpu_backend():\n"
            '        token = lax.psend(x, "i", [(0, 1)])\n'
            '        return lax.precv(token, out_shape, "i", [(0, 1)])\n'
            "    else:\n"
            '        return lax.ppermute(x, "i", [(0, 1)])\n'
        ),
        severity="error",
        fixes=("guard", "ppermute", "skip-test", "suppress"),
        apis=GPU_COLLECTIVES,
    ),
    Rule(
        code="JT002",
        name="manual-sharding-required",
        summary="point-to-point collective not visibly run under shard_map",
        message=(
            "`{api}` needs manual sharding: run it under `shard_map`, "
            "otherwise tracing fails with an unbound axis name"
        ),
        why=(
            "`psend`/`precv` support only manual sharding: called outside `shard_map` "
            "(for example under plain `jax.jit`), JAX fails at trace time because the "
            "axis name is unbound. The rule looks for a `shard_map` decorator on the "
            "enclosing function, or the function being passed to `jax.shard_map` / "
            "`jax.experimental.shard_map.shard_map` in the same module (directly or "
            "through functions it calls)."
        ),
        example=('@jax.jit\ndef step(x):\n    return lax.psend(x, "i", [(0, 1)])\n'),
        fixed=(
            '@partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P())\n'
            'def step(x):\n    return lax.psend(x, "i", [(0, 1)])\n'
        ),
        severity="information",
        fixes=("suppress",),
        apis=tuple(a for a in GPU_COLLECTIVES if a.manual_sharding),
    ),
    Rule(
        code="JT003",
        name="backend-limited-api",
        summary="API that lowers only on some platforms used while a target cannot lower it",
        message="`{api}`{condition} only lowers on {lowers}; {failing} would fail to lower",
        why=(
            "Some public JAX APIs have lowering rules for only some platforms: eigen-"
            "decompositions have no TPU lowering, `schur`, `sqrtm` and `hessenberg` lower "
            "only on CPU, the block-scaled matmuls and the cuDNN attention need a GPU. "
            "The failure appears only when the program is compiled for that platform."
        ),
        example="w, v = jnp.linalg.eig(a)\n",
        fixed=(
            'if jax.default_backend() in ("cpu", "gpu", "cuda", "rocm"):\n'
            "    w, v = jnp.linalg.eig(a)\n"
            "else:\n"
            '    raise NotImplementedError("jnp.linalg.eig requires one of cpu, cuda, rocm")\n'
        ),
        severity="warning",
        fixes=("guard", "skip-test", "suppress"),
        apis=LIMITED_APIS,
    ),
)

RULES_BY_CODE: dict[str, Rule] = {rule.code: rule for rule in RULES}
ALL_CODES: tuple[str, ...] = tuple(rule.code for rule in RULES)

#: Every API in the catalog, once, by qualified name.
APIS: dict[str, Api] = {api.qualname: api for rule in RULES for api in rule.apis}

#: shard_map entry points, by qualified public name.
SHARD_MAP_NAMES: frozenset[str] = frozenset({"jax.shard_map", "jax.experimental.shard_map.shard_map"})


def rule_for_name(text: str) -> Rule | None:
    """Look a rule up by code (``JT001``) or name (``gpu-only-collective``)."""
    key = text.strip()
    for rule in RULES:
        if key.upper() == rule.code or key.lower() == rule.name:
            return rule
    return None
