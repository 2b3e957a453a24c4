"""From the loads of a module to public names: the statement binding each load's root,
then the resolver's answer (jedi in the user's environment, or the imports alone).

Rule-agnostic: the module model (module.py) asks for the loads of the names it wants, and
this step says which API each one is.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from .aliases import through_alias
from .project_files import jax_module_name
from .project_imports import flag_truth, through_project
from .resolver import Binding, Query, Resolver, Spot
from .scopes import AMBIGUOUS, Candidate, Other, ScopeIndex, binding_for, scopes_of, static_guess
from .source import SourceView
from .text import Lines
from .values import Values

#: a load, the public name it resolves to, and what resolved it ("jedi" or "imports")
Resolved = tuple[Candidate, str, str]


def binding_lines(
    view: SourceView, roots: Iterable[str], lines_of: dict[str, list[int]], asked: set[tuple[int, str]]
) -> list[int]:
    """Unparsed lines whose top-level statements might bind one of ``roots`` (not ``asked`` before)."""
    binding: list[int] = []
    for r in roots:
        for ln in view.binding_lines(lines_of[r], r):
            key = (view.chunk_index(ln), r)
            if ln in view or key in asked:
                continue
            asked.add(key)
            binding.append(ln)
    return binding


def resolve_loads(
    cands: list[Candidate],
    tree: ast.Module,
    lines_of: dict[str, list[int]],
    lines_of_word: Callable[[str], list[int]],
    text: Lines,
    path: str | None,
    resolver: Resolver,
    wanted: frozenset[str],
    lacking: frozenset[str],
) -> list[Resolved]:
    """The loads among ``cands`` that are one of the ``wanted`` public names, in source order.

    ``lines_of``: the lines spelling each root; ``lacking``: wanted names some JAX release
    lacks, read from their import statement where the installed JAX has nothing under them.
    """
    index = ScopeIndex(tree, lines_of, lines_of_word)
    index.truth = flag_truth(path, index, tree)
    queries: list[tuple[Candidate, Query]] = []
    full: list[Candidate] = []
    values: Values | None = None
    own = jax_module_name(path)
    for cand in cands:
        binding = binding_for(cand, index, tree)
        if binding is None:
            # bound by an assignment: `lax = jax.lax`, `self.linalg = jnp.linalg`
            values = values or Values(tree)
            alias = through_alias(cand, values, index, tree)
            if alias is not None:
                # `j = rp.jax_handle` after `import mypkg as rp`, where mypkg says `jax_handle = jax`
                project = through_project(path, alias.binding, alias.dotted) if own is None else None
                if project is not None or not alias.binding.level:
                    queries.append((cand, project if project is not None else alias))
            elif own is not None and _defined_here(cand, index, tree):
                # the module that defines the API calls it (`spsolve` in its own gradient rules)
                queries.append((cand, Query(Binding("from", own, cand.root, None), cand.dotted)))
            continue
        project = None
        if own is None and isinstance(binding, Binding):
            project = through_project(path, binding, cand.dotted)
        if project is not None:
            queries.append((cand, project))
        elif binding == AMBIGUOUS or (isinstance(binding, Binding) and binding.level):
            full.append(cand)
        elif isinstance(binding, Binding):
            queries.append((cand, Query(binding, cand.dotted)))
    by = "jedi" if resolver.exact else "imports"
    out: list[Resolved] = []
    answers = resolver.resolve([q for _, q in queries], wanted, lacking)
    for (cand, _), name in zip(queries, answers, strict=True):
        if name is not None:
            out.append((cand, name, by))
    if full:
        spots = [Spot(c.line, text.char_col(c.line, c.byte_col), static_guess(c, index, tree)) for c in full]
        answers = resolver.resolve_in_file(text.source, path, spots, wanted, lacking)
        for cand, name in zip(full, answers, strict=True):
            if name is not None:
                out.append((cand, name, by))
    out.sort(key=lambda r: (r[0].line, r[0].byte_col))
    return out


def _defined_here(cand: Candidate, index: ScopeIndex, tree: ast.Module) -> bool:
    """Whether the load's name is bound, where it is read, only by one function defined at
    the module's top level."""
    for scope in scopes_of(cand.ancestors, cand.node, tree):
        binds, is_global = index.bindings(scope, cand.root)
        if is_global:
            scope, (binds, _) = tree, index.bindings(tree, cand.root)
        if binds:
            return (
                scope is tree
                and len(binds) == 1
                and isinstance(binds[0], Other)
                and any(
                    isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and s.name == cand.root
                    and s.lineno == binds[0].line
                    for s in tree.body
                )
            )
    return False
