"""The pipeline: source -> semantic model -> rules -> suppression -> findings. No LSP, no I/O."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import cast

from .config import Settings
from .environment import Environment
from .fixes.layout import FixContext, apply_edits
from .model import Finding, Fix, Severity
from .platforms import Version, expand_targets, ordered
from .rules.base import CheckContext, Violation
from .rules.registry import APIS, RULES, WANTED
from .semantics.module import Module, Reference, Wanted, analyse
from .semantics.pins import conftest_pin
from .semantics.project_imports import renamed_terms, spelled
from .semantics.source import ChunkCache, FullView, SourceView, SparseModule, parse_recovering
from .semantics.text import Lines
from .suppression import unsuppressed
from .syntax import parses, spells_any


@dataclass
class Analysis:
    """The findings for one module version, with the violations they came from."""

    source: str
    path: str | None = None
    findings: list[Finding] = field(default_factory=list)
    violations: dict[int, Violation] = field(default_factory=dict)
    module: Module | None = None
    syntax_error: str | None = None
    syntax_error_line: int | None = None
    #: 1-based column of the syntax error
    syntax_error_col: int = 1
    targets: frozenset[str] = frozenset()
    jax_version: str | None = None
    version: Version | None = None
    note: str = ""
    _fix_context: FixContext | None = None
    _fixes: dict[int, list[Fix]] = field(default_factory=dict)

    @property
    def references(self) -> list[Reference]:
        return self.module.references if self.module is not None else []

    def reference_at(self, line: int, col: int) -> Reference | None:
        return self.module.reference_at(line, col) if self.module is not None else None

    def finding(self, finding_id: object) -> Finding | None:
        """The finding with this id, if this analysis reported it."""
        return next((f for f in self.findings if f.id == finding_id), None)

    def fixes(self, finding: Finding) -> list[Fix]:
        """Every fix the finding's rule offers here, preferred first (built once)."""
        done = self._fixes.get(finding.id)
        if done is None:
            v = self.violations.get(finding.id)
            done = []
            if v is not None:
                ctx = self.fix_context()
                for spec in v.rule.fixes:
                    fix = spec.build(ctx, v)
                    if fix is not None:
                        done.append(replace(fix, applicability=spec.applicability))
            self._fixes[finding.id] = done
        return done

    def has_autofix(self, finding: Finding) -> bool:
        """Whether the finding's rule has a fix fix-all applies (the fix itself is not built)."""
        v = self.violations.get(finding.id)
        return v is not None and v.rule.autofix is not None

    def autofix(self, finding: Finding) -> Fix | None:
        """The fix fix-all and `check --format json` apply: the rule's autofix kind."""
        v = self.violations.get(finding.id)
        if v is None or v.rule.autofix is None:
            return None
        return next((f for f in self.fixes(finding) if f.kind == v.rule.autofix), None)

    def applicable_fix(self, finding: Finding, unsafe: bool) -> Fix | None:
        """The fix `check --fix` applies: the rule's first safe fix (or unsafe, with ``unsafe``)."""
        allowed = ("safe", "unsafe") if unsafe else ("safe",)
        return next((f for f in self.fixes(finding) if f.applicability in allowed), None)

    def fix_context(self) -> FixContext:
        if self._fix_context is None:
            module = self.module
            tree = module.tree if module is not None else None
            same = module is not None and module.text.source == self.source
            view: SourceView | None = None
            if same and module is not None and isinstance(module.view, SparseModule):
                # a view of its own over the parsed chunks: fixes parse more without touching the analysis's
                view = SparseModule(module.text, ChunkCache(module.view.cache))
            elif same and module is not None and isinstance(module.view, FullView):
                view = module.view
            text = module.text if same and module is not None else None
            self._fix_context = FixContext(self.source, self.path, self.version, tree, view, text)
        return self._fix_context


#: the last name parts of the APIs the rules report
_SUBJECT_TERMS = WANTED.subject_terms()


