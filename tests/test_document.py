"""Open documents keep their line starts between versions (lsp/document.py).

After any sequence of incremental changes, a document's text equals pygls's own
TextDocument given the same changes (where both count lines alike: no form feed or other
separator that only str.splitlines breaks at, positions inside a line), and its line starts
equal those of its text split afresh; positions past a line's end or past the last line
land where LSP says (the line's end, the text's end).
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.workspace import TextDocument

from jaxtarget.lsp.document import IndexedDocument, line_starts

_TEXT = st.text(alphabet="ab \n\r\té😋", max_size=30)
_ODD = st.text(alphabet="ab\n\r\x0c\x0b\u2028\x85é", max_size=30)


def _change(
    line: int, col: int, end_line: int, end_col: int, text: str
) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(types.Position(line, col), types.Position(end_line, end_col)), text=text
    )


def _inside(doc: TextDocument, line: int, col: int) -> tuple[int, int]:
    """A position inside the text of a line of ``doc`` (in UTF-16 units, as clients send)."""
    lines = doc.source.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    line %= len(lines)
    content = lines[line]
    # a column between whole characters, counted in UTF-16 code units
    chars = col % (len(content) + 1)
    return line, len(content[:chars].encode("utf-16-le")) // 2


@settings(max_examples=300, deadline=None)
@given(
    _TEXT,
    st.lists(
        st.tuples(st.integers(0, 40), st.integers(0, 40), st.integers(0, 3), st.integers(0, 40), _TEXT),
        max_size=6,
    ),
)
def test_changes_inside_lines_give_pygls_text_and_fresh_line_starts(
    source: str, changes: list[tuple[int, int, int, int, str]]
) -> None:
    ours = IndexedDocument("file:///m.py", source, 1)
    theirs = TextDocument("file:///m.py", source, 1)
    for line, col, more, end_col, text in changes:
        start = _inside(theirs, line, col)
        end = _inside(theirs, start[0] + more, end_col)
        if end < start:
            start, end = end, start
        change = _change(*start, *end, text)
        ours.apply_change(change)
        theirs.apply_change(_change(*start, *end, text))
        assert ours.source == theirs.source, (source, changes)
        assert ours.lines.starts == [0, *line_starts(ours.source)]
        assert "".join(ours.lines) == ours.source


@settings(max_examples=300, deadline=None)
@given(
    _ODD,
    st.lists(
        st.tuples(st.integers(0, 12), st.integers(0, 40), st.integers(0, 12), st.integers(0, 40), _ODD),
        max_size=6,
    ),
)
def test_any_change_leaves_line_starts_equal_to_a_fresh_split(
    source: str, changes: list[tuple[int, int, int, int, str]]
) -> None:
    doc = IndexedDocument("file:///m.py", source, 1)
    for change in changes:
        doc.apply_change(_change(*change))
        lines = doc.lines
        assert lines.starts == [0, *line_starts(doc.source)], (source, changes)
        assert "".join(lines) == doc.source
        # only LSP's breaks end a line
        assert all(not line.rstrip("\r\n").count("\n") and "\r" not in line.rstrip("\r\n") for line in lines)


def test_positions_past_a_line_or_the_text_land_at_their_end() -> None:
    doc = IndexedDocument("file:///m.py", "ab\r\ncd\x0cef\n", 1)
    assert list(doc.lines) == ["ab\r\n", "cd\x0cef\n", ""]  # a form feed breaks no line
    doc.apply_change(_change(0, 99, 0, 99, "X"))  # past the end of line 0: at its end, before \r\n
    assert doc.source == "abX\r\ncd\x0cef\n"
    doc.apply_change(_change(7, 0, 9, 0, "Y"))  # past the last line: at the end
    assert doc.source == "abX\r\ncd\x0cef\nY"
    doc.apply_change(_change(1, 3, 0, 1, ""))  # a reversed range is the same range
    assert doc.source == "aef\nY"
    assert doc.lines.starts == [0, 4]


def test_a_snapshot_keeps_its_version_while_the_document_changes() -> None:
    doc = IndexedDocument("file:///m.py", "a\nb\n", 1)
    snap = doc.snapshot()
    doc.apply_change(_change(1, 0, 1, 0, "x\n"))
    assert (snap.source, list(snap.lines)) == ("a\nb\n", ["a\n", "b\n", ""])
    assert (doc.source, list(doc.lines)) == ("a\nx\nb\n", ["a\n", "x\n", "b\n", ""])
