"""Helpers for driving the server with pytest-lsp's real stdio client."""

from __future__ import annotations

import sys
from collections.abc import Sequence

from lsprotocol import types
from pytest_lsp import ClientServerConfig, LanguageClient

SERVER = ClientServerConfig(server_command=[sys.executable, "-m", "jaxtarget", "lsp", "--stdio"])


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
