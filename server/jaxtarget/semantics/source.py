"""Turning source text into syntax trees: whole-module and sparse (per top-level chunk).

The sparse parser splits a module at lines that start a top-level statement and
parses only the chunks the analysis asks for, caching each chunk by its text and
first line. A split that is wrong (a column-0 line inside a string or brackets)
makes the chunk before it fail to parse; that chunk is then merged with the next
one, so every chunk that parses is exactly a run of whole top-level statements.
"""

from __future__ import annotations

import ast
import bisect
import heapq
import io
import re
import tokenize
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

from .grammar import parse_modern
from .text import Lines


def parse_recovering(source: str) -> tuple[ast.Module | None, str | None, int | None, int]:
    """Parse, blanking lines that do not parse so that the rest is still analysed.

    Returns the tree, the first syntax error, and its line and (1-based) column.
    """
    try:
        return parse_modern(source), None, None, 1
    except SyntaxError as exc:
        first_error = f"SyntaxError: {exc.msg}"
        first_line = exc.lineno
        first_col = max(exc.offset or 1, 1)
    except (ValueError, RecursionError, MemoryError) as exc:
        return None, f"{type(exc).__name__}: {exc}", 1, 1
    # Python's lines: \r\n, \r or \n ends one (a form feed or U+2028 does not)
    lines = io.StringIO(source, newline="").readlines()
    for _ in range(50):
        try:
            return parse_modern("".join(lines)), first_error, first_line, first_col
        except SyntaxError as exc:
            bad = min((exc.lineno or 1) - 1, len(lines) - 1)
            if bad < 0:
                break
            text = lines[bad]
            ending = text[len(text.rstrip("\r\n")) :] or "\n"
            indent = text[: len(text) - len(text.lstrip(" \t"))]
            replacement = indent + "pass" if text.strip() not in ("", "pass") else ""
            lines[bad] = replacement + ending
        except (ValueError, RecursionError, MemoryError):
            break
    return None, first_error, first_line, first_col


class TokenFacts:
    """What Python's tokenizer says about comments and multi-line strings."""

    def __init__(self, source: str, line_offset: int = 0) -> None:
        """``source`` is the file's text from line ``line_offset + 1`` on (whole statements)."""
        #: line -> (column in code points, comment text)
        self.comments: dict[int, tuple[int, str]] = {}
        #: lines that begin inside a multi-line string token (their text is data)
        self.string_interior: set[int] = set()
        fstring_middle = getattr(tokenize, "FSTRING_MIDDLE", -1)
        try:
            for tok in tokenize.generate_tokens(io.StringIO(source).readline):
                if tok.type == tokenize.COMMENT:
                    self.comments[tok.start[0] + line_offset] = (tok.start[1], tok.string)
                elif tok.type == tokenize.STRING or tok.type == fstring_middle:
                    first, last = tok.start[0] + line_offset, tok.end[0] + line_offset
                    self.string_interior.update(range(first + 1, last + 1))
        except (tokenize.TokenError, SyntaxError):
            pass


class ChunkCache(dict[tuple[int, str], list[ast.stmt]]):
    """What the sparse parse of one document keeps between its versions.

    Parsed chunks keyed by (first line, text), the previous version's text (with its
    identifier and statement-start scans, reused for the untouched text), and what each of
    its chunks binds (reused for the chunks the edit did not touch).
    """

    lines: Lines | None = None
    kinds: ChunkKinds | None = None


@dataclass(frozen=True)
class ChunkKinds:
    """What each top-level statement of one version can bind in module scope."""

    text: Lines
    #: the statements' first lines
    starts: list[int]
    #: the name a def or class binds (its decorators before it); None: not a def or class
    names: list[str | None]
    #: whether the statement spells ``global`` (a def can then bind other names)
    spells_global: list[bool]


_DEF_RE = re.compile(r"^(?:async\s+def|def|class)\s+(\w+)", re.M)
#: the same at the start of a line, spelled with the line break (offset + 1 is the line's start)
_DEF_AFTER_BREAK = re.compile(r"\n(?:async\s+def|def|class)\s+(\w+)")


