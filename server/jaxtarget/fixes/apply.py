"""`check --fix` / `--diff` for one file: the rules' fixes applied until none is left, verified.

The fixes are the ones the engine's findings carry (``Analysis.applicable_fix``), applied
by the engine's loop (``fix_until_done``). What is added here is the file's side: the
result must still compile and fit the file's encoding, or nothing is written.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from ..engine import Analysis, FixRun, fix_until_done
from ..files import SourceFile
from ..model import Finding, Fix
from ..semantics.grammar import parse_modern

#: Rounds of fix-and-recheck before a file is given up on as not converging.
MAX_ROUNDS = 100


@dataclass(frozen=True)
class FileFix:
    """What fixing one file gives."""

    #: the fixed text, when it differs from the original and may be written
    fixed: str | None
    #: each fix applied, with the finding it fixed (empty when the result was refused)
    applied: tuple[tuple[Finding, Fix], ...]
    #: the check of the text as it stands afterwards (the original when refused)
    analysis: Analysis
    #: why the fixed text was not written, in one line
    refused: str | None = None
    #: the original findings that are gone from ``analysis`` (one fix may settle several: a pair)
    gone: tuple[Finding, ...] = ()


def _error(exc: SyntaxError | ValueError) -> str:
    if isinstance(exc, SyntaxError):
        return f"SyntaxError: {exc.msg} (line {exc.lineno})"
    return f"{type(exc).__name__}: {exc}"


def _compiles(text: str, path: str) -> str | None:
    """None if ``text`` compiles, else the error."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes: not our business
            compile(text, path, "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        return _error(exc)
    return None


def _parses(text: str) -> str | None:
    try:
        parse_modern(text)
    except (SyntaxError, ValueError) as exc:
        return _error(exc)
    return None


def fix_source(
    file: SourceFile,
    path: str,
    check: Callable[[str], Analysis],
    *,
    unsafe: bool = False,
    first: Analysis | None = None,
) -> FileFix:
    """Apply every applicable fix to ``file``; the result compiles or is refused.

    ``first`` is the check of the original text, if the caller has it. A module that
    does not compile in this Python because it uses newer grammar (PEP 695) only has to
    parse after fixing, as it did before.
    """
    original = first if first is not None else check(file.text)
    if original.syntax_error is not None:
        return FileFix(None, (), original)
    if not any(original.applicable_fix(f, unsafe) for f in original.findings):
        return FileFix(None, (), original)

    def rechecked(text: str) -> Analysis:
        return original if text == file.text else check(text)

    run: FixRun = fix_until_done(
        file.text, rechecked, lambda a, f: a.applicable_fix(f, unsafe), limit=MAX_ROUNDS
    )
    if not run.converged:
        return FileFix(None, (), original, f"fixes did not converge after {MAX_ROUNDS} rounds")
    if run.source == file.text:
        return FileFix(None, (), original)
    verify = _compiles if _compiles(file.text, path) is None else lambda text, _: _parses(text)
    broken = verify(run.source, path)
    if broken is not None:
        return FileFix(None, (), original, f"fixed text would not compile ({broken})")
    try:
        file.encode(run.source)
    except UnicodeEncodeError as exc:
        bad = exc.object[exc.start : exc.end]
        why = f"fixed text does not fit the file's encoding ({file.encoding}): {bad!r}"
        return FileFix(None, (), original, why)
    left = Counter((f.code, f.api) for f in run.analysis.findings)
    gone = []
    for f in original.findings:
        if left[f.code, f.api] > 0:
            left[f.code, f.api] -= 1
        else:
            gone.append(f)
    return FileFix(run.source, run.applied, run.analysis, gone=tuple(gone))


def unified_diff(before: str, after: str, name: str) -> str:
    """``diff -u``-style text, marking a last line without a line break as diff does."""

    def lines(text: str) -> list[str]:
        # split where Python's tokenizer does (not at form feeds or U+2028)
        out = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text)
        if out and not out[-1].endswith(("\n", "\r")):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    return "".join(difflib.unified_diff(lines(before), lines(after), f"a/{name}", f"b/{name}"))
