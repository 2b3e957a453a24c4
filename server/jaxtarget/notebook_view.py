"""One notebook cell's view of the analysis of the whole notebook (the language server's).

The notebook is checked as one module (``notebook.concatenate``); a ``CellView`` is an
``Analysis`` of one cell's text: its findings, fixes and references in that cell's rows,
so diagnostics, hover and quick fixes work on the cell document as on any module.
"""

from __future__ import annotations

from dataclasses import replace

from .engine import Analysis
from .model import Edit, Finding, Fix
from .notebook import Concatenated, cell_finding
from .semantics.module import Reference

#: a cell's finding ids are ``serial * ID_STRIDE + id``: an id from an older analysis of the
#: notebook (another cell changed since) names nothing
ID_STRIDE = 1_000_000


class CellView(Analysis):
    """The analysis of a whole notebook, seen from one of its cells."""

    def __init__(self, whole: Analysis, cells: Concatenated, index: int, serial: int) -> None:
        super().__init__(
            cells.cells[index].text,
            whole.path,
            targets=whole.targets,
            jax_version=whole.jax_version,
            version=whole.version,
            note=whole.note,
        )
        self.whole = whole
        self.cells = cells
        self.index = index
        self.module = whole.module
        self._original: dict[int, Finding] = {}
        for finding in whole.findings:
            where, moved = cell_finding(finding, cells)
            if where == index:
                new_id = serial * ID_STRIDE + finding.id
                self.findings.append(replace(moved, id=new_id))
                self._original[new_id] = finding
        if whole.syntax_error is not None and whole.syntax_error_line is not None:
            where, row = cells.locate(whole.syntax_error_line)
            if where == index:
                self.syntax_error, self.syntax_error_line = whole.syntax_error, row
                self.syntax_error_col = whole.syntax_error_col

    def fixes(self, finding: Finding) -> list[Fix]:
        """The whole notebook's fixes for the finding that fit this cell."""
        original = self._original.get(finding.id)
        if original is None:
            return []
        out = []
        for fix in self.whole.fixes(original):
            edits = self._cell_edits(fix.edits)
            if edits is not None:
                out.append(replace(fix, edits=edits))
        return out

    def _cell_edits(self, edits: tuple[Edit, ...]) -> tuple[Edit, ...] | None:
        """The edits in this cell's rows. Whole lines a fix inserts elsewhere (an import, the
        GPU helper) go at the top of this cell, where they run before the code that needs
        them; any other edit outside the cell: None, the fix does not fit one cell."""
        inside: list[Edit] = []
        above: list[str] = []
        for e in edits:
            placed = self.cells.cell_edits((e,))
            if placed is not None and placed[0] == self.index:
                inside.extend(placed[1])
            elif (e.start_line, e.start_col) == (e.end_line, e.end_col) == (e.start_line, 0) and (
                e.new_text.endswith("\n")
            ):
                above.append(e.new_text)
            else:
                return None
        if not above:
            return tuple(inside)
        head = "".join(above)
        first = next((e for e in inside if (e.start_line, e.start_col) == (1, 0)), None)
        if first is not None:
            return tuple(replace(e, new_text=head + e.new_text) if e is first else e for e in inside)
        return (Edit(1, 0, 1, 0, head), *inside)

    def autofix(self, finding: Finding) -> Fix | None:
        """No fix-all per cell: fixing a notebook is ``check --fix`` on the file."""
        return None

    def reference_at(self, line: int, col: int) -> Reference | None:
        ref = self.whole.reference_at(self.cells.to_source_line(self.index, line), col)
        placed = self.cells.cell_span(ref.span) if ref is not None else None
        if ref is None or placed is None or placed[0] != self.index:
            return None
        return replace(ref, span=placed[1])