class SparseModule:
    """A module of which only the requested top-level statements are parsed."""

    def __init__(self, text: Lines, cache: ChunkCache | None = None) -> None:
        self.text = text
        self.cache: ChunkCache = cache if cache is not None else ChunkCache()
        self.used: set[tuple[int, str]] = set()
        self.parsed: dict[int, list[ast.stmt]] = {}
        self.failed = False
        #: True when a merge re-parsed a chunk already handed out (its nodes are stale)
        self.replaced = False
        starts = list(text.statement_starts())
        if not starts or starts[0] != 1:
            starts.insert(0, 1)
        self.starts = starts
        self.n_lines = len(text.starts)
        self._module: ast.Module | None = None
        self._chunk_kinds: ChunkKinds | None = None
        self._anything: list[int] | None = None

    def __contains__(self, line: int) -> bool:
        """Whether the chunk holding ``line`` is parsed."""
        return self._chunk_of(line) in self.parsed

    def chunk_index(self, line: int) -> int:
        return self._chunk_of(line)

    def chunk_last_line(self, line: int) -> int:
        return self._end_line(self._chunk_of(line))

    def _chunk_of(self, line: int) -> int:
        return bisect.bisect_right(self.starts, line) - 1

    def _end_line(self, k: int) -> int:
        return self.starts[k + 1] - 1 if k + 1 < len(self.starts) else self.n_lines

    def chunk_first_line(self, line: int) -> str:
        return self.text.text(self.starts[self._chunk_of(line)])

    def chunk_text(self, line: int) -> str:
        k = self._chunk_of(line)
        return self.text.source[self.text.offset(self.starts[k]) : self.text.offset(self._end_line(k) + 1)]

    def ensure(self, lines: Iterable[int]) -> bool:
        """Parse the chunks covering ``lines``; True if anything new was parsed."""
        added = False
        for line in lines:
            k = self._chunk_of(line)
            if k not in self.parsed and not self.failed:
                self._parse_from(k)
                added = True
        if added:
            self._module = None
        return added

    def _parse_from(self, k: int) -> None:
        first = self.starts[k]
        source = self.text.source
        for j in range(k, len(self.starts)):
            last = self._end_line(j)
            chunk = source[self.text.offset(first) : self.text.offset(last + 1)]
            key = (first, chunk)
            stmts = self.cache.get(key)
            if stmts is None:
                try:
                    # blank lines before the chunk give its nodes their line numbers (cheaper
                    # than shifting every node afterwards)
                    tree = parse_modern("\n" * (first - 1) + chunk)
                except SyntaxError:
                    continue
                except (ValueError, RecursionError, MemoryError):
                    break
                stmts = tree.body
                self.cache[key] = stmts
            self.used.add(key)
            for idx in range(k, j + 1):
                if idx != k and idx in self.parsed:
                    self.replaced = True
                self.parsed[idx] = stmts if idx == k else []
            return
        self.failed = True

    def is_definition(self, line: int) -> bool:
        """Whether the top-level statement holding ``line`` is a def, class or decorated one."""
        return self.chunk_first_line(line).startswith(("def ", "async ", "class ", "@"))

    def defined_name(self, line: int) -> str | None:
        """The name the def or class holding ``line`` binds (None: another statement)."""
        return self._kinds().names[self._chunk_of(line)]

    def may_bind_module_name(self, line: int, name: str) -> bool:
        """Whether the top-level statement holding ``line`` can bind ``name`` in module scope.

        A def/class statement binds only its own name, unless its body declares the
        name global; every other statement might bind anything it mentions.
        """
        k = self._chunk_of(line)
        kinds = self._kinds()
        binds = kinds.names[k]
        if binds is None or binds == name:
            return True
        if not kinds.spells_global[k]:
            return False
        return re.search(rf"\bglobal\b[^\n]*\b{re.escape(name)}\b", self.chunk_text(line)) is not None

    def binding_lines(self, lines: Sequence[int], name: str) -> list[int]:
        """The first of ``lines`` (sorted) in each top-level statement that can bind ``name``
        in module scope (``may_bind_module_name``), asking only the statements that are not
        a def or class of another name."""
        kinds = self._kinds()
        if self._anything is None:
            # statements that may bind any name: not a def or class, or spelling ``global``
            self._anything = [
                k
                for k, (bound, spells) in enumerate(zip(kinds.names, kinds.spells_global, strict=True))
                if bound is None or spells
            ]
        own = [k for k, bound in enumerate(kinds.names) if bound == name and not kinds.spells_global[k]]
        found: list[int] = []
        for k in heapq.merge(self._anything, own):
            at = bisect.bisect_left(lines, self.starts[k])
            inside = at < len(lines) and lines[at] <= self._end_line(k)
            if inside and (kinds.names[k] == name or self.may_bind_module_name(lines[at], name)):
                found.append(lines[at])
        return found

    def _kinds(self) -> ChunkKinds:
        """What each chunk binds, read again only for the chunks an edit touched since the
        version the cache holds."""
        if self._chunk_kinds is None:
            n = len(self.starts)
            names: list[str | None] = [None] * n
            spells_global = [False] * n
            head, tail, old = 0, n, self._kept_kinds()
            if old is not None:
                head, tail, moved = old
                kept = self.cache.kinds
                assert kept is not None
                names[:head], spells_global[:head] = kept.names[:head], kept.spells_global[:head]
                names[tail:], spells_global[tail:] = (
                    kept.names[tail + moved :],
                    kept.spells_global[tail + moved :],
                )
            for k in range(head, tail):
                names[k], spells_global[k] = self._read_chunk(k)
            self._chunk_kinds = ChunkKinds(self.text, self.starts, names, spells_global)
            self.cache.kinds = self._chunk_kinds
        return self._chunk_kinds

    def _kept_kinds(self) -> tuple[int, int, int] | None:
        """The chunks ``[0, head)`` and ``[tail, n)`` the edit left whole, with how many chunks
        the edit removed (``tail + moved`` is the same chunk in the kept version); None: the
        cache holds no version this one was edited from."""
        kept, common = self.cache.kinds, self.text.common_with_previous()
        if kept is None or common is None or common[0] is not kept.text:
            return None
        old_text, prefix, suffix = common
        new, old = self.starts, kept.starts
        # chunks that end before the first changed character
        head = max(bisect.bisect_right(new, self.text.line_of(prefix)) - 1, 0)
        # chunks that start after the last changed character, the line break before them kept too
        first_after = self.text.line_of(len(self.text.source) - suffix) + 1
        tail = bisect.bisect_left(new, first_after)
        moved = len(old) - len(new)
        lines_moved = len(self.text.starts) - len(old_text.starts)
        if (
            head > tail
            or tail + moved < head
            or new[: head + 1] != old[: head + 1]
            or any(a != b + lines_moved for a, b in zip(new[tail:], old[tail + moved :], strict=True))
        ):
            return None
        return head, tail, moved

    def _read_chunk(self, k: int) -> tuple[str | None, bool]:
        """The name chunk ``k`` binds if it is a def or class, and whether it spells ``global``."""
        source, offset = self.text.source, self.text.offset
        at, end = offset(self.starts[k]), offset(self._end_line(k) + 1)
        m = None
        if source.startswith(("def ", "async ", "class "), at):
            m = _DEF_RE.match(source, at)
        elif source.startswith("@", at):  # the first def or class at column 0 in the chunk
            m = _DEF_AFTER_BREAK.search(source, at, end)
        return (m.group(1) if m is not None else None), source.find("global", at, end) >= 0

    def module(self) -> ast.Module:
        if self._module is None:
            body: list[ast.stmt] = []
            for k in sorted(self.parsed):
                body.extend(self.parsed[k])
            self._module = ast.Module(body=body, type_ignores=[])
        return self._module

    def prune_cache(self) -> None:
        """Forget cached chunks this version did not use (keeps memory bounded per document)."""
        for key in [k for k in self.cache if k not in self.used]:
            del self.cache[key]


