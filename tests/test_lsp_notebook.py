"""LSP notebook documents through pytest-lsp: the Python cells are checked together, in
order, and each cell gets its own diagnostics, hover and quick fixes."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .lsp_helpers import SERVER, apply_workspace_edit, capabilities, pull

IMPORTS = "%matplotlib inline\nimport jax\nfrom jax import lax\n"
EXCHANGE = "!nvidia-smi\ndef exchange(x):\n    files = !ls\n    return lax.psend(x, 'i', perm=[(0, 1)])\n"
EIG = "w, _ = jax.numpy.linalg.eig(x)\n"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["cpu", "tpu"]\n')
    return tmp_path


def _cell_uri(notebook: Path, n: int) -> str:
    return f"vscode-notebook-cell:{notebook.as_posix()}#cell{n}"


def _vscode_cell_uri(notebook: Path, n: int) -> str:
    """A cell URI as VS Code writes it: an authority, and an escaped base64 fragment."""
    return f"vscode-notebook-cell://127.0.0.1:8080{notebook.as_posix()}#W{n}sZmlsZQ%3D%3D"


def _open(
    client: LanguageClient,
    notebook: Path,
    texts: list[str | None],
    cell_uri: Callable[[Path, int], str] = _cell_uri,
) -> list[str]:
    """Open a notebook; ``None`` is a markdown cell. Returns the cell URIs."""
    uris = [cell_uri(notebook, n) for n in range(len(texts))]
    client.notebook_document_did_open(
        types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=notebook.as_uri(),
                notebook_type="jupyter-notebook",
                version=1,
                cells=[
                    types.NotebookCell(
                        kind=types.NotebookCellKind.Markup if t is None else types.NotebookCellKind.Code,
                        document=u,
                    )
                    for u, t in zip(uris, texts, strict=True)
                ],
            ),
            cell_text_documents=[
                types.TextDocumentItem(
                    uri=u, language_id="markdown" if t is None else "python", version=1, text=t or "# notes"
                )
                for u, t in zip(uris, texts, strict=True)
            ],
        )
    )
    return uris


class Publications:
    """Every publishDiagnostics the client receives, and a wait for a state of them."""

    def __init__(self, client: LanguageClient) -> None:
        self.latest: dict[str, list[types.Diagnostic]] = {}
        self.arrived = asyncio.Event()
        handle = client.protocol._handle_notification

        def recording(method: str, params: object) -> None:
            if method == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
                assert isinstance(params, types.PublishDiagnosticsParams)
                self.latest[params.uri] = list(params.diagnostics)
                self.arrived.set()
            handle(method, params)

        client.protocol._handle_notification = recording  # type: ignore[method-assign]

    async def until(self, want: dict[str, int]) -> dict[str, list[types.Diagnostic]]:
        """Wait until each cell URI's last publication has this many diagnostics."""
        while any(len(self.latest.get(uri, [None] * 99)) != n for uri, n in want.items()):
            self.arrived.clear()
            await asyncio.wait_for(self.arrived.wait(), 60)
        return dict(self.latest)


def _with_notebooks(profile: str) -> types.ClientCapabilities:
    """VS Code's capabilities with notebook document sync (pytest-lsp's profile predates it)."""
    caps = capabilities(profile)
    caps.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(execution_summary_support=True)
    )
    return caps


async def _initialize(client: LanguageClient, root: Path, profile: str) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=_with_notebooks(profile),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
        )
    )


def _edit(client: LanguageClient, notebook: Path, cell: str, text: str) -> None:
    """Replace one cell's text (notebook and cell at version 2)."""
    client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=types.VersionedNotebookDocumentIdentifier(version=2, uri=notebook.as_uri()),
            change=types.NotebookDocumentChangeEvent(
                cells=types.NotebookDocumentCellChanges(
                    text_content=[
                        types.NotebookDocumentCellContentChanges(
                            document=types.VersionedTextDocumentIdentifier(uri=cell, version=2),
                            changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
                        )
                    ]
                )
            ),
        )
    )


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, workspace: Path):
    await _initialize(lsp_client, workspace, "visual-studio-code")
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def bare(lsp_client: LanguageClient):
    yield  # the test initialises the session itself


async def test_the_server_asks_for_python_cells_of_notebooks(bare: LanguageClient, workspace: Path) -> None:
    result = await _initialize(bare, workspace, "visual-studio-code")
    await bare.shutdown_session()
    sync = result.capabilities.notebook_document_sync
    assert isinstance(sync, types.NotebookDocumentSyncOptions)
    selector = sync.notebook_selector[0]
    assert selector.cells is not None and [c.language for c in selector.cells] == ["python"]


