"""Jupyter notebooks as one module: their code cells, in order, with positions mapped back.

The code cells are concatenated, each after a marker comment line, into the text the
engine checks, so names resolve across cells as the kernel runs them. IPython syntax
that is not Python (line magics ``%...``, shell escapes ``!...``, ``x = !cmd``, help
``obj?``) becomes a ``pass`` placeholder at the same indentation, keeping every line
number; a cell magic (``%%...``) cell is left out. After fixes, the text is split at
the markers again and the placeholders turn back into the original lines.

No LSP, no I/O: the CLI (``notebook_check.py``) and the language server use it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .model import Edit, Finding, Span

_MARKER = "# jaxtarget-cell {}\n"
_MARKER_RE = re.compile(r"# jaxtarget-cell (\d+)\n")
_PLACEHOLDER = "pass  # jaxtarget-ipython {}"
_PLACEHOLDER_RE = re.compile(r"^([ \t]*)pass  # jaxtarget-ipython (\d+)$")
#: IPython lines that are not Python: magics, shell escapes and their assignment forms
_IPYTHON_RE = re.compile(r"^[ \t]*(?:[%!?]|[\w.]+(?:[ \t]*,[ \t]*[\w.]+)*[ \t]*=[ \t]*[%!])")
#: IPython help: ``obj?``, ``obj??`` (a line of names and dots, nothing else)
_HELP_RE = re.compile(r"^[ \t]*[\w.]+\?\??[ \t]*$")


class NotebookError(Exception):
    """A notebook that cannot be read or rebuilt; the message says why, in one line."""


@dataclass(frozen=True)
class Cell:
    """One code cell: ``key`` names it (its index, or a cell document's URI), ``number`` is
    its 1-based position among all the notebook's cells, as Jupyter and ruff count them."""

    key: str
    number: int
    text: str


def _is_cell_magic(text: str) -> bool:
    first = next((line for line in text.splitlines() if line.strip()), "")
    return first.lstrip().startswith("%%")


@dataclass(frozen=True)
class Concatenated:
    """The code cells as one module, and where each cell's lines are in it."""

    source: str
    cells: tuple[Cell, ...]
    #: the 1-based line in ``source`` where each checked cell's first line is (after its marker)
    starts: tuple[int, ...]
    #: the original text of each placeholder line, by placeholder number
    ipython: tuple[str, ...]

    def locate(self, line: int) -> tuple[int, int]:
        """A line of ``source`` as (index into ``cells``, 1-based row in that cell)."""
        index = 0
        for i, start in enumerate(self.starts):
            if start <= line:
                index = i
        return index, max(1, line - self.starts[index] + 1) if self.starts else line

    def cell_span(self, span: Span) -> tuple[int, Span] | None:
        """A span within one cell, in that cell's rows; None if it crosses cells."""
        index, row = self.locate(span.line)
        end_index, end_row = self.locate(span.end_line)
        if index != end_index:
            return None
        return index, Span(row, span.col, end_row, span.end_col)

    def cell_edits(self, edits: Sequence[Edit]) -> tuple[int, tuple[Edit, ...]] | None:
        """Edits all in one cell, in that cell's rows; None if they touch several cells or
        a marker line (a fix that does not fit one cell)."""
        found: int | None = None
        out: list[Edit] = []
        for e in edits:
            index, row = self.locate(e.start_line)
            end_index, end_row = self.locate(e.end_line)
            if index != end_index or (found is not None and found != index):
                return None
            if e.start_line < self.starts[index]:
                return None
            found = index
            out.append(Edit(row, e.start_col, end_row, e.end_col, e.new_text))
        return (found, tuple(out)) if found is not None else None

    def to_source_line(self, index: int, row: int) -> int:
        """A cell's 1-based row as a line of ``source``."""
        return self.starts[index] + row - 1

    def split(self, fixed: str) -> dict[str, str]:
        """The fixed module back as cell texts (with IPython lines restored), by cell key.

        Raises ``NotebookError`` if the markers did not survive as they were.
        """
        lines = fixed.splitlines(keepends=True)
        bounds = [i for i, line in enumerate(lines) if _MARKER_RE.fullmatch(line)]
        numbers = [int(m.group(1)) for i in bounds if (m := _MARKER_RE.fullmatch(lines[i]))]
        if numbers != list(range(len(self.cells))):
            raise NotebookError("a fix crossed a cell boundary")
        out: dict[str, str] = {}
        for n, begin in enumerate(bounds):
            stop = bounds[n + 1] if n + 1 < len(bounds) else len(lines)
            # what a fix put above the first marker (a helper at the module's top) opens cell 0
            start = 0 if n == 0 else begin + 1
            body = [self._restore(lines[i]) for i in range(start, stop) if i != begin]
            text = "".join(body)
            cell = self.cells[n]
            if not cell.text.endswith("\n") and text.endswith("\n"):
                text = text[:-1]
            out[cell.key] = text
        return out

    def _restore(self, line: str) -> str:
        ending = line[len(line.rstrip("\r\n")) :]
        m = _PLACEHOLDER_RE.match(line.rstrip("\r\n"))
        if m is None:
            return line
        original = self.ipython[int(m.group(2))]
        return m.group(1) + original.lstrip(" \t") + ending


def concatenate(cells: Sequence[Cell]) -> Concatenated:
    """The cells as one module; cell-magic cells are left out."""
    parts: list[str] = []
    kept: list[Cell] = []
    starts: list[int] = []
    ipython: list[str] = []
    line = 1
    for cell in cells:
        if _is_cell_magic(cell.text):
            continue
        parts.append(_MARKER.format(len(kept)))
        line += 1
        starts.append(line)
        kept.append(cell)
        body = cell.text.splitlines()
        for text in body:
            if _IPYTHON_RE.match(text) or _HELP_RE.match(text):
                indent = text[: len(text) - len(text.lstrip(" \t"))]
                parts.append(indent + _PLACEHOLDER.format(len(ipython)) + "\n")
                ipython.append(text)
            else:
                parts.append(text + "\n")
        line += len(body)
    return Concatenated("".join(parts), tuple(kept), tuple(starts), tuple(ipython))


def cell_finding(finding: Finding, concatenated: Concatenated) -> tuple[int, Finding]:
    """A finding of the module as (cell index, the finding in that cell's rows)."""
    placed = concatenated.cell_span(finding.span)
    if placed is None:
        index, row = concatenated.locate(finding.span.line)
        return index, _moved(finding, Span(row, finding.span.col, row, finding.span.col))
    index, span = placed
    related = tuple(
        (s, text)
        for (where, text) in finding.related
        if (p := concatenated.cell_span(where)) is not None and p[0] == index
        for s in (p[1],)
    )
    return index, _moved(finding, span, related)


def _moved(finding: Finding, span: Span, related: tuple[tuple[Span, str], ...] = ()) -> Finding:
    return Finding(
        finding.code,
        finding.message,
        finding.severity,
        span,
        finding.api,
        finding.failing,
        related,
        finding.resolved_by,
        finding.id,
    )
