"""Source text without a parse: lines, identifier occurrences and top-level statement starts.

Each scan can start from the previous version of the same document: the text an
edit left alone (the common prefix and suffix) keeps its results, and only the
edited stretch is scanned again. Incremental and from-scratch results are equal.
"""

from __future__ import annotations

import bisect
import itertools
import re
from collections.abc import Iterable
from typing import NamedTuple

_NEWLINE = re.compile(r"\r\n|\r|\n")
#: a maximal run of identifier characters (``\w`` is exactly ``str.isalnum()`` or ``_``)
_WORD = re.compile(r"\w+")
#: characters str.splitlines splits on but Python's tokenizer does not
_ODD_CHARS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"


def _split_starts(source: str, begin: int, end: int, last: bool = True) -> list[int]:
    """Offsets of the lines starting in ``source[begin:end]``, ``begin`` a line start (the text
    holds no odd break). ``last``: ``end`` is the text's end, a start if a line break ends the
    text; otherwise ``end`` is a line start that is left out."""
    starts = list(itertools.accumulate(map(len, source[begin:end].splitlines(keepends=True)), initial=begin))
    if not last or (starts[-1] == len(source) and source and source[-1] not in "\r\n"):
        starts.pop()  # the next line's start, or the end of a last line without a line break
    return starts


#: Lines that may start a top-level statement (column 0, not a comment,
#: closing bracket or the continuation of a compound statement).
_CHUNK_START = re.compile(r"^(?![ \t\f#)\]}\r\n]|(?:else|elif|except|finally)\b)", re.M)
#: how far past a line start _CHUNK_START looks
_LOOKAHEAD = 16

#: Comments and string literals, whole (triple-quoted ones across lines).
_STRING_OR_COMMENT = re.compile(
    r"#[^\r\n]*"
    r'|"""(?:[^"\\]|\\[\s\S]|"(?!""))*"""'
    r"|'\'\'(?:[^'\\]|\\[\s\S]|'(?!''))*'\'\'"
    r'|"(?:[^"\\\r\n]|\\(?:\r\n|[\s\S]))*"'
    r"|'(?:[^'\\\r\n]|\\(?:\r\n|[\s\S]))*'"
)
_OPEN = "([{"
_CLOSE = ")]}"


