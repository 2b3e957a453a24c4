"""Open documents whose edits cost what the edit touches, not the file.

pygls's TextDocument applies an incremental change by splitting the whole text into
lines and writing every line again, and splits the text afresh each time its ``lines``
are read: at 50,000 lines that is tens of milliseconds per keystroke and per
diagnostics conversion. Here a document keeps its line starts, applies a change as one
splice of the text and a splice of the starts, and hands out its lines as a view that
slices a line only when asked.

Lines are counted as LSP counts them (``\\n``, ``\\r\\n``, ``\\r``), which is also how the
engine counts them; ``str.splitlines`` would break at form feeds and other separators too.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Sequence
from typing import Any, overload

from lsprotocol import types
from pygls.workspace import TextDocument, Workspace

_BREAK = re.compile(r"\r\n|\r|\n")


def line_starts(source: str, begin: int = 0, end: int | None = None) -> list[int]:
    """Offsets where the lines after a line break in ``source[begin:end]`` start (LSP's breaks)."""
    return [m.end() for m in _BREAK.finditer(source, begin, len(source) if end is None else end)]


class LineView(Sequence[str]):
    """The lines of a text, each with its line break, sliced from the text when asked.

    A text ending with a line break has an empty last line (the cursor can be there).
    """

    def __init__(self, source: str, starts: list[int]) -> None:
        self.source = source
        self.starts = starts

    def __len__(self) -> int:
        return len(self.starts)

    @overload
    def __getitem__(self, index: int) -> str: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[str]: ...

    def __getitem__(self, index: int | slice) -> str | Sequence[str]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self.starts)
        if not 0 <= index < len(self.starts):
            raise IndexError(index)
        end = self.starts[index + 1] if index + 1 < len(self.starts) else len(self.source)
        return self.source[self.starts[index] : end]

    def content_end(self, index: int) -> int:
        """The offset where line ``index``'s text ends, before its line break."""
        return self.starts[index] + len(self[index].rstrip("\r\n"))


class IndexedDocument(TextDocument):
    """A text document that keeps its line starts between versions."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._starts: list[int] | None = None
        self._starts_of: str | None = None

    @property
    def lines(self) -> LineView:
        source = self.source
        if self._starts is None or self._starts_of is not source:
            self._starts, self._starts_of = [0, *line_starts(source)], source
        return LineView(source, self._starts)

    def snapshot(self) -> IndexedDocument:
        """A copy of this version (the open document changes in place on didChange)."""
        copy = IndexedDocument(
            self.uri, self.source, self.version, self.language_id, position_codec=self.position_codec
        )
        copy._starts, copy._starts_of = self._starts, self._starts_of
        return copy

    def _offset(self, lines: LineView, position: types.Position) -> int:
        if position.line >= len(lines):
            return len(lines.source)
        server = self.position_codec.position_from_client_units(lines, position)
        return min(lines.starts[position.line] + server.character, lines.content_end(position.line))

    def _apply_incremental_change(self, change: types.TextDocumentContentChangePartial) -> None:
        lines = self.lines
        source, starts = lines.source, lines.starts
        start, end = self._offset(lines, change.range.start), self._offset(lines, change.range.end)
        start, end = min(start, end), max(start, end)
        text = change.text
        new = source[:start] + text + source[end:]
        # a break that could join one outside the edit (``\r`` + ``\n``): split the text afresh
        if (start > 0 and source[start - 1] == "\r") or (
            text.endswith("\r") and source.startswith("\n", end)
        ):
            self._source, self._starts = new, None
            return
        first = bisect.bisect_right(starts, start)  # starts[:first] are at or before the edit
        after = bisect.bisect_right(starts, end)  # starts[after:] follow the edit
        shift = len(text) - (end - start)
        self._starts = [
            *starts[:first],
            *(start + offset for offset in line_starts(text)),
            *map(shift.__add__, starts[after:]),
        ]
        self._source = self._starts_of = new


class IndexedWorkspace(Workspace):
    """pygls's workspace, whose text documents are IndexedDocuments."""

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return IndexedDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self._position_codec,
        )
