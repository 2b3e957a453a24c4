"""`check` on a Jupyter notebook: read its code cells, check them as one module, fix in place.

Findings are reported per cell (``nb.ipynb:cell 3:2:5``); ``--fix`` uses the same fix loop
as for ``.py`` files (``fixes.apply.fix_source``) on the concatenated cells and rewrites only
the cells whose code changed, keeping outputs, metadata and the rest of the file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .engine import Analysis
from .files import MAX_BYTES, SourceFile, write_source
from .fixes.apply import fix_source, unified_diff
from .formats import FileResult, display_name
from .model import Finding, Fix
from .notebook import Cell, Concatenated, NotebookError, cell_finding, concatenate

NOTEBOOK_SUFFIX = ".ipynb"


@dataclass
class RawNotebook:
    """A notebook file as read: its JSON, and how it was written (to write it back alike)."""

    data: dict[str, Any]
    indent: int
    ensure_ascii: bool
    final_newline: bool

    def code_cells(self) -> list[Cell]:
        """The code cells, by index among all cells; none for a notebook in another language."""
        meta = self.data.get("metadata") or {}
        language = (meta.get("language_info") or {}).get("name") or (meta.get("kernelspec") or {}).get(
            "language"
        )
        if isinstance(language, str) and language.lower() != "python":
            return []
        out = []
        for i, cell in enumerate(self.data["cells"]):
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                out.append(Cell(str(i), i + 1, _text(cell.get("source", ""))))
        return out

    def with_sources(self, sources: dict[str, str]) -> bytes:
        """The file with the given cells' sources replaced, in the notebook's own layout."""
        for key, text in sources.items():
            cell = self.data["cells"][int(key)]
            cell["source"] = text.splitlines(keepends=True) if isinstance(cell["source"], list) else text
        out = json.dumps(self.data, indent=self.indent, ensure_ascii=self.ensure_ascii)
        return (out + ("\n" if self.final_newline else "")).encode("utf-8")


def _text(source: object) -> str:
    if isinstance(source, list):
        return "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def read_notebook(path: Path) -> RawNotebook:
    try:
        if path.stat().st_size > MAX_BYTES:
            raise NotebookError(f"file is too large to check ({path.stat().st_size} bytes)")
        raw = path.read_bytes().decode("utf-8-sig")
    except OSError as exc:
        raise NotebookError(f"cannot read file: {exc.strerror or exc}") from exc
    except UnicodeDecodeError as exc:
        raise NotebookError(f"notebook is not valid UTF-8 (byte {exc.start})") from exc
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise NotebookError(f"notebook is not valid JSON: {exc.msg} (line {exc.lineno})") from exc
    if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
        version = data.get("nbformat") if isinstance(data, dict) else None
        raise NotebookError(f"not a Jupyter notebook of format 4 (nbformat {version!r})")
    indent = re.match(r"\{\r?\n( +)", raw)
    return RawNotebook(
        data,
        len(indent.group(1)) if indent else 1,
        ensure_ascii=raw.isascii() and "\\u" in raw,
        final_newline=raw.endswith("\n"),
    )


@dataclass(frozen=True)
class NotebookOptions:
    fix: bool
    diff: bool
    unsafe: bool
    #: whether each finding's applicable fix is wanted (``--format json``)
    json_fixes: bool


def check_notebook(
    path: Path, check: Callable[[str], Analysis], options: NotebookOptions, diffs: list[str]
) -> FileResult:
    """Check one notebook; with ``fix`` write the changed cells, with ``diff`` collect their diffs."""
    try:
        notebook = read_notebook(path)
    except NotebookError as exc:
        return FileResult(path, (), (), error=f"file error: {exc}")
    cells = concatenate(notebook.code_cells())
    analysis = check(cells.source)
    error = analysis.syntax_error
    error_line, error_col = analysis.syntax_error_line or 1, analysis.syntax_error_col
    fixed: tuple[Finding, ...] = ()
    if options.fix or options.diff:
        outcome = fix_source(
            SourceFile(cells.source, "utf-8"), str(path), check, unsafe=options.unsafe, first=analysis
        )
        changed: dict[str, str] = {}
        refused = outcome.refused
        if refused is None and outcome.fixed is not None:
            try:
                new = cells.split(outcome.fixed)
            except NotebookError as exc:
                refused = str(exc)
            else:
                changed = {c.key: new[c.key] for c in cells.cells if new[c.key] != c.text}
        if refused is not None:
            error, error_line, error_col = f"fixes not applied: {refused}", 1, 1
        elif changed:
            name = display_name(path)
            if options.diff:
                for c in cells.cells:
                    if c.key in changed:
                        diffs.append(unified_diff(c.text, changed[c.key], f"{name}:cell {c.number}"))
            else:
                try:
                    write_source(path, notebook.with_sources(changed))
                except OSError as exc:
                    return _result(path, cells, analysis, [], error=f"file error: cannot write: {exc}")
            analysis = outcome.analysis
            fixed = outcome.gone
    unsafe, wanted = options.unsafe, options.json_fixes
    fixes = [analysis.applicable_fix(f, unsafe) if wanted else None for f in analysis.findings]
    return _result(path, cells, analysis, fixes, error=error, error_at=(error_line, error_col), fixed=fixed)


def _result(
    path: Path,
    cells: Concatenated,
    analysis: Analysis,
    fixes: list[Fix | None],
    *,
    error: str | None,
    error_at: tuple[int, int] = (1, 1),
    fixed: tuple[Finding, ...] = (),
) -> FileResult:
    """The findings (and fixes, and error) in cell rows, each with its cell's number."""
    placed = [cell_finding(f, cells) for f in analysis.findings]
    numbers = [cells.cells[i].number for i, _ in placed] if cells.cells else []
    moved_fixes: list[Fix | None] = []
    for fix in fixes:
        in_cell = cells.cell_edits(fix.edits) if fix is not None and cells.cells else None
        moved_fixes.append(
            None
            if fix is None or in_cell is None
            else Fix(fix.kind, fix.code, fix.title, in_cell[1], fix.applicability)
        )
    error_cell: int | None = None
    line, col = error_at
    if error is not None and cells.cells and not error.startswith(("file error", "fixes not applied")):
        index, line = cells.locate(line)
        error_cell = cells.cells[index].number
    return FileResult(
        path,
        [f for _, f in placed],
        moved_fixes,
        error=error,
        error_line=line,
        error_col=col,
        note=analysis.note,
        fixed=tuple(cell_finding(f, cells)[1] for f in fixed),
        cells=numbers,
        error_cell=error_cell,
    )
