"""Helpers for driving the server with pytest-lsp's real stdio client."""

from __future__ import annotations

import asyncio
import sys
import uuid
import weakref
from collections.abc import Sequence
from concurrent.futures import Future
from pathlib import Path

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "jaxtarget", "lsp", "--stdio"])


def capabilities(profile: str) -> types.ClientCapabilities:
    """A client's capabilities: pytest-lsp's profiles, and ``vscode-pull``, VS Code as it is
    today (its 1.65 profile predates pull diagnostics), which pulls and supports refresh."""
    if profile != "vscode-pull":
        return client_capabilities(profile)
    caps = client_capabilities("visual-studio-code")
    assert caps.text_document is not None and caps.workspace is not None
    caps.text_document.diagnostic = types.DiagnosticClientCapabilities(dynamic_registration=True)
    caps.workspace.diagnostics = types.DiagnosticWorkspaceClientCapabilities(refresh_support=True)
    return caps


_ANSWERS: weakref.WeakKeyDictionary[LanguageClient, types.InitializeResult] = weakref.WeakKeyDictionary()


def server_capabilities(client: LanguageClient) -> types.ServerCapabilities:
    """What the server answered to this client's `initialize` (through `start`)."""
    return _ANSWERS[client].capabilities


async def start(
    client: LanguageClient, root: Path, profile: str, options: dict[str, object] | None = None
) -> None:
    """Initialise a session for one workspace folder as the client ``profile`` would."""
    _ANSWERS[client] = await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities(profile),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=options,
        )
    )


def record_publications(client: LanguageClient) -> list[types.PublishDiagnosticsParams]:
    """Every publishDiagnostics the client receives from now on, in arrival order."""
    seen: list[types.PublishDiagnosticsParams] = []
    handle = client.protocol._handle_notification

    def recording(method: str, params: object) -> None:
        if method == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
            assert isinstance(params, types.PublishDiagnosticsParams)
            seen.append(params)
        handle(method, params)

    client.protocol._handle_notification = recording  # type: ignore[method-assign]
    return seen


async def send_raw(client: LanguageClient, method: str, params: object, timeout: float = 60) -> object:
    """Send a request exactly as given (lsprotocol would refuse to build malformed params)."""
    msg_id = str(uuid.uuid4())
    future: Future[object] = Future()
    client.protocol._request_futures[msg_id] = future
    client.protocol._send_data({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return await asyncio.wait_for(asyncio.wrap_future(future), timeout)


async def pull(client: LanguageClient, uri: str) -> list[types.Diagnostic]:
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport), report
    return list(report.items)


def _offset(text: str, pos: types.Position) -> int:
    lines = text.splitlines(keepends=True)
    off = sum(len(line) for line in lines[: pos.line])
    if pos.line >= len(lines):
        return len(text)
    line = lines[pos.line]
    units = 0
    for i, ch in enumerate(line):
        if units >= pos.character:
            return off + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return off + len(line)


def apply_text_edits(text: str, edits: Sequence[types.TextEdit]) -> str:
    spans = sorted(
        ((_offset(text, e.range.start), _offset(text, e.range.end), e.new_text) for e in edits),
        reverse=True,
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def apply_workspace_edit(text: str, edit: types.WorkspaceEdit) -> str:
    edits: list[types.TextEdit] = []
    for change in edit.document_changes or []:
        assert isinstance(change, types.TextDocumentEdit)
        edits.extend(e for e in change.edits if isinstance(e, types.TextEdit))
    for more in (edit.changes or {}).values():
        edits.extend(more)
    return apply_text_edits(text, edits)


async def wait_for_version(client: LanguageClient, uri: str, version: int) -> list[types.Diagnostic]:
    """Wait for the diagnostics published for exactly this document version."""
    while True:
        params: types.PublishDiagnosticsParams = await client.wait_for_notification(
            types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS
        )
        if params.uri == uri and params.version == version:
            return list(params.diagnostics)
        if params.uri == uri and params.version is not None:
            assert params.version < version, "published for a version newer than the document"


def open_doc(client: LanguageClient, uri: str, text: str, version: int = 1) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            text_document=types.TextDocumentItem(uri=uri, language_id="python", version=version, text=text)
        )
    )


def change_doc(client: LanguageClient, uri: str, text: str, version: int) -> None:
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
        )
    )
