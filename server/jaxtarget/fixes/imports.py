"""Where isort (ruff's I001 with its defaults) would put a new ``import NAME``.

The module's first run of imports is read as isort reads it: sections in the order
future, standard library, third party, first party (a module beside the project's
``pyproject.toml`` or under its ``src/``), local (relative imports), one blank line
between sections, ``import x`` lines before ``from x import y`` lines in a section,
each group sorted by module name regardless of case.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

from ..model import Edit
from ..semantics.project_files import project_root
from .layout import FixContext

_FUTURE, _STDLIB, _THIRD_PARTY, _FIRST_PARTY, _LOCAL = range(5)


def _project_root(path: str | None) -> Path | None:
    return project_root(Path(path).resolve()) if path else None


def section(module: str, level: int, root: Path | None) -> int:
    """isort's section of an import of ``module`` (``level`` > 0: a relative import)."""
    if level:
        return _LOCAL
    top = module.split(".")[0]
    if top == "__future__":
        return _FUTURE
    if top in sys.stdlib_module_names:
        return _STDLIB
    if root is not None:
        for src in (root, root / "src"):
            if (src / top).is_dir() or (src / f"{top}.py").is_file():
                return _FIRST_PARTY
    return _THIRD_PARTY


def _first_run(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The module's first contiguous imports (after the docstring), where isort sorts."""
    body = tree.body
    start = 0
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        start = 1 if isinstance(body[0].value.value, str) else 0
    run: list[ast.Import | ast.ImportFrom] = []
    for stmt in body[start:]:
        if not isinstance(stmt, (ast.Import, ast.ImportFrom)):
            break
        run.append(stmt)
    return run


def _name(stmt: ast.Import | ast.ImportFrom) -> str:
    return stmt.names[0].name if isinstance(stmt, ast.Import) else stmt.module or ""


def isort_imports(
    ctx: FixContext, tree: ast.Module, modules: list[str], froms: tuple[tuple[str, str], ...] = ()
) -> list[Edit] | None:
    """Edits adding ``import m`` for each of ``modules`` and ``from m import n`` for each of
    ``froms`` where isort would put them.

    None: the module has no run of imports to sort into.
    """
    run = _first_run(tree)
    if not run:
        return None
    nl = ctx.newline
    root = _project_root(ctx.path)
    stmts = [(section(_name(s), getattr(s, "level", 0) or 0, root), s) for s in run]
    edits: list[Edit] = []
    new_sections: dict[int, list[str]] = {}
    wanted: list[tuple[str, str | None]] = [(m, None) for m in sorted(modules, key=str.lower)]
    wanted += sorted(froms, key=lambda f: f[0].lower())
    for module, name in wanted:
        mine = section(module, 0, root)
        same = [s for sec, s in stmts if sec == mine]
        text = f"import {module}{nl}" if name is None else f"from {module} import {name}{nl}"
        if not same:
            new_sections.setdefault(mine, []).append(text)
            continue
        if name is None:  # before the first from-import, or the first import sorted after it
            at = next(
                (s for s in same if isinstance(s, ast.ImportFrom) or _name(s).lower() > module.lower()), None
            )
        else:  # after every plain import, among the from-imports by module
            at = next(
                (s for s in same if isinstance(s, ast.ImportFrom) and _name(s).lower() > module.lower()), None
            )
        edits.append(Edit(at.lineno, 0, at.lineno, 0, text) if at else _after(ctx, same[-1], text))
    for mine, texts in new_sections.items():
        block = "".join(texts)
        before = [s for sec, s in stmts if sec < mine]
        if before:  # a section of its own, after the last one that precedes it
            edits.append(_after(ctx, before[-1], nl + block.removesuffix(nl)))
        else:
            first = stmts[0][1]
            edits.append(Edit(first.lineno, 0, first.lineno, 0, block + nl))
    return edits


def _after(ctx: FixContext, stmt: ast.stmt, text: str) -> Edit:
    """``text`` (ending in a newline unless it opens a section) as the lines after ``stmt``."""
    end = stmt.end_lineno or stmt.lineno
    nl = ctx.newline
    if end < len(ctx.lines.starts):
        body = text if text.endswith(nl) else text + nl
        return Edit(end + 1, 0, end + 1, 0, body)
    last = ctx.lines.text(end)
    return Edit(end, len(last), end, len(last), nl + text.removesuffix(nl))
