"""Machine- and human-readable output for `jaxtarget check`."""

from __future__ import annotations

import functools
import json
import os
import urllib.parse
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import __version__
from .model import Finding, Fix
from .rules.base import Rule
from .rules.registry import RULES, RULES_BY_CODE
from .semantics.text import Lines

FORMATS: tuple[str, ...] = ("text", "json", "github", "sarif")


@dataclass(frozen=True)
class FileResult:
    path: Path
    findings: Sequence[Finding]
    fixes: Sequence[Fix | None]
    error: str | None = None
    error_line: int = 1
    error_col: int = 1
    source: str = ""
    note: str = ""
    #: findings `--fix` fixed (or, with `--diff`, would fix); ``findings`` are those remaining
    fixed: Sequence[Finding] = ()
    #: for a notebook, the cell number of each finding (its lines are that cell's rows)
    cells: Sequence[int] = ()
    #: for a notebook, the cell of the error
    error_cell: int | None = None
    #: False where the result depends on the project's files as a whole (it is not cached)
    cacheable: bool = True
    #: the other files of the project the result was read from, each with its modification
    #: time and size then (None: it was not there); the cached result serves while they match
    reads: Sequence[tuple[str, tuple[int, int] | None]] = ()

    def cell(self, index: int) -> int | None:
        """The notebook cell of finding ``index`` (None for a module)."""
        return self.cells[index] if index < len(self.cells) else None


def _cell_prefix(cell: int | None) -> str:
    return f"cell {cell}:" if cell is not None else ""


def display_name(path: Path) -> str:
    """The path relative to the working folder (links followed), else as given."""
    here = _real(os.getcwd())
    name = os.path.abspath(path)
    real = (
        os.path.realpath(name)
        if os.path.islink(name)
        else os.path.join(_real(os.path.dirname(name)), os.path.basename(name))
    )
    if real == here:
        return "."
    if not real.startswith(here.rstrip(os.sep) + os.sep):
        return path.as_posix()
    return Path(os.path.relpath(real, here)).as_posix()


@functools.lru_cache(maxsize=256)
def _real(folder: str) -> str:
    """A folder's path with links followed (memoized: a check names each folder many times)."""
    return os.path.realpath(folder)


def _utf16_col(lines: Lines | None, line: int, col: int) -> int:
    if lines is None or line > len(lines.starts):
        return col
    text = lines.text(line)[:col]
    return len(text.encode("utf-16-le")) // 2


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'s' if n != 1 else ''}"


def render_fixes(results: Sequence[FileResult], verb: str = "Fixed") -> str:
    """ruff's `--show-fixes` list: per file, how many findings of each code were fixed."""
    total = sum(len(r.fixed) for r in results)
    if not total:
        return f"No findings {'fixed' if verb == 'Fixed' else 'to fix'}.\n"
    out = [f"{verb} {_plural(total, 'finding')}:"]
    for r in results:
        if not r.fixed:
            continue
        out.append(f"- {display_name(r.path)}:")
        counts: dict[str, int] = {}
        for f in r.fixed:
            counts[f.code] = counts.get(f.code, 0) + 1
        for code in sorted(counts):
            out.append(f"    {counts[code]} × {code} ({RULES_BY_CODE[code].name})")
    return "\n".join(out) + "\n"


def render_text(results: Sequence[FileResult], show_fixes: bool = False) -> str:
    out: list[str] = []
    count = 0
    for r in results:
        name = display_name(r.path)
        if r.error:
            out.append(f"{name}:{_cell_prefix(r.error_cell)}{r.error_line}:{r.error_col}: {r.error}")
        for i, f in enumerate(r.findings):
            count += 1
            where = f"{_cell_prefix(r.cell(i))}{f.span.line}:{f.span.col + 1}"
            out.append(f"{name}:{where}: {f.code} {f.message}")
    errors = sum(1 for r in results if r.error)
    fixed = sum(len(r.fixed) for r in results)
    if show_fixes and fixed:
        out.extend(["", render_fixes(results)])
    if count or errors or fixed:
        summary = "Found " + _plural(count + fixed, "finding")
        if fixed:
            summary += f" ({fixed} fixed, {count} remaining)"
        if errors:
            summary += " and " + _plural(errors, "file error")
        out.append(summary + ".")
    else:
        out.append("All checks passed!")
    return "\n".join(out) + "\n"


def _fix_json(fix: Fix | None) -> dict[str, Any] | None:
    if fix is None:
        return None
    return {
        "applicability": fix.applicability,
        "message": fix.title,
        "edits": [
            {
                "content": e.new_text,
                "location": {"row": e.start_line, "column": e.start_col + 1},
                "end_location": {"row": e.end_line, "column": e.end_col + 1},
            }
            for e in fix.edits
        ],
    }


def render_json(results: Sequence[FileResult]) -> str:
    """ruff's JSON output shape: one object per finding."""
    items: list[dict[str, Any]] = []
    for r in results:
        filename = str(r.path.resolve())
        if r.error:
            items.append(
                {
                    "cell": r.error_cell,
                    "code": None,
                    "message": r.error,
                    "filename": filename,
                    "location": {"row": r.error_line, "column": r.error_col},
                    "end_location": {"row": r.error_line, "column": r.error_col},
                    "fix": None,
                    "noqa_row": None,
                    "url": None,
                }
            )
        for i, (f, fix) in enumerate(zip(r.findings, r.fixes, strict=False)):
            items.append(
                {
                    "cell": r.cell(i),
                    "code": f.code,
                    "message": f.message,
                    "filename": filename,
                    "location": {"row": f.span.line, "column": f.span.col + 1},
                    "end_location": {"row": f.span.end_line, "column": f.span.end_col + 1},
                    "fix": _fix_json(fix),
                    "noqa_row": f.span.line,
                    "url": RULES_BY_CODE[f.code].url,
                    "severity": f.severity,
                }
            )
    return json.dumps(items, indent=2) + "\n"


