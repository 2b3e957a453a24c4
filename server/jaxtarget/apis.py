"""How the rules describe a platform-limited JAX API: plain data, no analysis.

Each rule module lists its own APIs with these types; the semantic layer finds
references to them, the probe cross-lowers their ``ProbeCase`` programs, and the
docs, hover and messages render them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .platforms import PLATFORMS, Version, parse_version, set_text


@dataclass(frozen=True)
class Lowering:
    """One platform that can lower an API, in the JAX versions ``since <= v < until``.

    A platform with a gap is listed twice (``since="0.8.2", until="0.9.1"`` and
    ``since="0.10.0"``); None means no bound.
    """

    platform: str
    since: str | None = None
    until: str | None = None

    def holds(self, version: Version | None) -> bool:
        """Whether this lowering exists in ``version`` (None: the newest known)."""
        if version is None:
            return self.until is None
        if self.since is not None and version < parse_version(self.since):
            return False
        return self.until is None or version < parse_version(self.until)

    @property
    def span_text(self) -> str:
        """``from 0.8.2 before 0.9.1`` (empty when unbounded)."""
        parts = ([f"from {self.since}"] if self.since else []) + (
            [f"before {self.until}"] if self.until else []
        )
        return " ".join(parts)


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
    #: public names the program uses besides the API itself (absent ones: no verdict)
    requires: tuple[str, ...] = ()
    #: False where lowering cannot be checked on a CPU-only machine.
    verifiable: bool = True
    reason: str = ""


@dataclass(frozen=True)
class Api:
    """A public JAX API whose lowering is limited to some platforms."""

    qualname: str
    display: str
    lowers_on: tuple[Lowering, ...]
    error: str
    public_since: str | None = None
    condition: ArgCondition | None = None
    probe: ProbeCase | None = None
    note: str = ""
    #: the failure is raised while tracing (a surrounding ``try`` catches it), not when lowering
    trace_time: bool = False
    #: the JAX primitives whose platform-specific lowerings make the limit (``probe --scan``)
    primitives: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[1]

    def platforms(self, jax_version: Version | None) -> frozenset[str]:
        """Platforms that lower this API in the given JAX version (None: newest known)."""
        return frozenset(low.platform for low in self.lowers_on if low.holds(jax_version))

    def exists(self, jax_version: Version | None) -> bool:
        """Whether the API is public in the given JAX version (None: assume so)."""
        return jax_version is None or not self.public_since or jax_version >= parse_version(self.public_since)

    def lowers_text(self, jax_version: Version | None) -> str:
        return set_text(self.platforms(jax_version))

    def version_note(self, failing: frozenset[str], jax_version: Version | None) -> str:
        """What another JAX version changes for the ``failing`` platforms (empty: nothing).

        ``lowers on cpu, tpu from jax 0.11.0; you have 0.10.2``
        """
        if jax_version is None:
            return ""
        later: dict[str, list[str]] = {}
        for low in self.lowers_on:
            if low.platform in failing and low.since and jax_version < parse_version(low.since):
                later.setdefault(low.since, []).append(low.platform)
        if not later:
            return ""
        have = ".".join(map(str, jax_version))
        first = min(later, key=parse_version)
        return f"lowers on {', '.join(sorted(set(later[first])))} from jax {first}; you have {have}"

    @property
    def depends_on_version(self) -> bool:
        """Whether any fact about this API is bounded by a JAX version."""
        return bool(self.public_since) or any(low.span_text for low in self.lowers_on)

    def versions_text(self) -> str:
        """GPU (cuda, rocm) (rocm from 0.8.2), public from jax 0.7.0"""
        spans: dict[str, list[str]] = {}
        for low in self.lowers_on:
            if low.span_text:
                spans.setdefault(low.platform, []).append(low.span_text)
        versions = "".join(f" ({p} {', '.join(t)})" for p, t in spans.items())
        public = f", public from jax {self.public_since}" if self.public_since else ""
        return f"{self.lowers_text(None)}{versions}{public}"

    def support_text(self, verb: str = "") -> str:
        """`jax.lax.psend`: lowers on GPU (cuda, rocm) (rocm from 0.8.2), public from jax 0.7.0"""
        condition = f" {self.condition.text}" if self.condition else ""
        return f"`{self.qualname}`{condition}: {verb}{self.versions_text()}"


GPU = (Lowering("cuda"), Lowering("rocm"))
NO_TPU = tuple(Lowering(p) for p in PLATFORMS if p != "tpu")
CPU_ONLY = (Lowering("cpu"),)

_SHARDED = (
    'perm = [(0, 1)]\nspec = P("i")\n'
    "arg = jax.ShapeDtypeStruct((2 * N,), jnp.float32, sharding=NamedSharding(mesh, spec))\n"
    "args = (arg,)\n"
)


def sharded_probe(body: str) -> str:
    """A probe program running ``body(x)`` under shard_map over the two-device mesh."""
    return _SHARDED + body + "f = jax.jit(shard_map(body, mesh=mesh, in_specs=spec, out_specs=spec))\n"


def square_probe(call: str, n_args: int = 1) -> str:
    """A probe program applying ``call`` (over ``*a``) to 3x3 float32 matrices."""
    return (
        f"f = jax.jit(lambda *a: {call})\n"
        f"args = tuple(jax.ShapeDtypeStruct((3, 3), jnp.float32) for _ in range({n_args}))\n"
    )
