"""How the rules describe a platform-limited JAX API: plain data, no analysis.

Each rule module lists its own APIs with these types; the semantic layer finds
references to them, the probe cross-lowers their ``ProbeCase`` programs, and the
docs, hover and messages render them.
"""

from __future__ import annotations

from dataclasses import dataclass

from .platforms import PLATFORMS, Version, ordered, parse_version, set_text


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
class Member:
    """An enum member, ``cls.name``, spelled through any alias of the class (``SvdAlgorithm.QR``)."""

    cls: str
    name: str


@dataclass(frozen=True)
class Instance:
    """A value built right there by calling one of ``classes`` (``pltpu.CompilerParams(...)``)."""

    classes: tuple[str, ...]


@dataclass(frozen=True)
class ArrayRank:
    """An array that is visibly of rank ``rank``.

    Visible: a nested list or tuple literal, or one wrapped by a call of ``wrappers``
    (``jnp.array([[...]])``), a call of ``square`` (``jnp.eye(n)``: rank 2), or a call of
    ``shaped`` whose first argument or ``shape=`` is a tuple literal (``jnp.zeros((n, n))``).
    """

    rank: int
    wrappers: tuple[str, ...] = ()
    square: tuple[str, ...] = ()
    shaped: tuple[str, ...] = ()


@dataclass(frozen=True)
class ArrayDtype:
    """An array that is visibly of one of the dtypes ``dtypes`` (public names) or ``spelled``
    (as a string): built with ``dtype=`` one of them, cast with ``.astype(...)``, or made by
    calling the dtype (``jnp.float16(x)``)."""

    dtypes: tuple[str, ...]
    spelled: tuple[str, ...]


#: what an argument is compared with: a literal (``True``, ``"cudnn"``), an enum member,
#: an instance of a class, or an array of a visible rank or dtype
Value = str | bool | int | Member | Instance | ArrayRank | ArrayDtype


@dataclass(frozen=True)
class ArgCondition:
    """The API is platform-limited only when called with this argument.

    ``value`` is one value, a tuple of values (any of them), or None: the argument is
    passed with anything but ``None``. The argument is the keyword ``keyword`` or, when
    ``position`` is set, the positional argument at that index. With ``negated`` the
    condition holds unless the argument visibly has the value (an absent argument holds:
    ``pallas_call`` without ``interpret=True``). ``set_by`` names calls that give the
    argument's value to the code they govern where it is not passed (a ``with`` block
    around the use, a module-level call; semantics/settings_calls.py).
    """

    keyword: str
    value: Value | tuple[Value, ...] | None
    text: str
    position: int | None = None
    negated: bool = False
    #: calls that give the argument to the code they govern (``with force_tpu_interpret_mode():``)
    set_by: frozenset[str] = frozenset()

    @property
    def alternatives(self) -> tuple[Value, ...]:
        return self.value if isinstance(self.value, tuple) else () if self.value is None else (self.value,)

    @property
    def words(self) -> tuple[frozenset[str], ...]:
        """Word sets a module must spell (one word of each) for a use to show the condition.

        A keyword argument is spelled by its name; a literal, enum member or class by its
        text. None where nothing is necessary (a negated or positional condition, a rank).
        """
        if self.negated:
            return ()
        out: list[frozenset[str]] = [] if self.position is not None else [frozenset({self.keyword})]
        spelled: set[str] = set()
        for v in self.alternatives:
            if isinstance(v, Member):
                spelled.add(v.name)
            elif isinstance(v, Instance):
                spelled.update(c.rsplit(".", 1)[-1] for c in v.classes)
            elif isinstance(v, (str, bool, int)):
                spelled.add(str(v))
            elif isinstance(v, ArrayDtype):
                spelled.update(v.spelled)
            else:
                return tuple(out)
        if spelled:
            out.append(frozenset(spelled))
        return tuple(out)

    @property
    def names(self) -> frozenset[str]:
        """The public names whose uses the condition reads (enum classes, constructors)."""
        out: set[str] = set(self.set_by)
        for v in self.alternatives:
            if isinstance(v, Member):
                out.add(v.cls)
            elif isinstance(v, Instance):
                out.update(v.classes)
            elif isinstance(v, ArrayRank):
                out.update((*v.wrappers, *v.square, *v.shaped))
            elif isinstance(v, ArrayDtype):
                out.update(v.dtypes)
        return frozenset(out)


@dataclass(frozen=True)
class AllOf:
    """Several argument conditions that must all hold (``compiler_params=...`` without ``interpret=True``)."""

    parts: tuple[ArgCondition, ...]
    text: str

    @property
    def words(self) -> tuple[frozenset[str], ...]:
        return tuple(w for p in self.parts for w in p.words)

    @property
    def names(self) -> frozenset[str]:
        return frozenset().union(*(p.names for p in self.parts))


