"""Engine results to LSP types. The one place that converts positions.

The engine speaks 1-based lines and code-point columns; LSP speaks 0-based
lines and the negotiated encoding (UTF-16 by default), which pygls's position
codec converts.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsprotocol import types
from pygls.workspace import PositionCodec

from ..model import Edit, Finding, Span
from ..rules.registry import RULES_BY_CODE

SOURCE = "jaxtarget"

_SEVERITY = {
    "error": types.DiagnosticSeverity.Error,
    "warning": types.DiagnosticSeverity.Warning,
    "information": types.DiagnosticSeverity.Information,
    "hint": types.DiagnosticSeverity.Hint,
}


def _position(codec: PositionCodec, lines: Sequence[str], line: int, col: int) -> types.Position:
    if col == 0 or line - 1 >= len(lines):
        return types.Position(line=line - 1, character=0)
    return codec.position_to_client_units(lines, types.Position(line=line - 1, character=col))


def to_range(codec: PositionCodec, lines: Sequence[str], span: Span) -> types.Range:
    return types.Range(
        start=_position(codec, lines, span.line, span.col),
        end=_position(codec, lines, span.end_line, span.end_col),
    )


def from_position(codec: PositionCodec, lines: Sequence[str], position: types.Position) -> tuple[int, int]:
    """Client position to the engine's (1-based line, code-point column)."""
    if position.line >= len(lines):
        return position.line + 1, 0
    server = codec.position_from_client_units(lines, position)
    return server.line + 1, server.character


def diagnostic(
    codec: PositionCodec, lines: Sequence[str], uri: str, version: int | None, finding: Finding
) -> types.Diagnostic:
    """The diagnostic for a finding; ``data`` names the finding in that document version."""
    rule = RULES_BY_CODE[finding.code]
    related = [
        types.DiagnosticRelatedInformation(
            location=types.Location(uri=uri, range=to_range(codec, lines, span)), message=text
        )
        for span, text in finding.related
    ]
    return types.Diagnostic(
        range=to_range(codec, lines, finding.span),
        message=finding.message,
        severity=_SEVERITY[finding.severity],
        code=finding.code,
        code_description=types.CodeDescription(href=rule.url),
        source=SOURCE,
        related_information=related or None,
        data={"id": finding.id, "version": version, "api": finding.api, "failing": list(finding.failing)},
    )


def text_edits(codec: PositionCodec, lines: Sequence[str], edits: Sequence[Edit]) -> list[types.TextEdit]:
    return [
        types.TextEdit(
            range=types.Range(
                start=_position(codec, lines, e.start_line, e.start_col),
                end=_position(codec, lines, e.end_line, e.end_col),
            ),
            new_text=e.new_text,
        )
        for e in edits
    ]


def workspace_edit(uri: str, version: int | None, edits: list[types.TextEdit]) -> types.WorkspaceEdit:
    return types.WorkspaceEdit(
        document_changes=[
            types.TextDocumentEdit(
                text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                edits=list(edits),
            )
        ]
    )


def minimal_edit(old: str, new: str) -> list[types.TextEdit]:
    """One edit replacing only the whole lines where ``old`` and ``new`` differ."""
    if old == new:
        return []
    a, b = old.splitlines(keepends=True), new.splitlines(keepends=True)
    p = 0
    while p < min(len(a), len(b)) and a[p] == b[p]:
        p += 1
    s = 0
    while s < min(len(a), len(b)) - p and a[-1 - s] == b[-1 - s]:
        s += 1
    return [
        types.TextEdit(
            range=types.Range(
                start=types.Position(line=p, character=0),
                end=types.Position(line=len(a) - s, character=0),
            ),
            new_text="".join(b[p : len(b) - s]),
        )
    ]
