"""Modules in grammar newer than the running Python, rewritten in place so it parses them.

Real JAX code uses Python 3.12's PEP 695 type parameters and ``type`` aliases and PEP 701
f-strings; a checker running on Python 3.10 or 3.11 must still find the calls in such
files, at their own lines and columns. Each rewrite keeps the text's length and line
breaks: type parameter lists become spaces, ``type X = ...`` becomes ``if 1:X = ...``,
and an f-string only Python 3.12 reads becomes a plain string of spaces.
"""

from __future__ import annotations

import ast
import re

#: PEP 695 type parameters (``def f[T](x)``, ``class C[T = int]:``) and ``type X = ...`` aliases
_TYPE_PARAMS = re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w+[ \t]*(?=\[)", re.M)
_TYPE_ALIAS = re.compile(r"^([ \t]*)type[ \t](?=[ \t]*\w+[ \t]*[\[=])", re.M)


def _blank_brackets(chars: list[str], start: int) -> None:
    """Blank ``[...]`` starting at ``start`` with spaces (line breaks kept), so columns stay put.

    A list spread over lines (``def f[\\n    T: Array,\\n](x)``) no longer holds the line
    breaks inside brackets once blanked: each blanked line ends in a backslash instead, which
    joins it to the next one as the brackets did.
    """
    depth = 0
    for i in range(start, len(chars)):
        c = chars[i]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        if c not in "\r\n":
            chars[i] = " "
        elif i > start and chars[i - 1] == " ":
            chars[i - 1] = "\\"
        if depth == 0:
            return


def older_grammar(source: str) -> str | None:
    """The module with newer-than-running-Python syntax rewritten, positions kept (None: nothing to do).

    Type parameter lists become spaces (``def f   (x)`` is valid Python) and a
    ``type X = ...`` statement becomes ``if 1:X = ...``, both the same length.
    """
    if "[" not in source and "type" not in source:
        return None
    chars = list(source)
    changed = False
    for m in _TYPE_ALIAS.finditer(source):
        at = m.start() + len(m.group(1))
        chars[at : at + 5] = list("if 1:")
        rest = source[at + 5 :]
        bracket = re.match(r"[ \t]*\w+[ \t]*\[", rest)
        if bracket:
            _blank_brackets(chars, at + 5 + bracket.end() - 1)
        changed = True
    for m in _TYPE_PARAMS.finditer(source):
        _blank_brackets(chars, m.end())
        changed = True
    return "".join(chars) if changed else None


#: where an f-string may start: its prefix (``f``, ``rf``, ``Fr``...) and its quote
_FSTRING_START = re.compile(r"(?<![\w'\"])(?:[rR][fF]|[fF][rR]?)(\'\'\'|\"\"\"|'|\")")


def _prefix_before(source: str, at: int) -> str:
    """The string prefix (``f``, ``rb``...) just before the quote at ``at``, lower-cased."""
    k = at
    while k > 0 and at - k < 2 and source[k - 1] in "rRbBuUfF":
        k -= 1
    if k > 0 and (source[k - 1].isalnum() or source[k - 1] == "_"):
        return ""  # the end of a name, not a prefix
    return source[k:at].lower()


def _string_end(source: str, at: int, quote: str, raw: bool) -> int | None:
    """The end of a plain string whose body starts at ``at`` (None: it does not end)."""
    j = at
    while j < len(source):
        if source.startswith(quote, j):
            return j + len(quote)
        c = source[j]
        if c == "\\" and not raw:
            j += 2
            continue
        if c == "\n" and len(quote) == 1:
            return None
        j += 1
    return None


def _fstring_end(source: str, at: int, quote: str) -> tuple[int, bool] | None:
    """The end of an f-string whose body starts at ``at``, and whether it uses what only
    Python 3.12 reads (PEP 701: its own quote, a backslash or a line break inside a
    replacement field). None: it does not end where this reading can tell."""
    j, depth, modern = at, 0, False
    while j < len(source):
        c = source[j]
        if depth == 0:
            if source.startswith(quote, j):
                return j + len(quote), modern
            if c == "\\":
                j += 2
                continue
            if c == "{":
                j, depth = (j + 2, 0) if source.startswith("{{", j) else (j + 1, 1)
                continue
            if c == "\n" and len(quote) == 1:
                return None
            j += 1
            continue
        # inside a replacement field: brackets, strings, nested f-strings
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "\\" or (c == "\n" and len(quote) == 1):
            modern = True
        elif c in "'\"":
            prefix = _prefix_before(source, j)
            opening = next((q for q in ("'''", '"""') if source.startswith(q, j)), c)
            if "f" in prefix:
                inner = _fstring_end(source, j + len(opening), opening)
                if inner is None:
                    return None
                end, modern = inner[0], modern or inner[1]
            else:
                plain = _string_end(source, j + len(opening), opening, raw="r" in prefix)
                if plain is None:
                    return None
                end = plain
            # before 3.12 a replacement field holds neither the f-string's quote nor a backslash
            modern = modern or quote in source[j:end] or "\\" in source[j:end]
            j = end
            continue
        j += 1
    return None


def newer_fstrings(source: str) -> str | None:
    """The module with each f-string that only Python 3.12 reads (PEP 701: nested use of its
    own quote, backslashes or line breaks in a replacement field) made a plain string of
    spaces, the same length and line breaks (None: none found). What such a string formats
    is not analysed."""
    chars = list(source)
    changed = False
    j = 0
    while True:
        m = _FSTRING_START.search(source, j)
        if m is None:
            break
        found = _fstring_end(source, m.end(), m.group(1))
        if found is None:
            j = m.end()
            continue
        end, modern = found
        if modern:
            quote = m.group(1)
            body = "".join(
                ch if ch in "\r\n" else " " for ch in source[m.start() + len(quote) : end - len(quote)]
            )
            chars[m.start() : end] = list(quote + body + quote)
            changed = True
        j = end
    return "".join(chars) if changed else None


def parse_modern(source: str) -> ast.Module:
    """``ast.parse``, also for modules using grammar newer than the running Python (PEP 695
    type parameters and aliases, PEP 701 f-strings).

    A leading byte-order mark (as editors may keep it) is dropped, as Python does for files.
    """
    if source.startswith("\ufeff"):
        source = source[1:]
    try:
        return ast.parse(source)
    except SyntaxError:
        rewritten = older_grammar(source)
        for attempt in (rewritten, newer_fstrings(rewritten or source)):
            if attempt is None:
                continue
            try:
                return ast.parse(attempt)
            except SyntaxError:
                pass
        raise
