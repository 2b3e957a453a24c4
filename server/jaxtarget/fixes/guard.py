"""Guard a call with a backend test, or skip the test function that makes it."""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import PurePath
from typing import Protocol

from ..apis import Api
from ..model import Edit, Fix
from ..platforms import GPU_PLATFORMS, ordered, requirement_text
from ..semantics.module import Reference
from .imports import isort_imports
from .layout import (
    HELPER_NAME,
    FixContext,
    block_of,
    indent_of,
    merge_inserts,
    module_binding_line,
    module_edits,
    reindent,
    replace_lines,
    stmt_start,
    whole_lines,
)


class Guarded(Protocol):
    """What a guard needs of a violation: the call, its API and the statements that go with it."""

    @property
    def ref(self) -> Reference: ...

    @property
    def api(self) -> Api: ...

    @property
    def companions(self) -> tuple[Reference, ...]: ...


def _tuple(names: list[str]) -> str:
    return "(" + ", ".join(f'"{n}"' for n in names) + ("," if len(names) == 1 else "") + ")"


def where_text(platforms: frozenset[str]) -> str:
    """'on a GPU' or 'on cpu, cuda, rocm': where a guard lets the code run."""
    if platforms == GPU_PLATFORMS:
        return "on a GPU"
    return "on " + ", ".join(ordered(platforms))


def guard_condition(platforms: frozenset[str]) -> tuple[str, list[str]]:
    """A test that is true exactly on ``platforms``, and what it needs in scope."""
    if platforms == GPU_PLATFORMS:
        return f"{HELPER_NAME}()", ["jax", HELPER_NAME]
    names = ordered(platforms)
    if platforms >= GPU_PLATFORMS:
        names = [n for n in names if n not in GPU_PLATFORMS] + ["gpu", "cuda", "rocm"]
    elif platforms & GPU_PLATFORMS:
        # jax.default_backend() says "gpu" for cuda and rocm alike
        return "jax.devices()[0].platform in " + _tuple(names), ["jax"]
    return "jax.default_backend() in " + _tuple(names), ["jax"]


def guard_fix(
    ctx: FixContext,
    code: str,
    v: Guarded,
    *,
    fallback: Callable[[str], str | None] | None = None,
    title: str | None = None,
    kind: str = "guard",
) -> Fix | None:
    """Wrap the statement of ``v.ref`` (and its companions') in ``if <backend test>: ... else:``.

    The else branch raises ``NotImplementedError`` naming what the API requires,
    or is ``fallback(prefix)``; a fallback needs every companion in the same block.
    """
    tree = ctx.tree
    if tree is None or not v.api.platforms(ctx.version):
        return None  # an API that lowers nowhere: no backend test makes it run
    block = block_of(v.ref)
    if block is None:
        return None
    stmts = [v.ref.statement]
    for companion in v.companions:
        if block_of(companion) is block:
            stmts.append(companion.statement)
        elif fallback is not None:
            return None
    if fallback is not None and not v.companions:
        return None
    idx = sorted(i for i, s in enumerate(block) if any(s is t for t in stmts))
    first_stmt, last_stmt = block[idx[0]], block[idx[-1]]
    lines = ctx.lines
    first = stmt_start(first_stmt)
    last = last_stmt.end_lineno or last_stmt.lineno
    if not whole_lines(lines, first_stmt, last_stmt):
        return None
    indent = indent_of(lines.text(first))
    unit = ctx.indent_unit(indent)
    nl = ctx.newline
    platforms = v.api.platforms(ctx.version)
    condition, need = guard_condition(platforms)
    body = reindent(lines, first, last, unit, ctx.string_interior(first, last), nl)
    if fallback is not None:
        other = fallback(indent + unit)
        if other is None:
            return None
    else:
        needs = requirement_text(platforms)
        other = f'{indent}{unit}raise NotImplementedError("{v.api.display} requires {needs}"){nl}'
        where = where_text(platforms)
        title = f"Guard `{v.api.display}` to run only {where}; raise NotImplementedError elsewhere"
    new = f"{indent}if {condition}:{nl}{body}{indent}else:{nl}{other}"
    edits = [replace_lines(ctx, first, last, new), *module_edits(ctx, tree, need)]
    return Fix(kind, code, title or kind, tuple(edits))


_SPELLED_OUT = 'jax.devices()[0].platform in ("gpu", "cuda", "rocm")'


def is_test_file(path: str | None) -> bool:
    if not path:
        return False
    p = PurePath(path)
    return p.name.startswith("test_") or p.stem.endswith("_test") or "tests" in p.parts[:-1]


def skip_test_fix(ctx: FixContext, code: str, v: Guarded) -> Fix | None:
    """Mark the enclosing test function ``pytest.mark.skipif(not <backend test>)``.

    An existing module-level ``has_gpu_backend`` is reused (a decorator runs at import, so
    one defined below the test is not: the test is then spelled out), and the imports go
    where isort puts them.
    """
    tree = ctx.tree
    if tree is None or not is_test_file(ctx.path) or not v.api.platforms(ctx.version):
        return None
    fn = None
    for node in v.ref.ancestors:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            fn = node
    if fn is None:
        return None
    first = stmt_start(fn)
    indent = indent_of(ctx.lines.text(first))
    platforms = v.api.platforms(ctx.version)
    condition, need = guard_condition(platforms)
    defined = module_binding_line(tree, HELPER_NAME)
    if HELPER_NAME in need and defined is not None and defined > first:
        condition, need = _SPELLED_OUT, ["jax"]  # the GPU test without the helper
    reason = f"{v.api.display} requires {requirement_text(platforms)}"
    text = f'{indent}@pytest.mark.skipif(not {condition}, reason="{reason}"){ctx.newline}'
    imports = sorted(
        {m for m in ("pytest", *need) if m != HELPER_NAME and module_binding_line(tree, m) is None},
        key=str.lower,
    )
    # the module's own helper, or else the project's, imported
    project = ctx.project_helper if HELPER_NAME in need and defined is None else None
    if HELPER_NAME in need and (defined is not None or project):
        imports = [m for m in imports if m != "jax"]  # only the helper it reuses needed jax
    placed = isort_imports(ctx, tree, imports, ((project, HELPER_NAME),) if project else ())
    if placed is None:  # no run of imports to sort into
        edits = module_edits(ctx, tree, ["pytest", *need])
    else:
        edits = [] if project else module_edits(ctx, tree, [m for m in need if m == HELPER_NAME])
    edits = merge_inserts([*(placed or []), *edits, Edit(first, 0, first, 0, text)])
    title = f"Skip `{fn.name}` unless {where_text(platforms)} (pytest.mark.skipif)"
    return Fix("skip-test", code, title, tuple(edits))