Condition = ArgCondition | AllOf


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
    #: run the program once per value, with ``VALUE`` bound to it (the values of a condition)
    values: tuple[str, ...] = ()
    #: other exception classes a platform or release fails with, besides the entry's error
    errors: tuple[str, ...] = ()
    #: error texts that are artifacts of cross-lowering from a CPU-only jaxlib: no verdict
    artifacts: tuple[str, ...] = ()

    def artifact(self, message: str) -> bool:
        """Whether a failure with this message says nothing about the platform."""
        return any(a in message for a in self.artifacts)


@dataclass(frozen=True)
class Api:
    """A public JAX API whose lowering is limited to some platforms."""

    qualname: str
    display: str
    lowers_on: tuple[Lowering, ...]
    error: str
    public_since: str | None = None
    #: the first JAX version without the API (or the argument, value or class its condition names)
    removed_in: str | None = None
    condition: Condition | None = None
    probe: ProbeCase | None = None
    note: str = ""
    #: the failure is raised while tracing (a surrounding ``try`` catches it), not when lowering
    trace_time: bool = False
    #: the JAX primitives whose platform-specific lowerings make the limit (``probe --scan``)
    primitives: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return self.qualname.rsplit(".", 1)[1]

    @property
    def key(self) -> str:
        """Unique in the catalog: the qualified name, with the condition when there is one."""
        return f"{self.qualname}[{self.condition.text}]" if self.condition else self.qualname

    @property
    def error_type(self) -> str:
        """The exception class the failure raises (``NotImplementedError``)."""
        return self.error.split(":", 1)[0]

    def platforms(self, jax_version: Version | None) -> frozenset[str]:
        """Platforms that lower this API in the given JAX version (None: newest known)."""
        return frozenset(low.platform for low in self.lowers_on if low.holds(jax_version))

    def exists(self, jax_version: Version | None) -> bool:
        """Whether the API (with what its condition names) is in the given JAX version (None: assume so)."""
        if jax_version is None:
            return True
        if self.public_since and jax_version < parse_version(self.public_since):
            return False
        return not self.removed_in or jax_version < parse_version(self.removed_in)

    def existence_text(self) -> str:
        """``public from 0.10.0``, ``removed in 0.7.2``, or both (empty: every version)."""
        parts = ([f"public from {self.public_since}"] if self.public_since else []) + (
            [f"removed in {self.removed_in}"] if self.removed_in else []
        )
        return ", ".join(parts)

    def absent_text(self, jax_version: Version) -> str:
        """``not in jax 0.9.1 (public from 0.10.0)``"""
        have = ".".join(map(str, jax_version))
        return f"not in jax {have} ({self.existence_text()})"

    def lowers_text(self, jax_version: Version | None) -> str:
        return set_text(self.platforms(jax_version))

    def version_note(self, failing: frozenset[str], jax_version: Version | None) -> str:
        """What a later JAX version changes for the ``failing`` platforms (empty: nothing): the
        first release lowering each of them, so that the upgrade fixing all of them is named.

        ``lowers on rocm from jax 0.8.2 and on cpu, tpu from jax 0.11.0; you have 0.7.0``
        """
        if jax_version is None:
            return ""
        first: dict[str, str] = {}
        for low in self.lowers_on:
            if low.platform in failing and low.since and jax_version < parse_version(low.since):
                known = first.get(low.platform)
                if known is None or parse_version(low.since) < parse_version(known):
                    first[low.platform] = low.since
        if not first:
            return ""
        by_version: dict[str, list[str]] = {}
        for platform in ordered(first):
            by_version.setdefault(first[platform], []).append(platform)
        spans = [
            f"on {', '.join(names)} from jax {since}"
            for since, names in sorted(by_version.items(), key=lambda item: parse_version(item[0]))
        ]
        have = ".".join(map(str, jax_version))
        return f"lowers {' and '.join(spans)}; you have {have}"

    @property
    def depends_on_version(self) -> bool:
        """Whether any fact about this API is bounded by a JAX version."""
        return bool(self.public_since or self.removed_in) or any(low.span_text for low in self.lowers_on)

    def versions_text(self) -> str:
        """GPU (cuda, rocm) (rocm from 0.8.2), public from jax 0.7.0

        An API no platform lowers in the newest release says since when: ``no platform from
        jax 0.11.2 (cuda before 0.11.2; rocm before 0.9.1, from 0.10.0 before 0.11.2)``.
        """
        spans: dict[str, list[str]] = {}
        for low in self.lowers_on:
            if low.span_text:
                spans.setdefault(low.platform, []).append(low.span_text)
        now = self.lowers_text(None)
        ends = [low.until for low in self.lowers_on if low.until]
        each = [f"{p} {', '.join(t)}" for p, t in spans.items()]
        if not self.platforms(None) and ends:
            now = f"no platform from jax {max(ends, key=parse_version)}"
            versions = f" ({'; '.join(each)})"
        else:
            versions = "".join(f" ({t})" for t in each)
        public = f", public from jax {self.public_since}" if self.public_since else ""
        removed = f", removed in jax {self.removed_in}" if self.removed_in else ""
        return f"{now}{versions}{public}{removed}"

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
