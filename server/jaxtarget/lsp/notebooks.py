"""Notebook documents: `notebookDocument/didOpen|didChange|didClose`, and each cell's analysis.

pygls keeps the notebook and its cell documents in the workspace. The Python cells are
checked together as one module, in order (``notebook.concatenate``), once per notebook
version and settings generation; each cell then sees that analysis in its own rows
(``notebook_view.CellView``), so diagnostics, hover and quick fixes on a cell document go
through the same handlers as any document. A cell's diagnostics are pushed, to every client:
VS Code's language client pulls only for documents with an editor tab of their own, which a
cell never has, so pulls are advertised for text documents only (``state.TEXT_DOCUMENTS``).
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass
from urllib.parse import unquote

from lsprotocol import types
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from ..engine import Analysis, Engine
from ..notebook import Cell, Concatenated, concatenate
from ..notebook_view import CellView
from .state import SERVER, Checked, JaxTargetServer

_Key = tuple[tuple[tuple[str, int], ...], int]


@dataclass(frozen=True)
class NotebookAnalysis:
    """One analysis of a notebook's Python cells, as they were."""

    key: _Key
    cells: Concatenated
    analysis: Analysis
    engine: Engine
    path: str | None
    #: distinguishes this analysis's finding ids from an older one's
    serial: int


_serials = itertools.count(1)
#: per notebook URI: the last analysis, and the one under way
_done: dict[str, NotebookAnalysis] = {}
_running: dict[str, tuple[_Key, asyncio.Future[NotebookAnalysis]]] = {}


def _python_cells(ls: JaxTargetServer, notebook: types.NotebookDocument) -> list[tuple[Cell, TextDocument]]:
    out = []
    for number, cell in enumerate(notebook.cells, start=1):
        if cell.kind != types.NotebookCellKind.Code:
            continue
        doc = ls.open_document(cell.document)
        if doc is not None and (doc.language_id or "python") == "python":
            out.append((Cell(cell.document, number, doc.source), doc))
    return out


def _analyse(ls: JaxTargetServer, uri: str, key: _Key, cells: list[Cell]) -> NotebookAnalysis:
    engine = ls.engine_for(uri)
    path = to_fs_path(uri)
    joined = concatenate(cells)
    analysis = engine.check(joined.source, path)
    return NotebookAnalysis(key, joined, analysis, engine, path, next(_serials))


async def cell_checked(ls: JaxTargetServer, cell_uri: str) -> Checked | None:
    """The analysis of a cell document's current version, within its notebook (None: the cell
    is not a Python cell of an open notebook)."""
    notebook = ls.workspace.get_notebook_document(cell_uri=cell_uri)
    if notebook is None:
        return None
    cells = _python_cells(ls, notebook)
    key: _Key = (tuple((c.key, d.version or 0) for c, d in cells), ls.generation)
    done = _done.get(notebook.uri)
    if done is None or done.key != key:
        running = _running.get(notebook.uri)
        if running is None or running[0] != key:
            loop = asyncio.get_running_loop()
            work = loop.run_in_executor(
                ls.analysis_pool, _analyse, ls, notebook.uri, key, [c for c, _ in cells]
            )
            running = (key, asyncio.ensure_future(work))
            _running[notebook.uri] = running
        try:
            done = await asyncio.shield(running[1])
        finally:
            if running[1].done() and _running.get(notebook.uri) is running:
                del _running[notebook.uri]  # done, or failed: a later request starts afresh
        if ls.workspace.get_notebook_document(notebook_uri=notebook.uri) is not None:
            _done[notebook.uri] = done
    # the cell as the client names it, or unquoted (pygls keys its documents so: VS Code's cell
    # URIs end in an escaped fragment such as #W2sZmlsZQ%3D%3D)
    wanted = unquote(cell_uri)
    index = next((i for i, c in enumerate(done.cells.cells) if unquote(c.key) == wanted), None)
    doc = next((d for c, d in cells if unquote(c.key) == wanted), None)
    if index is None or doc is None:
        return None  # a markdown cell, or a cell magic's: nothing to report
    snapshot = TextDocument(
        doc.uri, done.cells.cells[index].text, doc.version, doc.language_id, position_codec=doc.position_codec
    )
    view = CellView(done.analysis, done.cells, index, done.serial)
    return Checked(snapshot, view, done.engine, done.path, key[1])


SERVER.cell_checker = cell_checked


def _recheck_cells(ls: JaxTargetServer, notebook_uri: str, immediate: bool) -> None:
    """A change in one cell can change every cell's findings: check them all again, and push
    them (to any client: cells are not pulled, ``state.TEXT_DOCUMENTS``)."""
    notebook = ls.workspace.get_notebook_document(notebook_uri=notebook_uri)
    if notebook is None:
        return
    for cell in notebook.cells:
        if cell.kind == types.NotebookCellKind.Code:
            ls.schedule(cell.document, immediate=immediate)


def _forget_cell(ls: JaxTargetServer, uri: str) -> None:
    state = ls.documents.pop(uri, None)
    if state is not None and state.pending is not None:
        state.pending.cancel()
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@SERVER.feature(types.NOTEBOOK_DOCUMENT_DID_OPEN)
def did_open_notebook(ls: JaxTargetServer, params: types.DidOpenNotebookDocumentParams) -> None:
    _recheck_cells(ls, params.notebook_document.uri, immediate=True)


@SERVER.feature(types.NOTEBOOK_DOCUMENT_DID_CHANGE)
def did_change_notebook(ls: JaxTargetServer, params: types.DidChangeNotebookDocumentParams) -> None:
    structure = params.change.cells.structure if params.change.cells else None
    for closed in (structure.did_close or []) if structure else []:
        _forget_cell(ls, closed.uri)
    _recheck_cells(ls, params.notebook_document.uri, immediate=False)


@SERVER.feature(types.NOTEBOOK_DOCUMENT_DID_CLOSE)
def did_close_notebook(ls: JaxTargetServer, params: types.DidCloseNotebookDocumentParams) -> None:
    uri = params.notebook_document.uri
    _done.pop(uri, None)
    _running.pop(uri, None)
    for cell in params.cell_text_documents:
        _forget_cell(ls, cell.uri)