async def test_cells_get_their_own_diagnostics_with_names_resolved_across_cells(
    client: LanguageClient, workspace: Path
) -> None:
    nb = workspace / "nb.ipynb"
    published = Publications(client)
    md, imports, exchange, eig = _open(client, nb, [None, IMPORTS, EXCHANGE, EIG])
    got = await published.until({imports: 0, exchange: 2, eig: 1})
    send = got[exchange]
    assert [d.code for d in send] == ["JT001", "JT002"]
    assert send[0].range == types.Range(types.Position(3, 15), types.Position(3, 20))  # the cell's row 4
    assert got[eig][0].code == "JT003"
    assert got[eig][0].range.start == types.Position(0, 24)
    assert md not in got

    # the import leaves the first cell: the other cells' names no longer resolve to jax
    _edit(client, nb, imports, "lax = object()\n")
    await published.until({exchange: 0, eig: 0})

    client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=nb.as_uri()),
            cell_text_documents=[types.TextDocumentIdentifier(uri=u) for u in (md, imports, exchange, eig)],
        )
    )
    published.latest.clear()
    await published.until({imports: 0, exchange: 0, eig: 0})


async def test_hover_and_quick_fix_on_a_cell_are_in_that_cells_rows(
    client: LanguageClient, workspace: Path
) -> None:
    nb = workspace / "nb.ipynb"
    published = Publications(client)
    _, imports, exchange, _ = _open(client, nb, [None, IMPORTS, EXCHANGE, EIG])
    got = await published.until({imports: 0, exchange: 2})
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(exchange), types.Position(3, 17))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "**Backend support** (`jax.lax.psend`" in hover.contents.value
    assert hover.range == got[exchange][0].range
    nothing = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(imports), types.Position(1, 8))
    )
    assert nothing is None

    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(exchange),
            range=got[exchange][0].range,
            context=types.CodeActionContext(diagnostics=[got[exchange][0]]),
        )
    )
    assert actions
    guard = next(a for a in actions if isinstance(a, types.CodeAction) and a.is_preferred)
    if guard.edit is None:
        guard = await client.code_action_resolve_async(guard)
    assert guard.edit is not None and guard.edit.document_changes
    assert {
        c.text_document.uri for c in guard.edit.document_changes if isinstance(c, types.TextDocumentEdit)
    } == {exchange}
    fixed = apply_workspace_edit(EXCHANGE, guard.edit)
    # the GPU helper goes at the top of the cell that needs it; the IPython lines stay
    assert fixed.startswith("def has_gpu_backend() -> bool:\n")
    assert "!nvidia-smi\ndef exchange(x):\n    files = !ls\n    if has_gpu_backend():\n" in fixed


async def test_a_pulling_client_gets_cells_diagnostics_pushed_and_pulls_text_documents_only(
    bare: LanguageClient, workspace: Path
) -> None:
    sent: list[dict[str, Any]] = []
    structure = bare.protocol.structure_message

    def recording(data: dict[str, Any]) -> Any:
        sent.append(data)
        return structure(data)

    bare.protocol.structure_message = recording  # type: ignore[method-assign]
    await _initialize(bare, workspace, "vscode-pull")
    try:
        # VS Code's language client pulls only for documents with a tab of their own, which a
        # cell never has: pulls are advertised for Python text documents, and cells are pushed
        answer = next(m["result"] for m in sent if "capabilities" in (m.get("result") or {}))
        assert answer["capabilities"]["diagnosticProvider"]["documentSelector"] == [
            {"scheme": "file", "language": "python"},
            {"scheme": "untitled", "language": "python"},
        ]
        published = Publications(bare)
        _, imports, exchange, eig = _open(bare, workspace / "nb.ipynb", [None, IMPORTS, EXCHANGE, EIG])
        got = await published.until({imports: 0, exchange: 2, eig: 1})
        assert [d.code for d in got[exchange]] == ["JT001", "JT002"]
        # a pull for a cell is answered all the same
        assert [d.code for d in await pull(bare, exchange)] == ["JT001", "JT002"]
        assert [d.code for d in await pull(bare, eig)] == ["JT003"]
        assert await pull(bare, imports) == []
    finally:
        await bare.shutdown_session()


async def test_a_settings_change_pushes_cells_again_and_their_quick_fixes_follow(
    bare: LanguageClient, workspace: Path
) -> None:
    await _initialize(bare, workspace, "vscode-pull")
    try:
        published = Publications(bare)
        nb = workspace / "nb.ipynb"
        _, imports, exchange = _open(bare, nb, [None, IMPORTS, EXCHANGE], cell_uri=_vscode_cell_uri)
        first = (await published.until({imports: 0, exchange: 2}))[exchange][0]
        # a new analysis (new finding ids) is pushed to the cells as the client names them
        published.latest.clear()
        bare.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        again = (await published.until({imports: 0, exchange: 2}))[exchange][0]
        assert again.code == "JT001" and again.data != first.data
        actions = await bare.text_document_code_action_async(
            types.CodeActionParams(
                text_document=types.TextDocumentIdentifier(exchange),
                range=again.range,
                context=types.CodeActionContext(diagnostics=[again]),
            )
        )
        assert any(
            isinstance(a, types.CodeAction) and a.title.startswith("Guard `lax.psend`") for a in actions or []
        )
    finally:
        await bare.shutdown_session()
