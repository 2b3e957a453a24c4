"""The semantic model of one module: resolved references and the facts rules read.

Built once per document version, for every rule alike:

1. a cheap text pass finds the lines naming a wanted API (or a guard or
   wrapper the rules read); only the statements covering them are parsed
   (sparse view) or walked (whole module);
2. Python's scope rules find the statement binding each root name; the binding
   and the dotted spelling go to the resolver (jedi in the user's environment,
   or the imports alone);
3. each resolved use of a wanted API becomes a ``Reference`` carrying the
   platforms its guards let through.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import TypeVar

from ..model import Span
from ..platforms import ALL_PLATFORMS
from . import devices, handled, pins, placed, traced, uses
from .conditions import Allowed
from .guards import Guards
from .lookup import Resolved, binding_lines, resolve_loads
from .project_imports import import_text, imported_pin, renamed_terms
from .resolver import Resolver
from .scopes import collect, covers, import_aliases
from .source import SourceView
from .statements import tested_names
from .tables import through_module_names
from .text import Lines, lines_where, lines_with_words
from .vocabulary import SETUP_WORDS
from .wrapped import WrappedFunctions, with_aliases

#: a def this short that mentions a backend query is parsed: it may be a guard predicate
_PREDICATE_LINES = 12
#: a load of a name or of an attribute
_Load = TypeVar("_Load", ast.Name, ast.Attribute)


@dataclass
class Reference:
    """A use of a wanted API that resolution confirmed."""

    qualname: str
    span: Span
    node: ast.expr
    ancestors: list[ast.AST]
    call: ast.Call | None
    #: platforms that can reach this use (None: any)
    allowed: Allowed
    resolved_by: str
    #: the platform the code is pinned to whatever the targets (None: not pinned)
    pinned: frozenset[str] | None = None
    #: only compared or inspected (``fn is lax.psend``, ``callable(...)``), never called through
    inspected: bool = False
    #: inside ``assertRaises``/``pytest.raises``: meant to fail
    expects_error: bool = False
    #: inside a ``try`` whose handler catches a trace-time error
    caught: bool = False
    #: lowered right there inside a ``try`` whose handler catches the lowering error: compiled
    #: in place, or called eagerly in a function nothing stages
    compiled_caught: bool = False
    #: inside a ``try`` whose handler catches what calling an absent API raises (a version fallback)
    absence_caught: bool = False
    #: traced but never lowered (``jax.make_jaxpr``, ``jax.eval_shape``)
    traced_only: bool = False
    #: the platforms whose ``lax.platform_dependent`` branch holds it (lowering errors only)
    branch: frozenset[str] = ALL_PLATFORMS
    #: the keywords the API is called with (its call's, or a ``functools.partial``'s)
    keywords: list[ast.keyword] = field(default_factory=list)

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


@dataclass(frozen=True)
class Wanted:
    """What the rules ask the model to find: the APIs they report, and the context they read."""

    subjects: frozenset[str]
    context: frozenset[str] = frozenset()
    #: subject -> for each of its entries, word sets a module must spell (one word of each)
    #: for a use to matter (an API reported only with some argument)
    gates: Mapping[str, tuple[tuple[frozenset[str], ...], ...]] = field(default_factory=dict)
    #: wanted names some JAX release lacks: a use the installed JAX has nothing under is read
    #: from its import statement (``pltpu.TPUCompilerParams`` where jax removed it)
    lacking: frozenset[str] = frozenset()

    @property
    def all(self) -> frozenset[str]:
        return self.subjects | self.context

    def subject_terms(self, spells: Callable[[str], bool] | None = None) -> frozenset[str]:
        """The last name parts of the subjects (with ``spells``, whether the module spells a word:
        of those it can use visibly; an API reported only with some argument needs its words)."""
        subjects = self.subjects
        if spells is not None and self.gates:
            subjects = frozenset(q for q in subjects if q not in self.gates or self._spelled(q, spells))
        return frozenset(q.rsplit(".", 1)[-1] for q in subjects)

    def _spelled(self, qualname: str, spells: Callable[[str], bool]) -> bool:
        entries = self.gates[qualname]
        return any(all(any(spells(word) for word in words) for words in entry) for entry in entries)

    def terms(self, spells: Callable[[str], bool] | None = None) -> frozenset[str]:
        """The last name parts of the subjects and context (with ``spells``: subjects used visibly)."""
        return self.subject_terms(spells) | frozenset(q.rsplit(".", 1)[-1] for q in self.context)

    def might_be_mentioned(self, source: str) -> bool:
        """A cheap test: can ``source`` hold a use of a subject at all?"""
        # the alias and star-import tests first: most modules have one near the top, found at once
        return " as " in source or "import *" in source or any(t in source for t in self.subject_terms())


@dataclass
class Module:
    """Everything about one module version that is true for every rule."""

    source: str
    path: str | None
    text: Lines
    view: SourceView
    resolver: Resolver | None = None
    wanted: Wanted = field(default_factory=lambda: Wanted(frozenset()))
    references: list[Reference] = field(default_factory=list)
    #: id(node) -> public name, for every resolved load (subjects and context) in parsed code
    resolved: dict[int, str] = field(default_factory=dict)
    #: the names loads are collected for: the wanted terms and their import aliases
    names: frozenset[str] = frozenset()
    _wrapped: dict[tuple[frozenset[str], frozenset[int] | None], WrappedFunctions] = field(
        default_factory=dict
    )
    _guards: Guards | None = None
    #: the platform the project's conftest.py pins test processes to (None: none)
    project_pin: frozenset[str] | None = None
    #: whether a reading looked at the project's other files (`check` then does not cache the result)
    reads_project: bool = False
    #: the user's guard predicates: public name -> platforms where a true result can happen
    predicates: dict[str, frozenset[str]] = field(default_factory=dict)
    #: where each API the rules know lowers, for capability probes (public name -> platforms)
    capabilities: Mapping[str, frozenset[str]] = field(default_factory=dict)
    _resolved_lines: set[int] = field(default_factory=set)
    #: (chunk, root) pairs already asked whether they bind the root in module scope
    _binding_asked: set[tuple[int, str]] = field(default_factory=set)
    #: roots whose module-level binding statements are parsed already
    _roots_bound: set[str] = field(default_factory=set)
    _lines_of: dict[str, list[int]] = field(default_factory=dict)
    _uses: dict[str, list[tuple[ast.Name, list[ast.AST]]]] = field(default_factory=dict)
    _attribute_uses: dict[str, list[tuple[ast.Attribute, list[ast.AST]]]] = field(default_factory=dict)
    _may_pin: bool | None = None

    @property
    def tree(self) -> ast.Module:
        return self.view.module()

    @property
    def guards(self) -> Guards:
        """The guard reader over the parsed statements and the names resolved so far."""
        if self._guards is None or self._guards.tree is not self.view.module():
            self._guards = Guards(
                self.view.module(), self.resolved, self.predicates, self.capabilities, self.path
            )
        return self._guards

    @property
    def stale(self) -> bool:
        """A sparse parse that went wrong (the caller falls back to the whole module)."""
        return self.view.failed or self.view.replaced

    def wrapped(self, wrappers: frozenset[str], near: Iterable[int] | None = None) -> WrappedFunctions:
        """The functions that visibly run under any of the ``wrappers`` (public names).

        With ``near`` (lines), only the wrapper mentions in the top-level statements
        holding those lines are parsed and resolved: enough to see a decorator or a
        wrapping call around code on those lines, without parsing every statement that
        names a wrapper (which the answer without ``near`` does).
        """
        chunks = None if near is None else frozenset(self.view.chunk_index(ln) for ln in near)
        key = (wrappers, chunks)
        found = self._wrapped.get(key)
        if found is None:
            # the statements that name a wrapper, parsed and resolved now (sparse views)
            terms = frozenset({q.rsplit(".", 1)[-1] for q in wrappers} | (self.names - self.wanted.terms()))
            todo = [
                ln
                for ln in lines_with_words(self.text, terms)
                if ln not in self._resolved_lines and (chunks is None or self.view.chunk_index(ln) in chunks)
            ]
            self.view.ensure(todo)
            if todo:
                self.resolve(todo, terms)
            ids = {node for node, name in self.resolved.items() if name in wrappers}
            ids = with_aliases(self.view, self.text, ids, {q.rsplit(".", 1)[-1] for q in wrappers}, chunks)
            found = WrappedFunctions(self.view, self.text, ids)
            self._wrapped[key] = found
        return found

    def resolve(self, lines: list[int], names: frozenset[str]) -> list[Resolved]:
        """Resolve the loads of ``names`` in the statements on ``lines`` (answers are cached)."""
        text, view = self.text, self.view
        spelled = lines_with_words(text, names)
        cands = list(collect(view.module(), lines, names, spelled))
        roots = {c.root for c in cands}
        for r in roots - self._lines_of.keys():
            self._lines_of[r] = lines_with_words(text, (r,))
        lines_of = {r: self._lines_of[r] for r in roots}
        new_roots = roots - self._roots_bound
        self._roots_bound |= roots
        if new_roots and view.ensure(binding_lines(view, new_roots, lines_of, self._binding_asked)):
            cands = list(collect(view.module(), lines, names, spelled))
        if re.search(r"import\s*\*", self.source):
            lines_of["*"] = [1]
        assert self.resolver is not None
        want = self.wanted
        tree = view.module()
        resolved = resolve_loads(
            cands, tree, lines_of, self.lines_of_word, text, self.path, self.resolver, want.all, want.lacking
        )
        self._resolved_lines.update(lines)
        self.resolved.update((id(c.node), name) for c, name, _ in resolved)
        return resolved

    def ensure_bound(self, name: str) -> bool:
        """Parse the top-level statements that may bind ``name`` (a sparse view); True if any was new."""
        todo = binding_lines(self.view, (name,), {name: self.lines_of_word(name)}, self._binding_asked)
        return self.view.ensure(todo)

    def may_pin(self) -> bool:
        """Whether the module passes ``backend=``, ``device=`` or ``platforms=`` anywhere (once a version)."""
        if self._may_pin is None:
            self._may_pin = any(
                self.lines_of_word(word)
                for word in ("backend", "device", "in_shardings", "out_shardings", "platforms")
            )
        return self._may_pin

    def uses_of(self, name: str) -> list[tuple[ast.Name, list[ast.AST]]]:
        """Every load of ``name`` in the module, with its ancestors (their statements parsed and resolved)."""
        return self._loads_of(self._uses, name, ast.Name, "id")

    def attribute_uses_of(self, name: str) -> list[tuple[ast.Attribute, list[ast.AST]]]:
        """Every load of an attribute ``.name`` (``self.name``, ``obj.name``), with its ancestors."""
        return self._loads_of(self._attribute_uses, name, ast.Attribute, "attr")

    def _loads_of(
        self, memo: dict[str, list[tuple[_Load, list[ast.AST]]]], name: str, kind: type[_Load], attr: str
    ) -> list[tuple[_Load, list[ast.AST]]]:
        hit = memo.get(name)
        if hit is None:
            hit = memo[name] = [
                (n, above)
                for n, above in self._loads(name)
                if isinstance(n, kind) and getattr(n, attr) == name and isinstance(n.ctx, ast.Load)
            ]
        return hit

    def _loads(self, name: str) -> Iterator[tuple[ast.AST, list[ast.AST]]]:
        """The nodes of the statements spanning a line that names ``name``, with their ancestors."""
        todo = [ln for ln in self.lines_of_word(name) if ln not in self._resolved_lines]
        self.view.ensure(todo)
        if todo and self.names:
            self.resolve(todo, self.names)
        tree = self.view.module()
        lines = self.lines_of_word(name)
        # only the statements (and inside them the nodes) that span a line naming it
        stack: list[tuple[ast.AST, list[ast.AST]]] = [(s, [tree]) for s in tree.body if covers(s, lines)]
        while stack:
            node, above = stack.pop()
            yield node, above
            here = [*above, node]
            stack.extend(
                (child, here)
                for child in ast.iter_child_nodes(node)
                if not hasattr(child, "lineno") or covers(child, lines)
            )

    def reexported(self, ref: Reference) -> bool:
        """A module-level name for the API that the module itself never loads: a re-export, not a use."""
        name = uses.reexport_name(ref.ancestors, ref.node)
        return name is not None and not self.uses_of(name)

    def lines_of_word(self, word: str) -> list[int]:
        hit = self._lines_of.get(word)
        if hit is None:
            hit = self._lines_of[word] = lines_with_words(self.text, (word,))
        return hit

    def reference_at(self, line: int, col: int) -> Reference | None:
        for ref in self.references:
            s = ref.span
            if s.line == line and s.col <= col <= s.end_col:
                return ref
        return None


def analyse(
    view: SourceView,
    text: Lines,
    path: str | None,
    resolver: Resolver,
    wanted: Wanted,
    project_pin: frozenset[str] | None = None,
    predicates: Mapping[str, frozenset[str]] | None = None,
    capabilities: Mapping[str, frozenset[str]] | None = None,
) -> Module:
    """Build the semantic model of the module behind ``view``.

    ``project_pin``: the platform a conftest.py pins tests to; ``predicates``: the
    user's guard functions; ``capabilities``: where each subject lowers (capability probes).
    """
    module = Module(
        text.source,
        path,
        text,
        view,
        resolver,
        wanted,
        project_pin=project_pin,
        predicates=dict(predicates or {}),
        capabilities=capabilities or {},
    )
    source = text.source
    setup = [
        ln
        for ln in lines_with_words(
            text, (*SETUP_WORDS, *pins.PLATFORM_WORDS, *devices.PIN_WORDS, *placed.APP_WORDS)
        )
        if ln in view
        or "import" in text.text(ln)
        or not view.is_definition(ln)
        # small functions may be backend predicates
        or view.chunk_last_line(ln) - ln <= _PREDICATE_LINES
    ]
    view.ensure(setup)
    _ensure_calling_predicates(view, text, setup)

    # the gate words are looked up in the text's word index, which an edit updates in place
    def spells(word: str) -> bool:
        return bool(text.word_lines(word))

    terms = wanted.terms(spells)
    # names other modules of the project give the APIs (`from jax... import x as cuda_x`)
    imports = import_text(text)
    renamed = renamed_terms(path, imports, wanted.subject_terms())
    renamed = frozenset(w for w in renamed if spells(w))
    terms |= renamed
    aliases = (
        import_aliases(view.module(), lines_with_words(text, ("import",)), terms)
        if " as " in source
        else set()
    )
    subject_lines = lines_with_words(text, wanted.subject_terms(spells) | renamed | aliases)
    if not subject_lines:
        return module
    view.ensure(subject_lines)
    module.names = frozenset(terms | aliases)
    # the statements with a use, and the module-level setup (guards, pytestmark) around them
    lines = sorted(set(subject_lines) | {ln for ln in setup if ln in view})
    resolved = module.resolve(lines, module.names)
    # the module-level bindings of the names the tests around each use read (`if DEBUG:` after
    # `DEBUG = False`), and the platform settings (`jax.devices(which_device)`), parsed so
    # that a sparse view reads them as the whole module
    read = pins.pin_names(view.module()).union(
        *(tested_names([*c.ancestors, c.node]) for c, name, _ in resolved if name in wanted.subjects)
    )
    for name in sorted(read):
        module.ensure_bound(name)
    # functions of this module that receive an API as an argument: whether they only inspect it
    receivers = {
        c.ancestors[-1].func.id
        for c, _, _ in resolved
        if c.ancestors
        and isinstance(c.ancestors[-1], ast.Call)
        and isinstance(c.ancestors[-1].func, ast.Name)
    }
    if receivers:
        pattern = re.compile(
            rf"^(?:async[ \t]+)?def[ \t]+(?:{'|'.join(map(re.escape, sorted(receivers)))})\b"
        )
        view.ensure(lines_where(text, receivers, pattern))
    # the process's pin: this module's, one a project module it imports makes, the conftest's
    pin = pins.module_pin(view.module()) or imported_pin(path, imports) or project_pin
    module.references = _references(resolved, text, module.guards, wanted.subjects)
    for ref in module.references:
        through_module_names(module, ref)
        if not ref.compiled_caught and handled.eagerly_caught(module, ref.ancestors, ref.node):
            ref.compiled_caught = True
        if ref.pinned is None:
            # the process's platform, where the code around the use pins nothing of its own
            # (a function compiled for a TPU topology in a script run with JAX_PLATFORMS=cpu)
            ref.pinned = pin
    return module


#: how many small functions calling one another a predicate is read through (sparse views)
_PREDICATE_DEPTH = 3


def _ensure_calling_predicates(view: SourceView, text: Lines, setup: list[int]) -> None:
    """Parse the small functions that call a small function holding a backend word: they
    may be predicates too (``cudnn_ok`` returning ``... and _is_gpu_available()``), up to
    ``_PREDICATE_DEPTH`` calls away. A whole-module view has everything parsed already."""
    lines = setup
    for _ in range(_PREDICATE_DEPTH):
        names = {name for ln in lines if (name := view.defined_name(ln)) is not None}
        if not names:
            return
        lines = [
            ln
            for ln in lines_with_words(text, names)
            if ln not in view and view.is_definition(ln) and view.chunk_last_line(ln) - ln <= _PREDICATE_LINES
        ]
        if not view.ensure(lines):
            return


def _references(
    resolved: list[Resolved],
    text: Lines,
    guards: Guards,
    subjects: frozenset[str],
) -> list[Reference]:
    refs: list[Reference] = []
    for c, qualname, by in resolved:
        if qualname not in subjects:
            continue
        col = text.char_col(c.line, c.byte_col)
        end = text.char_col(c.line, c.end_byte_col)
        parent = c.ancestors[-1] if c.ancestors else None
        call = parent if isinstance(parent, ast.Call) and parent.func is c.node else None
        allowed = guards.allowed(c.ancestors, c.node)
        refs.append(
            Reference(
                qualname,
                Span(c.line, col, c.line, end),
                c.node,
                c.ancestors,
                call,
                allowed,
                by,
                pinned=placed.pinned(guards, c.ancestors, c.node),
                inspected=uses.inspected(guards, c.ancestors, c.node),
                expects_error=guards.expects_error(c.ancestors),
                caught=handled.caught(c.ancestors, c.node),
                compiled_caught=handled.compiled_caught(guards, c.ancestors, c.node),
                absence_caught=handled.absence_caught(c.ancestors, c.node),
                traced_only=traced.traced_only(guards, c.ancestors, c.node),
                branch=placed.branch(guards, c.ancestors, c.node),
                keywords=uses.keywords(guards, c.ancestors, c.node),
            )
        )
    return refs