def common_ends(a: str, b: str) -> tuple[int, int]:
    """Lengths of the longest common prefix and the longest common suffix not overlapping it."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # a[:lo] == b[:lo]; each probe compares only the undecided stretch
        mid = (lo + hi + 1) // 2
        if a.startswith(b[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    prefix = lo
    na, nb = len(a), len(b)
    lo, hi = 0, min(na, nb) - prefix
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a.endswith(b[nb - mid : nb - lo], 0, na - lo):
            lo = mid
        else:
            hi = mid - 1
    return prefix, lo


def _is_ident(c: str) -> bool:
    return c.isalnum() or c == "_"


def _find_word(source: str, word: str, start: int, stop: int) -> list[int]:
    """Offsets in [start, stop) where ``word`` occurs as a whole identifier."""
    n, size = len(word), len(source)
    found: list[int] = []
    end = min(size, stop + n - 1)  # an occurrence starting before ``stop`` ends by here
    i = source.find(word, max(start, 0), end)
    while i != -1:
        if not (i and _is_ident(source[i - 1])) and not (i + n < size and _is_ident(source[i + n])):
            found.append(i)
        i = source.find(word, i + n, end)
    return found


class Lines:
    """Line starts for the source, split the way Python's tokenizer splits.

    ``previous`` is an earlier version of the same document: identifier scans and
    statement starts then reuse what it found in the text the edit did not touch.
    """

    def __init__(self, source: str, previous: Lines | None = None) -> None:
        self.source = source
        #: word -> (offsets, lines) of its whole-identifier occurrences
        self._hits: dict[str, tuple[list[int], list[int]]] = {}
        self._words: dict[str, list[int]] = {}
        self._starts: list[int] | None = None
        self._fragile: list[int] = []
        self._previous: Lines | None = previous
        if previous is not None:
            previous._previous = None  # keep one version back, not a chain
        self._ends: tuple[int, int] | None = None
        #: every identifier-like word of the text (built once, for a text scanned from scratch,
        #: until ``drop_vocabulary``)
        self._vocabulary: frozenset[str] | None = None
        self._vocabulary_dropped = False
        #: whether the text holds a character str.splitlines breaks on and the tokenizer does not
        self.odd = any(c in source for c in _ODD_CHARS)
        if self.odd:
            self.starts = [0] + [m.end() for m in _NEWLINE.finditer(source)]
        elif previous is not None and not previous.odd and source and previous.source:
            self.starts = self._starts_after_edit(previous)
        else:
            self.starts = _split_starts(source, 0, len(source))

    def _starts_after_edit(self, prev: Lines) -> list[int]:
        """The line starts, those of ``prev`` kept in the text the edit did not touch."""
        prefix, suffix = self._ends = common_ends(prev.source, self.source)
        old, shift = prev.starts, len(self.source) - len(prev.source)
        # a start whose break before it and first character are both untouched is kept
        i = bisect.bisect_left(old, prefix)  # old[:i] start before the edit
        j = bisect.bisect_right(old, len(prev.source) - suffix)  # old[j:] start after it
        begin = old[i - 1] if i else 0
        head = old[: i - 1] if i else []
        if j < len(old):
            end = old[j] + shift
            middle = _split_starts(self.source, begin, end, last=False)
            return [*head, *middle, *map(shift.__add__, old[j:])]
        return [*head, *_split_starts(self.source, begin, len(self.source))]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def offset(self, line: int) -> int:
        return self.starts[line - 1] if line <= len(self.starts) else len(self.source)

    def text(self, line: int) -> str:
        start = self.starts[line - 1]
        end = self.starts[line] if line < len(self.starts) else len(self.source)
        return self.source[start:end].rstrip("\r\n")

    def char_col(self, line: int, byte_col: int) -> int:
        text = self.text(line)
        if text.isascii():
            return byte_col
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="replace"))

    def common_with_previous(self) -> tuple[Lines, int, int] | None:
        """The previous version and the lengths of the prefix and suffix shared with it."""
        return self._common()

    def _common(self) -> tuple[Lines, int, int] | None:
        """The previous version and the lengths of the prefix and suffix shared with it."""
        prev = self._previous
        if prev is None:
            return None
        if self._ends is None:
            self._ends = common_ends(prev.source, self.source)
        return prev, *self._ends

    def word_lines(self, word: str) -> list[int]:
        """Lines on which ``word`` occurs as a whole identifier (memoised per word)."""
        lines = self._words.get(word)
        if lines is None:
            lines = self._words[word] = list(dict.fromkeys(self._word_hits(word)[1]))
        return lines

    def _word_hits(self, word: str) -> tuple[list[int], list[int]]:
        hits = self._hits.get(word)
        if hits is not None:
            return hits
        common = self._common()
        old = common[0]._hits.get(word) if common else None
        if common is None and not self._spells(word):
            hits = [], []
        elif common is None or old is None:
            offsets = _find_word(self.source, word, 0, len(self.source))
            hits = offsets, [self.line_of(i) for i in offsets]
        else:
            prev, prefix, suffix = common
            # an occurrence is unchanged if it and the characters either side of it are
            n, old_size, shift = len(word), len(prev.source), len(self.source) - len(prev.source)
            old_offsets, old_lines = old
            keep = bisect.bisect_left(old_offsets, prefix - n)
            tail = bisect.bisect_left(old_offsets, old_size - suffix + 1)
            middle = _find_word(self.source, word, prefix - n, old_size - suffix + 1 + shift)
            offsets = old_offsets[:keep] + middle + [i + shift for i in old_offsets[tail:]]
            lines = old_lines[:keep] + [self.line_of(i) for i in middle]
            if tail < len(old_offsets):
                moved = self.line_of(old_offsets[tail] + shift) - old_lines[tail]
                lines += [ln + moved for ln in old_lines[tail:]]
            hits = offsets, lines
        self._hits[word] = hits
        return hits

    def _spells(self, word: str) -> bool:
        """Whether ``word`` may occur as a whole identifier: one pass over the text answers
        every word, where a search per word would scan the whole text for each absent one."""
        if self._vocabulary_dropped:
            return True
        if self._vocabulary is None:
            self._vocabulary = frozenset(_WORD.findall(self.source))
        return word in self._vocabulary or not word.isidentifier()

    def drop_vocabulary(self) -> None:
        """Free the word set once the burst of lookups is over (a document kept open would
        hold it): later lookups of a word search the text."""
        self._vocabulary = None
        self._vocabulary_dropped = True

    def statement_starts(self) -> list[int]:
        """Lines that start a top-level statement, read from the code outside strings.

        A column-0 line counts unless it is inside a string, inside brackets, after a
        backslash continuation, a compound statement's continuation (else, except, ...)
        or the definition line of a decorated function or class.
        """
        if self._starts is None:
            common = self._common()
            scan = _scan_after_edit(self, *common) if common is not None else None
            if scan is None:
                scan = _scan_starts(self.source, 0, len(self.source))
            self._starts, self._fragile = scan.starts, scan.fragile
        return self._starts


class _Scan(NamedTuple):
    #: statement-start lines
    starts: list[int]
    #: lines where the reading of a quote depends on text far after it: an unclosed
    #: quote, or a triple quote read as an empty string because nothing closes it
    fragile: list[int]
    #: whether the scan ended on a clean cut (see _scan_starts)
    clean: bool


def _scan_after_edit(new: Lines, old: Lines, prefix: int, suffix: int) -> _Scan | None:
    """The statement starts of ``new`` from those of ``old`` (None: scan from scratch)."""
    if old._starts is None:
        return None
    old_starts, old_size, shift = old._starts, len(old.source), len(new.source) - len(old.source)
    # rescan from the last start the edit cannot have changed ...
    k = bisect.bisect_right(old_starts, old.line_of(prefix - _LOOKAHEAD)) - 1
    begin_line = old_starts[k] if k >= 0 else 1
    if old._fragile and old._fragile[0] < begin_line:
        return None  # how the text before the edit reads may depend on the edit
    begin = old.offset(begin_line) if k >= 0 else 0
    head = old_starts[: max(k, 0)]
    # ... to a start in the untouched suffix where the scan is back in step
    first_kept = bisect.bisect_left(old_starts, old.line_of(old_size - suffix) + 1)
    window = 1
    while first_kept < len(old_starts):
        old_line = old_starts[first_kept]
        end = old.offset(old_line) + shift
        if end >= len(new.source):
            break
        scan = _scan_starts(new.source, begin, end)
        if scan.clean:
            moved = new.line_of(end) - old_line
            return _Scan(
                head
                + [ln + begin_line - 1 for ln in scan.starts]
                + [ln + moved for ln in old_starts[first_kept:]],
                [ln + begin_line - 1 for ln in scan.fragile]
                + [ln + moved for ln in old._fragile if ln >= old_line],
                True,
            )
        first_kept += window
        window *= 2
    scan = _scan_starts(new.source, begin, len(new.source))
    return _Scan(
        head + [ln + begin_line - 1 for ln in scan.starts], [ln + begin_line - 1 for ln in scan.fragile], True
    )


def _scan_starts(source: str, begin: int, end: int) -> _Scan:
    """Statement starts in ``source[begin:end]`` (lines counted from ``begin``'s line).

    ``begin`` must be a statement start. ``clean`` says whether ``end`` is a clean
    cut: a line outside any string or bracket that starts a statement when the scan
    goes on, so that what follows it scans as it did before.
    """
    pieces: list[str] = []
    size = 0  # of the pieces so far
    failed_triples: list[int] = []  # offsets in the code
    prev = begin
    clean = True
    for m in _STRING_OR_COMMENT.finditer(source, begin):
        start, stop = m.span()
        if start >= end:
            break
        if stop > end:
            clean = False
            break
        piece = source[prev:start]
        breaks = source.count("\n", start, stop)
        if "\r" in m.group():  # count line breaks as Lines does (a lone \r is one too)
            breaks = len(_NEWLINE.findall(source, start, stop))
        if breaks:
            # the line the string ends on begins inside it: never a statement start
            # (``\r`` breaks cannot merge with a ``\r`` before them into one ``\r\n``)
            stand_in = "\r" * breaks + " "
        else:  # a stand-in, so that a ``\r`` before and a ``\n`` after stay two breaks
            stand_in = " " if source.startswith("#", start) else "0"
            if stop - start == 2 and source.startswith(source[start], stop):
                failed_triples.append(size + len(piece))
        pieces += (piece, stand_in)
        size += len(piece) + len(stand_in)
        prev = stop
    pieces.append(source[prev:end])
    code = "".join(pieces)
    lines = Lines(code)
    fragile = failed_triples
    for quote in "\"'":
        at = code.find(quote)
        while at != -1:
            fragile.append(at)
            at = code.find(quote, at + 1)
    candidates: list[int] = []
    decorated = False
    for m in _CHUNK_START.finditer(code):
        at = m.start()
        if at == len(code):
            break  # past the last line break: no line (or, at ``end``, the next scan's)
        # a decorated definition is one statement: keep its decorators with it
        if decorated:
            if code.startswith("@", at):
                continue
            if code.startswith(("def ", "async ", "class "), at):
                decorated = False
                continue
        decorated = code.startswith("@", at)
        line = lines.line_of(at)
        if not candidates or line != candidates[-1]:
            candidates.append(line)
    starts: list[int] = []
    depth = 0
    previous = 0
    for line in [*candidates, 0]:
        offset = lines.offset(line) if line else len(code)
        between = code[previous:offset]
        depth += sum(between.count(c) for c in _OPEN) - sum(between.count(c) for c in _CLOSE)
        depth = max(depth, 0)
        previous = offset
        if depth == 0 and not between.rstrip().endswith("\\"):
            if line:
                starts.append(line)
        elif not line:
            clean = False
    return _Scan(starts, sorted({lines.line_of(at) for at in fragile}), clean and not decorated)


def lines_with_words(text: Lines, words: Iterable[str]) -> list[int]:
    """Lines on which any of ``words`` occurs as a whole identifier."""
    found: set[int] = set()
    for word in words:
        found.update(text.word_lines(word))
    return sorted(found)


def lines_where(text: Lines, words: Iterable[str], pattern: re.Pattern[str]) -> list[int]:
    """Lines holding one of ``words`` (from the word index) whose text ``pattern`` matches."""
    return [ln for ln in lines_with_words(text, words) if pattern.search(text.text(ln))]
