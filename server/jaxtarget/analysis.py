"""The analysis engine: source text in, findings out. No LSP, no I/O.

Pipeline for one module:

1. ``ast.parse`` (with line-by-line recovery for half-typed code).
2. A cheap text pass finds the lines that mention any catalog name; only
   the statements covering those lines are walked.
3. For each candidate reference, Python's scope rules find the statement that
   binds its root name; the binding plus the dotted spelling is resolved by
   jedi in the user's environment (cached), or by full-file jedi when the
   binding is ambiguous, or from imports alone when jax is absent.
4. Guards, decorators, shard_map context and suppressions decide which
   resolved references become findings.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import cast

from . import catalog
from .catalog import APIS, RULES_BY_CODE, SHARD_MAP_NAMES, Api, Severity
from .config import Settings
from .parsing import ChunkCache, Lines, SparseModule, TokenFacts, parse_recovering
from .resolution import Binding, Environment, JediResolver, Query
from .targets import GPU_PLATFORMS, PLATFORMS, expand_targets, ordered

# ---------------------------------------------------------------- results


@dataclass(frozen=True)
class Span:
    """1-based lines, 0-based columns counted in code points."""

    line: int
    col: int
    end_line: int
    end_col: int


@dataclass(frozen=True)
class Finding:
    code: str
    message: str
    severity: Severity
    span: Span
    api: str
    failing: tuple[str, ...] = ()
    related: tuple[tuple[Span, str], ...] = ()
    resolved_by: str = "jedi"

    @property
    def rule(self) -> catalog.Rule:
        return RULES_BY_CODE[self.code]


@dataclass
class Reference:
    """A use of a catalog API (or shard_map) that resolution confirmed."""

    qualname: str
    span: Span
    node: ast.expr
    ancestors: list[ast.AST]
    call: ast.Call | None
    allowed: frozenset[str] | None
    resolved_by: str
    partner: Reference | None = None

    @property
    def api(self) -> Api | None:
        return APIS.get(self.qualname)

    @property
    def statement(self) -> ast.stmt:
        for node in reversed(self.ancestors):
            if isinstance(node, ast.stmt):
                return node
        raise LookupError("reference outside a statement")

    @property
    def function(self) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        for node in reversed(self.ancestors):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return node
        return None


@dataclass
class Analysis:
    source: str
    findings: list[Finding] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    syntax_error: str | None = None
    syntax_error_line: int | None = None
    tree: ast.Module | None = None
    targets: frozenset[str] = frozenset()
    jax_version: str | None = None
    note: str = ""

    def reference_at(self, line: int, col: int) -> Reference | None:
        for ref in self.references:
            s = ref.span
            if s.line == line and s.col <= col <= s.end_col:
                return ref
        return None


# ---------------------------------------------------------------- text helpers


def lines_with_words(text: Lines, words: Iterable[str]) -> list[int]:
    """Lines on which any of ``words`` occurs as a whole identifier."""
    source = text.source
    size = len(source)
    found: set[int] = set()
    for word in words:
        n = len(word)
        i = source.find(word)
        while i != -1:
            before = source[i - 1] if i else " "
            after = source[i + n] if i + n < size else " "
            if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                found.add(text.line_of(i))
            i = source.find(word, i + n)
    return sorted(found)


_API_NAMES = frozenset(api.name for api in APIS.values())
_SETUP_WORDS = (
    "import",
    "has_gpu_backend",
    "is_gpu_backend",
    "gpu_available",
    "default_backend",
    "platform",
    "pytestmark",
)

# ---------------------------------------------------------------- bindings

_SCOPES = (
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.Lambda,
    ast.ClassDef,
    ast.ListComp,
    ast.SetComp,
    ast.DictComp,
    ast.GeneratorExp,
)
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)


@dataclass(frozen=True)
class _Other:
    """A binding that is not an import (assignment, def, parameter, ...)."""

    line: int


_Bind = Binding | _Other


def _import_bindings(node: ast.Import | ast.ImportFrom, name: str) -> list[_Bind]:
    out: list[_Bind] = []
    if isinstance(node, ast.Import):
        for alias in node.names:
            if alias.asname == name:
                out.append(Binding("import-as", alias.name, None, alias.asname))
            elif alias.asname is None and alias.name.split(".")[0] == name:
                out.append(Binding("import", alias.name, None, None))
    else:
        module = node.module or ""
        for alias in node.names:
            if alias.name == "*":
                continue
            if (alias.asname or alias.name) == name:
                out.append(Binding("from", module, alias.name, alias.asname, node.level))
    return out


def _target_names(target: ast.AST) -> Iterator[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, (ast.Tuple, ast.List)):
        for elt in target.elts:
            yield from _target_names(elt)
    elif isinstance(target, ast.Starred):
        yield from _target_names(target.value)


class _ScopeIndex:
    """Answers "what binds name N in scope S" for the few names that matter."""

    def __init__(self, tree: ast.Module, lines_of: dict[str, list[int]]) -> None:
        self.tree = tree
        self.lines_of = lines_of
        self._cache: dict[tuple[int, str], tuple[list[_Bind], bool]] = {}
        self._stars: list[Binding] | None = None

    def bindings(self, scope: ast.AST, name: str) -> tuple[list[_Bind], bool]:
        """Bindings of ``name`` directly in ``scope``, and whether it is declared global."""
        key = (id(scope), name)
        hit = self._cache.get(key)
        if hit is not None:
            return hit
        # a scope's bindings are a property of its (immutable, cached) nodes alone
        memo: dict[str, tuple[list[_Bind], bool]] | None = None
        if not isinstance(scope, ast.Module):
            memo = scope.__dict__.setdefault("_jaxtarget_bindings", {})
            if name in memo:
                return memo[name]
        result = self._scan(scope, name)
        self._cache[key] = result
        if memo is not None:
            memo[name] = result
        return result

    def _scan(self, scope: ast.AST, name: str) -> tuple[list[_Bind], bool]:
        found: list[_Bind] = []
        is_global = False
        lines = self.lines_of.get(name, [])
        if isinstance(scope, _FUNCS):
            args = scope.args
            for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg):
                if a is not None and a.arg == name:
                    found.append(_Other(a.lineno))
        if isinstance(scope, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            for gen in scope.generators:
                if name in _target_names(gen.target):
                    found.append(_Other(gen.target.lineno))
            return found, False
        body: list[ast.stmt] = [] if isinstance(scope, ast.Lambda) else scope.body  # type: ignore[attr-defined]
        stack: list[ast.AST] = [s for s in body if _covers(s, lines)]
        while stack:
            node = stack.pop()
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                found.extend(_import_bindings(node, name))
                continue
            if isinstance(node, (ast.Global, ast.Nonlocal)):
                if name in node.names and isinstance(node, ast.Global):
                    is_global = True
                continue
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                if node.name == name:
                    found.append(_Other(node.lineno))
                # decorators and defaults are evaluated in this scope
                for sub in (*node.decorator_list,):
                    stack.append(sub)
                continue
            if isinstance(node, (ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
                continue
            if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
                if node.id == name:
                    found.append(_Other(node.lineno))
                continue
            if isinstance(node, ast.ExceptHandler) and node.name == name:
                found.append(_Other(node.lineno))
            if isinstance(node, (ast.MatchAs, ast.MatchStar)) and node.name == name:
                found.append(_Other(node.lineno))
            for child in ast.iter_child_nodes(node):
                if not hasattr(child, "lineno") or _covers(child, lines):
                    stack.append(child)
        return found, is_global

    def star_imports(self) -> list[Binding]:
        if self._stars is None:
            self._stars = [
                Binding("star", node.module or "", None, None, node.level)
                for node in (ast.walk(self.tree) if self.lines_of.get("*") else ())
                if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names)
            ]
        return self._stars


def _covers(node: ast.AST, lines: Sequence[int]) -> bool:
    start = getattr(node, "lineno", None)
    if start is None:
        return True
    decorators = getattr(node, "decorator_list", None)
    if decorators:
        start = min(start, *(d.lineno for d in decorators))
    end = getattr(node, "end_lineno", start) or start
    i = bisect.bisect_left(lines, start)
    return i < len(lines) and lines[i] <= end


# ---------------------------------------------------------------- guards

_GUARD_FUNCS = frozenset({"has_gpu_backend", "is_gpu_backend", "gpu_available"})
_TERMINATING_CALLS = frozenset({"skip", "exit", "fail"})


def _terminal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _platforms_of(value: str) -> frozenset[str] | None:
    v = value.lower()
    if v == "gpu":
        return GPU_PLATFORMS
    if v in PLATFORMS:
        return frozenset({v})
    return frozenset()


def _is_backend_expr(node: ast.AST) -> bool:
    if isinstance(node, ast.Call) and _terminal(node.func) in ("default_backend",):
        return True
    return bool(isinstance(node, ast.Attribute) and node.attr == "platform")


def _string_set(node: ast.AST) -> frozenset[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return _platforms_of(node.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        out: set[str] = set()
        for elt in node.elts:
            if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
                return None
            out |= _platforms_of(elt.value) or frozenset()
        return frozenset(out)
    return None


_ALL = frozenset(PLATFORMS)
Sets = tuple[frozenset[str] | None, frozenset[str] | None]


def guard_sets(test: ast.AST) -> Sets:
    """Platforms on which the true branch / the false branch of ``test`` can run."""
    if isinstance(test, ast.Call) and _terminal(test.func) in _GUARD_FUNCS and not test.args:
        return GPU_PLATFORMS, _ALL - GPU_PLATFORMS
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        body, orelse = guard_sets(test.operand)
        return orelse, body
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if _is_backend_expr(right) and isinstance(op, (ast.Eq, ast.NotEq)):
            left, right = right, left
        if _is_backend_expr(left):
            values = _string_set(right)
            if values is not None:
                if isinstance(op, (ast.Eq, ast.In)):
                    return values, _ALL - values if len(values) <= 1 or isinstance(op, ast.In) else None
                if isinstance(op, (ast.NotEq, ast.NotIn)):
                    return _ALL - values, values
    if isinstance(test, ast.BoolOp):
        parts = [guard_sets(v) for v in test.values]
        bodies = [b for b, _ in parts]
        elses = [e for _, e in parts]
        if isinstance(test.op, ast.And):
            known = [b for b in bodies if b is not None]
            body = frozenset.intersection(*known) if known else None
            orelse = frozenset.union(*elses) if all(e is not None for e in elses) else None  # type: ignore[arg-type]
            return body, orelse
        known_e = [e for e in elses if e is not None]
        orelse = frozenset.intersection(*known_e) if known_e else None
        body = frozenset.union(*bodies) if all(b is not None for b in bodies) else None  # type: ignore[arg-type]
        return body, orelse
    return None, None


def _restrict(allowed: frozenset[str] | None, more: frozenset[str] | None) -> frozenset[str] | None:
    if more is None:
        return allowed
    return more if allowed is None else allowed & more


def _terminates(body: Sequence[ast.stmt]) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    return (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Call)
        and _terminal(last.value.func) in _TERMINATING_CALLS
    )


def _early_exit(stmts: Sequence[ast.stmt], upto: ast.stmt) -> frozenset[str] | None:
    """Platforms that still run ``upto`` after earlier guard-and-exit statements."""
    allowed: frozenset[str] | None = None
    for stmt in stmts:
        if stmt is upto:
            break
        if isinstance(stmt, ast.If):
            body, orelse = guard_sets(stmt.test)
            if _terminates(stmt.body) and (not stmt.orelse or not _terminates(stmt.orelse)):
                allowed = _restrict(allowed, orelse)
            elif stmt.orelse and _terminates(stmt.orelse):
                allowed = _restrict(allowed, body)
        elif isinstance(stmt, ast.Assert):
            allowed = _restrict(allowed, guard_sets(stmt.test)[0])
    return allowed


def _decorator_sets(decorators: Sequence[ast.expr]) -> frozenset[str] | None:
    allowed: frozenset[str] | None = None
    for dec in decorators:
        if not isinstance(dec, ast.Call) or not dec.args:
            continue
        name = _terminal(dec.func)
        body, orelse = guard_sets(dec.args[0])
        if name in ("skipif", "skipIf"):
            allowed = _restrict(allowed, orelse)
        elif name == "skipUnless":
            allowed = _restrict(allowed, body)
    return allowed


def _block_of(parent: ast.AST, child: ast.AST) -> list[ast.stmt] | None:
    for name in ("body", "orelse", "finalbody", "handlers"):
        block = getattr(parent, name, None)
        if isinstance(block, list) and any(c is child for c in block):
            return block
    if isinstance(parent, ast.Match):
        return None
    return None


def allowed_platforms(ancestors: Sequence[ast.AST], node: ast.AST) -> frozenset[str] | None:
    """Which platforms can reach ``node``, given the guards around it (None: any)."""
    allowed: frozenset[str] | None = None
    chain = [*ancestors, node]
    for parent, child in itertools.pairwise(chain):
        if isinstance(parent, ast.If):
            body, orelse = guard_sets(parent.test)
            if any(c is child for c in parent.body):
                allowed = _restrict(allowed, body)
            elif any(c is child for c in parent.orelse):
                allowed = _restrict(allowed, orelse)
        elif isinstance(parent, ast.IfExp):
            body, orelse = guard_sets(parent.test)
            if parent.body is child:
                allowed = _restrict(allowed, body)
            elif parent.orelse is child:
                allowed = _restrict(allowed, orelse)
        elif isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
            for value in parent.values:
                if value is child:
                    break
                allowed = _restrict(allowed, guard_sets(value)[0])
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
            c is child for c in parent.body
        ):
            allowed = _restrict(allowed, _decorator_sets(parent.decorator_list))
        block = _block_of(parent, child)
        if block is not None and isinstance(child, ast.stmt):
            allowed = _restrict(allowed, _early_exit(block, child))
    return allowed


def _module_pytestmark(tree: ast.Module) -> frozenset[str] | None:
    allowed: frozenset[str] | None = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets
        ):
            marks = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
            allowed = _restrict(allowed, _decorator_sets(marks))
    return allowed


# ---------------------------------------------------------------- candidates


@dataclass
class _Candidate:
    node: ast.Name | ast.Attribute
    root: str
    dotted: str
    ancestors: list[ast.AST]
    line: int
    byte_col: int
    end_byte_col: int


def _dotted(node: ast.AST) -> tuple[str, str] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    parts.reverse()
    return node.id, ".".join(parts)


_CandidateTail = tuple[ast.Name | ast.Attribute, str, str, list[ast.AST], int, int, int]


def _collect(tree: ast.Module, lines: Sequence[int], names: frozenset[str]) -> Iterator[_Candidate]:
    """Loads of a candidate name (terminal attribute or bare name) on the given lines.

    Results are memoised on each top-level statement (its nodes are immutable and
    cached with its chunk), keyed by the candidate names.
    """
    for stmt in tree.body:
        if not _covers(stmt, lines):
            continue
        memo = stmt.__dict__.get("_jaxtarget_candidates")
        if memo is None or memo[0] != names:
            memo = (names, list(_collect_in(stmt, names)))
            stmt.__dict__["_jaxtarget_candidates"] = memo
        for node, root, dotted, ancestors, line, col, end in memo[1]:
            yield _Candidate(node, root, dotted, [tree, *ancestors], line, col, end)


def _collect_in(stmt: ast.stmt, names: frozenset[str]) -> Iterator[_CandidateTail]:
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(stmt, [])]
    while stack:
        node, ancestors = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        target: ast.Name | ast.Attribute | None = None
        if (isinstance(node, ast.Attribute) and node.attr in names) or (
            isinstance(node, ast.Name) and node.id in names
        ):
            target = node
        if target is not None and isinstance(target.ctx, ast.Load):
            spelled = _dotted(target)
            end_line = target.end_lineno or target.lineno
            end_col = target.end_col_offset or 0
            terminal = target.attr if isinstance(target, ast.Attribute) else target.id
            if spelled is not None:
                start = end_col - len(terminal.encode("utf-8"))
                yield (target, spelled[0], spelled[1], ancestors, end_line, start, end_col)
            if isinstance(target, ast.Attribute):
                stack.append((target.value, [*ancestors, target]))
            continue
        child_anc = [*ancestors, node]
        for child in reversed(list(ast.iter_child_nodes(node))):
            stack.append((child, child_anc))


# ---------------------------------------------------------------- engine


@dataclass
class _Resolved:
    cand: _Candidate
    qualname: str
    by: str


class Engine:
    """Checks modules for one environment and one configuration."""

    def __init__(self, settings: Settings, environment: Environment, auto_backend: str | None = None) -> None:
        self.settings = settings
        self.environment = environment
        self.targets = expand_targets(settings.target_backends, auto_backend)
        self.version = environment.jax_version_tuple

    # -- public

    def check(
        self, source: str, path: str | None = None, *, sparse: bool = False, cache: ChunkCache | None = None
    ) -> Analysis:
        """Analyse one module.

        ``sparse`` parses only the top-level statements that can matter (the language
        server's mode, with ``cache`` kept per document); otherwise the whole module is
        parsed and syntax errors are reported (the CLI's mode). Both give the same findings.
        """
        result = Analysis(source, targets=self.targets, jax_version=self.environment.jax_version)
        resolver = self.environment.resolver
        if not isinstance(resolver, JediResolver):
            result.note = resolver.reason
        text = Lines(source)
        if sparse and "\0" not in source:
            if not _might_mention(source):
                return result
            view = SparseModule(text, cache)
            refs, findings = self._analyse(view, source, text, path)
            if not (view.failed or view.replaced):
                if cache is not None:
                    view.prune_cache()
                result.tree, result.references, result.findings = view.module(), refs, findings
                return result
        tree, error, error_line = parse_recovering(source)
        result.tree, result.syntax_error, result.syntax_error_line = tree, error, error_line
        if tree is None or not _might_mention(source):
            return result
        result.references, result.findings = self._analyse(_FullView(tree), source, text, path)
        return result

    # -- steps

    def _analyse(
        self, view: SparseModule | _FullView, source: str, text: Lines, path: str | None
    ) -> tuple[list[Reference], list[Finding]]:
        setup = lines_with_words(text, _SETUP_WORDS)
        if isinstance(view, SparseModule):
            setup = [
                ln for ln in setup if ln in view or "import" in text.text(ln) or not _is_definition(view, ln)
            ]
        view.ensure(setup)
        aliases = _aliases(view.module(), source, text)
        names = frozenset(_API_NAMES | aliases)
        lines = lines_with_words(text, names)
        if not lines:
            return [], []
        view.ensure(lines)
        cands = list(_collect(view.module(), lines, names))
        roots = {c.root for c in cands}
        lines_of: dict[str, list[int]] = {r: lines_with_words(text, (r,)) for r in roots}
        if isinstance(view, SparseModule):
            binding: list[int] = []
            asked: set[tuple[int, str]] = set()
            for r in roots:
                for ln in lines_of[r]:
                    key = (view.chunk_index(ln), r)
                    if ln in view or key in asked:
                        continue
                    asked.add(key)
                    if _may_bind_module_name(view, ln, r):
                        binding.append(ln)
            if view.ensure(binding):
                cands = list(_collect(view.module(), lines, names))
        if re.search(r"import\s*\*", source):
            lines_of["*"] = [1]
        tree = view.module()
        resolved = self._resolve(cands, tree, lines_of, source, text, path)
        refs = self._references(resolved, text, tree)
        return refs, self._findings(refs, view, text, path)

    def _resolve(
        self,
        cands: list[_Candidate],
        tree: ast.Module,
        lines_of: dict[str, list[int]],
        source: str,
        text: Lines,
        path: str | None,
    ) -> list[_Resolved]:
        index = _ScopeIndex(tree, lines_of)
        resolver = self.environment.resolver
        queries: list[tuple[_Candidate, Query]] = []
        full: list[_Candidate] = []
        for cand in cands:
            binding = _binding_for(cand, index, tree)
            if binding is None:
                continue
            if binding == "ambiguous" or (isinstance(binding, Binding) and binding.level):
                full.append(cand)
            elif isinstance(binding, Binding):
                queries.append((cand, Query(binding, cand.dotted)))
        out: list[_Resolved] = []
        by = "jedi" if resolver.exact else "imports"
        for (cand, _), name in zip(queries, resolver.resolve([q for _, q in queries]), strict=False):
            if name is not None:
                out.append(_Resolved(cand, name, by))
        if full:
            if isinstance(resolver, JediResolver):
                spots = [(c.line, text.char_col(c.line, c.byte_col)) for c in full]
                for cand, name in zip(full, resolver.resolve_in_file(source, path, spots), strict=False):
                    if name is not None:
                        out.append(_Resolved(cand, name, "jedi"))
            else:
                for cand in full:
                    name = _static_ambiguous(cand, index, tree)
                    if name is not None:
                        out.append(_Resolved(cand, name, "imports"))
        out.sort(key=lambda r: (r.cand.line, r.cand.byte_col))
        return out

    def _references(self, resolved: list[_Resolved], text: Lines, tree: ast.Module) -> list[Reference]:
        refs: list[Reference] = []
        module_allowed = _module_pytestmark(tree) if "pytestmark" in text.source else None
        for r in resolved:
            c = r.cand
            col = text.char_col(c.line, c.byte_col)
            end = text.char_col(c.line, c.end_byte_col)
            parent = c.ancestors[-1] if c.ancestors else None
            call = parent if isinstance(parent, ast.Call) and parent.func is c.node else None
            allowed = _restrict(module_allowed, allowed_platforms(c.ancestors, c.node))
            refs.append(
                Reference(
                    r.qualname,
                    Span(c.line, col, c.line, end),
                    c.node,
                    c.ancestors,
                    call,
                    allowed,
                    r.by,
                )
            )
        _pair(refs)
        return refs

    def _findings(
        self, refs: list[Reference], view: SparseModule | _FullView, text: Lines, path: str | None
    ) -> list[Finding]:
        settings = self.settings
        out: list[Finding] = []
        sharded: _ShardedFunctions | None = None
        for ref in refs:
            api = ref.api
            if api is None:
                continue
            if api.condition is not None and not _condition_holds(ref.call, api.condition):
                continue
            effective = self.targets if ref.allowed is None else self.targets & ref.allowed
            failing = effective - api.platforms(self.version)
            related = (
                ((ref.partner.span, f"paired `{ref.partner.api.display}`"),)
                if ref.partner is not None and ref.partner.api is not None
                else ()
            )
            if failing and settings.enabled(api.rule):
                out.append(self._finding(api.rule, api, ref, failing, related))
            if api.manual_sharding and ref.call is not None and settings.enabled("JT002"):
                if sharded is None:
                    sharded = _ShardedFunctions(view, text)
                if not sharded.covers(ref):
                    out.append(self._finding("JT002", api, ref, frozenset(), related))
        return _suppress(out, text)

    def _finding(
        self,
        code: str,
        api: Api,
        ref: Reference,
        failing: frozenset[str],
        related: tuple[tuple[Span, str], ...],
    ) -> Finding:
        rule = RULES_BY_CODE[code]
        names = ordered(failing)
        failing_text = (
            f"target '{names[0]}'" if len(names) == 1 else "targets " + ", ".join(f"'{n}'" for n in names)
        )
        error = api.error.split(":", 1)[0]
        message = rule.message.format(
            api=api.display,
            lowers=api.lowers_text(self.version),
            failing=failing_text,
            error=error,
            condition=f" {api.condition.text}" if api.condition else "",
        )
        if ref.resolved_by != "jedi":
            message += f" ({self.environment.resolver.reason})"
        severity = cast(Severity, self.settings.severity.get(code, rule.severity))
        return Finding(
            code,
            message,
            severity,
            ref.span,
            api.qualname,
            tuple(names),
            related,
            ref.resolved_by,
        )


class _FullView:
    """The whole-module counterpart of SparseModule: everything is parsed already."""

    failed = False
    replaced = False

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree

    def ensure(self, lines: Iterable[int]) -> bool:
        return False

    def __contains__(self, line: int) -> bool:
        return True

    def module(self) -> ast.Module:
        return self.tree


_DEF_RE = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)", re.M)


def _is_definition(view: SparseModule, line: int) -> bool:
    return view.chunk_first_line(line).startswith(("def ", "async ", "class ", "@"))


def _may_bind_module_name(view: SparseModule, line: int, name: str) -> bool:
    """Whether the top-level statement holding ``line`` can bind ``name`` in module scope.

    A def/class statement binds only its own name, unless its body declares the
    name global; every other statement might bind anything it mentions.
    """
    first = view.chunk_first_line(line)
    if not first.startswith(("def ", "async ", "class ", "@")):
        return True
    m = _DEF_RE.match(first) if not first.startswith("@") else _DEF_RE.search(view.chunk_text(line))
    if m is None or m.group(1) == name:
        return True
    chunk = view.chunk_text(line)
    return "global" in chunk and re.search(rf"\bglobal\b[^\n]*\b{re.escape(name)}\b", chunk) is not None


def _might_mention(source: str) -> bool:
    return any(name in source for name in _API_NAMES) or "import *" in source or " as " in source


def _lines_matching(source: str, text: Lines, pattern: re.Pattern[str]) -> list[int]:
    found: list[int] = []
    last = -1
    for m in pattern.finditer(source):
        line = text.line_of(m.start())
        if line != last:
            found.append(line)
            last = line
    return found


def _aliases(tree: ast.Module, source: str, text: Lines) -> set[str]:
    """Local names that import-from statements give to catalog names."""
    out: set[str] = set()
    if " as " not in source:
        return out
    lines = lines_with_words(text, ("import",))
    stack: list[ast.AST] = [s for s in tree.body if _covers(s, lines)]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.asname and alias.name in _API_NAMES:
                    out.add(alias.asname)
            continue
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.stmt) and _covers(child, lines):
                stack.append(child)
    return out


def _scopes_of(ancestors: Sequence[ast.AST], node: ast.AST, tree: ast.Module) -> list[ast.AST]:
    """Scopes in which a load at ``node`` looks names up, innermost first."""
    scopes: list[ast.AST] = []
    chain = [*ancestors, node]
    for parent, child in itertools.pairwise(chain):
        if isinstance(parent, _SCOPES):
            # decorators, defaults, bases and the first comprehension iterator belong outside
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and not any(
                child is s for s in parent.body
            ):
                continue
            if isinstance(parent, ast.Lambda) and child is not parent.body:
                continue
            if isinstance(parent, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)) and (
                parent.generators and child is parent.generators[0]
            ):
                continue
            scopes.append(parent)
    scopes.reverse()
    # class scopes are visible only to code directly in their body
    visible = [s for i, s in enumerate(scopes) if not isinstance(s, ast.ClassDef) or i == 0]
    return [*visible, tree]


def _binding_for(cand: _Candidate, index: _ScopeIndex, tree: ast.Module) -> Binding | str | None:
    for scope in _scopes_of(cand.ancestors, cand.node, tree):
        binds, is_global = index.bindings(scope, cand.root)
        if is_global:
            binds, _ = index.bindings(tree, cand.root)
            scope = tree
        if not binds:
            if scope is tree:
                stars = index.star_imports()
                if len(stars) == 1:
                    return stars[0]
                if len(stars) > 1:
                    return "ambiguous"
            continue
        imports = [b for b in binds if isinstance(b, Binding)]
        if not imports:
            return None
        if len(imports) == len(binds) and len({b.qualify(cand.dotted) for b in imports}) == 1:
            return imports[0]
        return "ambiguous"
    return None


def _static_ambiguous(cand: _Candidate, index: _ScopeIndex, tree: ast.Module) -> str | None:
    for scope in _scopes_of(cand.ancestors, cand.node, tree):
        binds, _ = index.bindings(scope, cand.root)
        if binds or scope is tree:
            imports = [b for b in binds if isinstance(b, Binding)] or index.star_imports()
            names = {b.qualify(cand.dotted) for b in imports}
            if len(names) == 1:
                (name,) = names
                if name in APIS or name in SHARD_MAP_NAMES:
                    return name
            return None
    return None


def _condition_holds(call: ast.Call | None, cond: catalog.ArgCondition) -> bool:
    if call is None:
        return False
    for kw in call.keywords:
        if kw.arg == cond.keyword:
            if cond.value is None:
                return not (isinstance(kw.value, ast.Constant) and kw.value.value is None)
            return isinstance(kw.value, ast.Constant) and kw.value.value == cond.value
    return False


def _pair(refs: list[Reference]) -> None:
    """Link each precv to the psend whose token it receives, or with the same axis and perm."""
    sends = [r for r in refs if r.qualname == "jax.lax.psend" and r.call is not None]
    recvs = [r for r in refs if r.qualname == "jax.lax.precv" and r.call is not None]
    for recv in recvs:
        assert recv.call is not None
        token = recv.call.args[0] if recv.call.args else None
        for send in sends:
            if send.partner is not None or send.function is not recv.function:
                continue
            assert send.call is not None
            linked = token is send.call
            stmt = send.statement
            if isinstance(token, ast.Name) and isinstance(stmt, ast.Assign) and stmt.value is send.call:
                linked = any(isinstance(t, ast.Name) and t.id == token.id for t in stmt.targets)
            if not linked and len(send.call.args) >= 3 and len(recv.call.args) >= 4:
                linked = ast.dump(send.call.args[1]) == ast.dump(recv.call.args[2]) and ast.dump(
                    send.call.args[2]
                ) == ast.dump(recv.call.args[3])
            if linked:
                send.partner, recv.partner = recv, send
                break


class _ShardedFunctions:
    """Functions visibly run under shard_map in one module."""

    def __init__(self, view: SparseModule | _FullView, text: Lines) -> None:
        self.view = view
        self.text = text
        self.names = {"shard_map"} | {
            a.asname
            for n in view.module().body
            if isinstance(n, ast.ImportFrom)
            for a in n.names
            if a.name == "shard_map" and a.asname
        }
        self._nodes: set[int] | None = None

    def covers(self, ref: Reference) -> bool:
        chain = [*ref.ancestors, ref.node]
        for parent, child in itertools.pairwise(chain):
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef)) and any(
                _mentions(d, self.names) for d in parent.decorator_list
            ):
                return True
            if (
                isinstance(child, ast.Lambda)
                and isinstance(parent, ast.Call)
                and parent.args
                and parent.args[0] is child
                and _mentions(parent.func, self.names)
            ):
                return True
        nodes = self._sharded()
        return any(id(a) in nodes for a in ref.ancestors)

    def _sharded(self) -> set[int]:
        if self._nodes is not None:
            return self._nodes
        source = self.text.source
        self.view.ensure(lines_with_words(self.text, self.names))
        nodes: set[int] = set()
        passed: set[str] = set()
        roots: list[ast.AST] = []
        for node in ast.walk(self.view.module()):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(_mentions(d, self.names) for d in node.decorator_list):
                    nodes.add(id(node))
                    roots.append(node)
            elif isinstance(node, ast.Call) and _mentions(node.func, self.names):
                target = node.args[0] if node.args else None
                for kw in node.keywords:
                    if kw.arg in ("f", "fun"):
                        target = kw.value
                if isinstance(target, ast.Call) and _terminal(target.func) == "partial" and target.args:
                    target = target.args[0]
                if isinstance(target, ast.Name):
                    passed.add(target.id)
                elif isinstance(target, ast.Lambda):
                    nodes.add(id(target))
                    roots.append(target)
        # functions passed to shard_map, and the functions they call, run under it
        wanted = set(passed) | {
            sub.func.id
            for root in roots
            for sub in ast.walk(root)
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name)
        }
        seen: set[str] = set()
        while wanted - seen:
            new = wanted - seen
            seen |= new
            pattern = re.compile(rf"\bdef\s+(?:{'|'.join(re.escape(n) for n in sorted(new))})\b")
            self.view.ensure(_lines_matching(source, self.text, pattern))
            for node in ast.walk(self.view.module()):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in new:
                    nodes.add(id(node))
                    for sub in ast.walk(node):
                        if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                            wanted.add(sub.func.id)
        self._nodes = nodes
        return nodes


def _mentions(node: ast.AST, names: set[str]) -> bool:
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and sub.id in names:
            return True
        if isinstance(sub, ast.Attribute) and sub.attr in names:
            return True
    return False


# ---------------------------------------------------------------- suppression

_IGNORE_RE = re.compile(r"#\s*jaxtarget:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.I)
_NOQA_RE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)


def suppressed_codes(comment: str) -> set[str] | None:
    """Codes a comment silences; an empty set means all; None means none."""
    found: set[str] | None = None
    for pattern in (_IGNORE_RE, _NOQA_RE):
        for m in pattern.finditer(comment):
            codes = m.group("codes")
            if codes is None or not codes.strip():
                return set()
            found = (found or set()) | {c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c}
    return found


def _suppress(findings: list[Finding], text: Lines) -> list[Finding]:
    marked = [f for f in findings if re.search(r"noqa|jaxtarget", text.text(f.span.line), re.I)]
    if not marked:
        return findings
    comments = {line: comment for line, (_, comment) in TokenFacts(text.source).comments.items()}
    kept = []
    for f in findings:
        comment = comments.get(f.span.line)
        codes = suppressed_codes(comment) if comment else None
        if codes is not None and (not codes or f.code in codes):
            continue
        kept.append(f)
    return kept