class Engine:
    """Checks modules for one environment and one configuration."""

    def __init__(self, settings: Settings, environment: Environment, auto_backend: str | None = None) -> None:
        self.settings = settings
        self.environment = environment
        self.targets = expand_targets(settings.target_backends, auto_backend)
        self.version = environment.jax_version_tuple
        self.rules = [rule for rule in RULES if settings.enabled(rule.code)]
        #: the user's guard predicates (``guard-functions``): name -> platforms where true
        self.predicates: dict[str, frozenset[str]] = {}
        for item in settings.guard_functions:
            name, _, where = item.partition(":")
            self.predicates[name] = frozenset(expand_targets(tuple(where.split(",")), None))
        self.wanted = Wanted(
            WANTED.subjects, WANTED.context | frozenset(self.predicates), WANTED.gates, WANTED.lacking
        )
        #: where each API lowers in this JAX, for capability probes (an argument condition: unknown)
        self.capabilities = {q: a.platforms(self.version) for q, a in APIS.items() if a.condition is None}
        self._terms = tuple(sorted(self.wanted.subject_terms()))

    def check(
        self, source: str, path: str | None = None, *, sparse: bool = False, cache: ChunkCache | None = None
    ) -> Analysis:
        """Analyse one module.

        ``sparse`` parses only the top-level statements that can matter (the language
        server's mode, with ``cache`` kept per document); otherwise the whole module is
        parsed and syntax errors are reported (the CLI's mode). Both give the same findings.
        """
        # the document's cache holds its previous version, whose scans the untouched text reuses
        kept = cache if sparse and isinstance(cache, ChunkCache) else None
        text = Lines(source, kept.lines if kept is not None else None)
        try:
            return self._check(text, path, sparse, cache, kept)
        finally:
            # the analysis's burst of word lookups is over; a kept document need not hold the set
            text.drop_vocabulary()

    def _check(
        self, text: Lines, path: str | None, sparse: bool, cache: ChunkCache | None, kept: ChunkCache | None
    ) -> Analysis:
        source = text.source
        resolver = self.environment.resolver
        result = Analysis(
            source,
            path,
            targets=self.targets,
            jax_version=self.environment.jax_version,
            version=self.version,
            note="" if resolver.exact else resolver.reason,
        )
        if sparse and "\0" not in source:
            if not WANTED.might_be_mentioned(source) and not self._renamed_in_project(source, path):
                return result
            view = SparseModule(text, cache)
            if kept is not None:
                kept.lines = text
            module = self._analyse(view, text, path)
            violations = self._violations(module)
            if not module.stale:
                if cache is not None:
                    view.prune_cache()
                return self._report(result, module, violations)
        if not self.may_use(source) and not self._renamed_in_project(source, path) and parses(source):
            # a text prefilter before any parse: no subject's name, no use; a syntax check is left
            return result
        tree, error, error_line, error_col = parse_recovering(source)
        result.syntax_error, result.syntax_error_line, result.syntax_error_col = error, error_line, error_col
        if tree is None:
            return result
        if not WANTED.might_be_mentioned(source) and not self._renamed_in_project(source, path):
            result.module = Module(source, path, text, FullView(tree))
            return result
        module = self._analyse(FullView(tree), text, path)
        return self._report(result, module, self._violations(module))

    def may_use(self, source: str) -> bool:
        """Whether ``source`` can hold a use of a subject: it spells one's name as an identifier.

        Every use spells the last part of the API's name (``lax.psend``, ``L.psend``,
        ``from jax.lax import psend as ps``); only lines with such a word, and import
        aliases of such words, are ever resolved.
        """
        return spells_any(source, self._terms)

    @staticmethod
    def _renamed_in_project(source: str, path: str | None) -> bool:
        """Whether ``source`` spells a name another module of the project gives an API
        (``from mypkg.impl import cuda_attention``, where impl.py renames it)."""
        return bool(spelled(source, renamed_terms(path, source, _SUBJECT_TERMS)))

    def _analyse(self, view: SourceView, text: Lines, path: str | None) -> Module:
        resolver = self.environment.resolver
        pin = conftest_pin(path)
        return analyse(view, text, path, resolver, self.wanted, pin, self.predicates, self.capabilities)

    def _violations(self, module: Module) -> list[Violation]:
        ctx = CheckContext(module, self.targets, self.version)
        order = {rule.code: i for i, rule in enumerate(RULES)}
        found = [v for rule in self.rules for v in rule.check(ctx)]
        found.sort(key=lambda v: (v.ref.span.line, v.ref.span.col, order[v.rule.code]))
        return found

    def _report(self, result: Analysis, module: Module, violations: list[Violation]) -> Analysis:
        result.module = module
        result.violations = dict(enumerate(violations))
        findings = [self._finding(i, v) for i, v in result.violations.items()]
        result.findings = unsuppressed(findings, module.text)
        return result

    def _finding(self, finding_id: int, v: Violation) -> Finding:
        rule = v.rule
        message = rule.render(v, self.version)
        if v.ref.resolved_by != "jedi":
            message += f" ({self.environment.resolver.reason})"
        severity = cast(Severity, self.settings.severity.get(rule.code, rule.severity))
        return Finding(
            rule.code,
            message,
            severity,
            v.ref.span,
            v.api.qualname,
            tuple(ordered(v.failing)),
            v.related,
            v.ref.resolved_by,
            finding_id,
        )


@dataclass(frozen=True)
class FixRun:
    """The outcome of applying fixes until none is left: the text, what was applied, the last check."""

    source: str
    #: each applied fix with the finding it fixed, in order
    applied: tuple[tuple[Finding, Fix], ...]
    #: False when fixes were still left after ``limit`` rounds
    converged: bool
    #: the check of ``source``
    analysis: Analysis


def fix_until_done(
    source: str,
    check: Callable[[str], Analysis],
    pick: Callable[[Analysis, Finding], Fix | None],
    limit: int = 200,
) -> FixRun:
    """Apply the fix ``pick`` chooses for the first finding that has one, re-check, repeat."""
    applied: list[tuple[Finding, Fix]] = []
    analysis = check(source)
    for _ in range(limit):
        chosen = next(((f, fix) for f in analysis.findings if (fix := pick(analysis, f)) is not None), None)
        if chosen is None:
            return FixRun(source, tuple(applied), True, analysis)
        source = apply_edits(source, chosen[1].edits)
        applied.append(chosen)
        analysis = check(source)
    left = any(pick(analysis, f) is not None for f in analysis.findings)
    return FixRun(source, tuple(applied), not left, analysis)


def fix_all(source: str, check: Callable[[str], Analysis], limit: int = 200) -> str:
    """Apply the autofix to every fixable finding, re-checking after each."""
    return fix_until_done(source, check, Analysis.autofix, limit).source