def _gh_escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    if prop:
        text = text.replace(":", "%3A").replace(",", "%2C")
    return text


_GH_LEVEL = {"error": "error", "warning": "warning", "information": "notice", "hint": "notice"}


def render_github(results: Sequence[FileResult]) -> str:
    out = []
    for r in results:
        name = _gh_escape(display_name(r.path), prop=True)
        if r.error:
            where = f"file={name},line={r.error_line},col={r.error_col}"
            out.append(f"::error title=jaxtarget,{where}::{_gh_escape(r.error)}")
        for i, f in enumerate(r.findings):
            title = _gh_escape(f"jaxtarget ({f.code})", prop=True)
            cell = r.cell(i)
            text = f"{f.code} {f.message}" if cell is None else f"cell {cell}: {f.code} {f.message}"
            out.append(
                f"::{_GH_LEVEL[f.severity]} title={title},file={name},line={f.span.line},"
                f"col={f.span.col + 1},endLine={f.span.end_line},endColumn={f.span.end_col + 1}"
                f"::{_gh_escape(text)}"
            )
    return "\n".join(out) + ("\n" if out else "")


_SARIF_LEVEL = {"error": "error", "warning": "warning", "information": "note", "hint": "note"}


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": rule.name,
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.why},
        "helpUri": rule.url,
        "help": {"text": rule.why, "markdown": rule.why},
        "defaultConfiguration": {"level": _SARIF_LEVEL[rule.severity]},
        "properties": {"apis": [a.qualname for a in rule.apis]},
    }


#: SARIF's name for the folder relative artifact URIs are resolved against (CodeQL's spelling)
SRCROOT = "%SRCROOT%"


def sarif_location(path: Path, root: Path) -> dict[str, str]:
    """An artifactLocation: relative to ``root`` (with ``uriBaseId``) when the file is under it.

    Code scanning resolves such a URI against the repository checkout, wherever CI
    cloned it; a file outside ``root`` keeps its absolute ``file://`` URI.
    """
    resolved = path.resolve()
    try:
        rel = resolved.relative_to(root)
    except ValueError:
        return {"uri": resolved.as_uri()}
    return {"uri": urllib.parse.quote(rel.as_posix()), "uriBaseId": SRCROOT}


def render_sarif(results: Sequence[FileResult]) -> str:
    """SARIF 2.1.0; columns in UTF-16 code units, SARIF's default; URIs relative to the working folder."""
    index = {rule.code: i for i, rule in enumerate(RULES)}
    sarif_results: list[dict[str, Any]] = []
    notifications: list[dict[str, Any]] = []
    root = Path.cwd().resolve()
    for r in results:
        uri = sarif_location(r.path, root)
        lines = Lines(r.source) if r.source else None
        if r.error:
            notifications.append(
                {
                    "level": "error",
                    "message": {"text": r.error},
                    "locations": [
                        {
                            "physicalLocation": {
                                "artifactLocation": uri,
                                "region": {"startLine": r.error_line, "startColumn": r.error_col},
                            }
                        }
                    ],
                }
            )
        for i, f in enumerate(r.findings):
            region = {
                "startLine": f.span.line,
                "startColumn": _utf16_col(lines, f.span.line, f.span.col) + 1,
                "endLine": f.span.end_line,
                "endColumn": _utf16_col(lines, f.span.end_line, f.span.end_col) + 1,
            }
            item: dict[str, Any] = {
                "ruleId": f.code,
                "ruleIndex": index[f.code],
                "level": _SARIF_LEVEL[f.severity],
                "message": {"text": f.message},
                "locations": [{"physicalLocation": {"artifactLocation": uri, "region": region}}],
            }
            if f.related:
                item["relatedLocations"] = [
                    {
                        "id": i,
                        "message": {"text": text},
                        "physicalLocation": {
                            "artifactLocation": uri,
                            "region": {
                                "startLine": span.line,
                                "startColumn": _utf16_col(lines, span.line, span.col) + 1,
                                "endLine": span.end_line,
                                "endColumn": _utf16_col(lines, span.end_line, span.end_col) + 1,
                            },
                        },
                    }
                    for i, (span, text) in enumerate(f.related)
                ]
            if r.cell(i) is not None:
                # a notebook's rows are its cell's: the cell number says which (as in text and JSON)
                item["properties"] = {"cell": r.cell(i)}
            sarif_results.append(item)
    doc = {
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "jaxtarget",
                        "version": __version__,
                        "informationUri": "https://github.com/jaxtarget/jaxtarget",
                        "rules": [_sarif_rule(rule) for rule in RULES],
                    }
                },
                "originalUriBaseIds": {SRCROOT: {"uri": root.as_uri().rstrip("/") + "/"}},
                "columnKind": "utf16CodeUnits",
                "results": sarif_results,
                "invocations": [{"executionSuccessful": True, "toolExecutionNotifications": notifications}],
            }
        ],
    }
    return json.dumps(doc, indent=2) + "\n"


RENDERERS = {
    "text": render_text,
    "json": render_json,
    "github": render_github,
    "sarif": render_sarif,
}
