"""What a rule is: its code, docs, APIs, detection, fixes and examples, in one class.

A rule reads the semantic model of a module (``CheckContext.module``) and yields
``Violation``s; the engine turns them into findings, filters suppressions and
keeps each violation so that its fixes can be built on request. A rule's
examples are run as tests and printed as its documentation.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import ClassVar

from ..apis import AllOf, Api, ProbeCase
from ..fixes.guard import guard_fix, skip_test_fix
from ..fixes.layout import FixContext
from ..fixes.suppress import suppress_fix
from ..model import Applicability, Fix, Severity, Span
from ..platforms import Version, targets_text
from ..semantics.module import Module, Reference
from .arguments import condition_platforms

DOCS_URL = "https://github.com/jaxtarget/jaxtarget/blob/main/docs/rules.md"


@dataclass(frozen=True)
class Example:
    """A module the rule must report (INVALID: exactly the ``expect`` codes) or must not (VALID).

    For an INVALID example, ``fixed`` is the module after the fix of kind ``fix``
    (default: the rule's first applicable fix) of its first finding.
    """

    source: str
    expect: tuple[str, ...] = ()
    fixed: str | None = None
    fix: str | None = None
    targets: tuple[str, ...] = ("cpu", "tpu")
    path: str = "example.py"


@dataclass(frozen=True)
class CheckContext:
    """What a rule's detection reads: the module's facts, the targets and the JAX version."""

    module: Module
    targets: frozenset[str]
    version: Version | None

    def reachable(self, ref: Reference) -> frozenset[str]:
        """Targets on which the code at ``ref`` can run, given its guards."""
        return self.targets if ref.allowed is None else self.targets & ref.allowed

    def failing(self, ref: Reference, api: Api) -> frozenset[str]:
        """Reachable platforms that would have to lower ``api`` there and cannot."""
        if ref.inspected or ref.expects_error or (ref.caught if api.trace_time else ref.compiled_caught):
            return frozenset()
        if ref.traced_only and not api.trace_time:
            return frozenset()
        reachable = self.reachable(ref)
        if not api.trace_time:
            # platform_dependent traces every branch but lowers only the target's
            reachable &= ref.branch
        if api.condition is not None:
            reachable &= condition_platforms(self.module, ref, api.condition)
        if ref.pinned is not None:
            # pinned code runs on that platform, wherever it is reached from
            failing = ref.pinned - api.platforms(self.version) if reachable else frozenset()
        else:
            failing = reachable - api.platforms(self.version)
        # a re-export runs where its importers call it
        return failing if not failing or not self.module.reexported(ref) else frozenset()

    def absent(self, ref: Reference, api: Api) -> frozenset[str]:
        """Reachable targets on which a use of ``api``, absent from this JAX, would run: all of them.

        The call raises (``AttributeError``, ``TypeError``) when it is made, whatever the
        platform: a ``try`` catching that is a version fallback.
        """
        if ref.inspected or ref.expects_error or ref.absence_caught:
            return frozenset()
        reachable = self.reachable(ref)
        if not reachable or self.module.reexported(ref):
            return frozenset()
        if ref.pinned is not None:
            return ref.pinned
        if api.condition is not None:
            reachable &= condition_platforms(self.module, ref, api.condition)
        return reachable


@dataclass
class Violation:
    """One place a rule found, with what its message and fixes need."""

    rule: Rule
    ref: Reference
    api: Api
    failing: frozenset[str]
    #: references whose statements belong with this one (a guard takes them along)
    companions: tuple[Reference, ...] = ()
    related: tuple[tuple[Span, str], ...] = ()
    #: the API (or what its condition names) is not in the checked JAX: it fails everywhere
    absent: bool = False


FixBuilder = Callable[[FixContext, Violation], Fix | None]


@dataclass(frozen=True)
class FixSpec:
    """One kind of fix a rule offers: how to build it, what it does (for the docs), and how safe it is.

    ``applicability`` is ruff's: ``safe`` (behaviour kept: `check --fix` applies it),
    ``unsafe`` (behaviour changes somewhere: only with `--unsafe-fixes`) or
    ``display-only`` (offered in the editor, never applied by `--fix`).
    """

    kind: str
    build: FixBuilder
    doc: str
    applicability: Applicability


class Rule:
    """A diagnostic code with its documentation, detection, fixes and examples."""

    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    message: ClassVar[str]
    why: ClassVar[str]
    severity: ClassVar[Severity]
    apis: ClassVar[tuple[Api, ...]]
    fixes: ClassVar[tuple[FixSpec, ...]]
    #: the fix kind that fix-all and `check --format json` apply (None: none)
    autofix: ClassVar[str | None] = None
    #: public names, other than its APIs, whose uses the rule reads (wrappers, ...)
    context: ClassVar[frozenset[str]] = frozenset()
    #: a paragraph hover adds for this rule's APIs
    hover_note: ClassVar[str] = ""
    #: programs the probe runs for this rule, by case id (the first is the headline)
    probe_cases: ClassVar[tuple[tuple[str, ProbeCase], ...]] = ()
    valid: ClassVar[tuple[Example, ...]]
    invalid: ClassVar[tuple[Example, ...]]

    @property
    def url(self) -> str:
        return f"{DOCS_URL}#{self.code.lower()}-{self.name}"

    def check(self, ctx: CheckContext) -> Iterator[Violation]:
        raise NotImplementedError

    def render(self, v: Violation, version: Version | None) -> str:
        """The finding's message, from the rule's template (for an absent API: what it is absent from)."""
        api = v.api
        if v.absent and version is not None:
            condition = f" {api.condition.text}" if api.condition else ""
            return (
                f"`{api.display}`{condition} is {api.absent_text(version)}; "
                f"the call fails on every platform ({targets_text(v.failing)} here)"
            )
        message = self.message.format(
            api=api.display,
            lowers=api.lowers_text(version),
            failing=targets_text(v.failing),
            error=api.error.split(":", 1)[0],
            condition=f" {api.condition.text}" if api.condition else "",
        )
        if not api.platforms(version):
            message = message.replace(" only lowers on no platform", " lowers on no platform")
        note = api.version_note(v.failing, version)
        return f"{message} ({note})" if note else message

    def references(self, ctx: CheckContext) -> Iterator[tuple[Reference, Api]]:
        """The module's references to this rule's APIs, with each entry whose condition holds there."""
        by_name: dict[str, list[Api]] = {}
        for api in self.apis:
            by_name.setdefault(api.qualname, []).append(api)
        for ref in ctx.module.references:
            for api in by_name.get(ref.qualname, ()):
                if api.condition is not None and not condition_platforms(ctx.module, ref, api.condition):
                    continue
                yield ref, api

    def limited_calls(self, ctx: CheckContext) -> Iterator[Violation]:
        """References to this rule's APIs that a reachable target cannot lower.

        Where several entries of one API hold at a use, an entry another one refines is
        set aside on the platforms where that one holds (``pallas_call`` with Triton
        ``compiler_params`` is not the default GPU backend's case, but where the parameters
        are given only on GPUs the default entry stands elsewhere), and of the rest the one
        that fails on the most targets is reported (``eig`` on tpu with
        ``implementation=MAGMA``, which fails on cpu too).
        """
        holding: dict[int, list[tuple[Reference, Api]]] = {}
        for ref, api in self.references(ctx):
            holding.setdefault(id(ref), []).append((ref, api))
        for entries in holding.values():
            # an entry this JAX does not have (tridiagonal_solve's perturb_singular before
            # 0.10.0): the call fails on every platform, which says more than any lowering
            missing = [(ref, api) for ref, api in entries if not api.exists(ctx.version)]
            if missing:
                ref, api = missing[0]
                everywhere = ctx.absent(ref, api)
                if everywhere:
                    yield Violation(self, ref, api, everywhere, absent=True)
                continue
            best: Violation | None = None
            for ref, api in entries:
                failing = ctx.failing(ref, api)
                for _, other in entries:
                    if other.condition is not None and _refines(other, api):
                        # where the narrower entry holds it says more; elsewhere this one stands
                        # (`compiler_params=plgpu.CompilerParams() if on_gpu else None`)
                        failing -= condition_platforms(ctx.module, ref, other.condition)
                # the most failing targets; on a tie the narrower entry (it says more)
                rank = (len(failing), -len(api.platforms(ctx.version)))
                if failing and (
                    best is None or rank > (len(best.failing), -len(best.api.platforms(ctx.version)))
                ):
                    best = Violation(self, ref, api, failing)
            if best is not None:
                yield best


def _refines(narrow: Api, broad: Api) -> bool:
    """Whether ``narrow``'s condition adds to ``broad``'s: where both hold, it says more."""
    if narrow is broad or narrow.condition is None:
        return False
    if broad.condition is None:
        return True
    return isinstance(narrow.condition, AllOf) and broad.condition in narrow.condition.parts


# ---------------------------------------------------------------- fixes every rule may offer


def _guard(ctx: FixContext, v: Violation) -> Fix | None:
    # no backend runs an API the installed JAX lacks: guarding by backend fixes nothing
    return None if v.absent else guard_fix(ctx, v.rule.code, v)


def _skip_test(ctx: FixContext, v: Violation) -> Fix | None:
    return None if v.absent else skip_test_fix(ctx, v.rule.code, v)


def _suppress(ctx: FixContext, v: Violation) -> Fix | None:
    return suppress_fix(ctx, v.rule.code, v.ref.span)


GUARD = FixSpec(
    "guard",
    _guard,
    "wrap the statement in `if <backend test>:` whose `else` raises `NotImplementedError` "
    "naming the backends the API needs",
    # on a backend that lowers the API nothing changes; elsewhere the same NotImplementedError
    # is raised, earlier and naming what the API needs
    "safe",
)
SKIP_TEST = FixSpec(
    "skip-test",
    _skip_test,
    "in a test file, mark the test function `@pytest.mark.skipif(not <backend test>, ...)`",
    # a test that failed on other backends is skipped there instead
    "unsafe",
)
SUPPRESS = FixSpec(
    "suppress",
    _suppress,
    "add `# jaxtarget: ignore[CODE]` to the line",
    # silencing a finding is a decision, never taken by `--fix`
    "display-only",
)