class FullView:
    """The whole-module counterpart of SparseModule: everything is parsed already."""

    failed = False
    replaced = False

    def __init__(self, tree: ast.Module) -> None:
        self.tree = tree
        self._firsts: list[int] | None = None

    def ensure(self, lines: Iterable[int]) -> bool:
        return False

    def __contains__(self, line: int) -> bool:
        return True

    def module(self) -> ast.Module:
        return self.tree

    def may_bind_module_name(self, line: int, name: str) -> bool:
        return True

    def binding_lines(self, lines: Sequence[int], name: str) -> list[int]:
        """The first of ``lines`` in each top-level statement (any may bind ``name``)."""
        found: list[int] = []
        for ln in lines:
            if not found or self.chunk_index(ln) != self.chunk_index(found[-1]):
                found.append(ln)
        return found

    def is_definition(self, line: int) -> bool:
        return False

    def defined_name(self, line: int) -> str | None:
        return None  # everything is parsed: no definition is ever looked for

    def chunk_index(self, line: int) -> int:
        """The index of the top-level statement holding ``line`` (its decorators included)."""
        if self._firsts is None:
            self._firsts = [
                min([s.lineno, *(d.lineno for d in getattr(s, "decorator_list", ()))]) for s in self.tree.body
            ]
        return max(bisect.bisect_right(self._firsts, line) - 1, 0)

    def chunk_last_line(self, line: int) -> int:
        if not self.tree.body:
            return line
        return self.tree.body[self.chunk_index(line)].end_lineno or line


class SourceView(Protocol):
    """What the analysis needs of a parsed module, whole or sparse."""

    @property
    def failed(self) -> bool: ...

    @property
    def replaced(self) -> bool: ...

    def ensure(self, lines: Iterable[int]) -> bool: ...

    def __contains__(self, line: int) -> bool: ...

    def module(self) -> ast.Module: ...

    def may_bind_module_name(self, line: int, name: str) -> bool: ...

    def binding_lines(self, lines: Sequence[int], name: str) -> list[int]: ...

    def is_definition(self, line: int) -> bool: ...

    def defined_name(self, line: int) -> str | None: ...

    def chunk_index(self, line: int) -> int: ...

    def chunk_last_line(self, line: int) -> int:
        """The last line of the top-level statement (chunk) holding ``line``."""
        ...
