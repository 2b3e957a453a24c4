"""Plain result data shared by every layer: spans, edits, fixes and findings.

No ``ast``, no jedi, no LSP: the CLI formats and the language server read these.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Severity = Literal["error", "warning", "information", "hint"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "information", "hint")

#: ruff's fix applicability: what ``--fix`` may apply without asking.
Applicability = Literal["safe", "unsafe", "display-only"]


@dataclass(frozen=True)
class Span:
    """1-based lines, 0-based columns counted in code points."""

    line: int
    col: int
    end_line: int
    end_col: int


@dataclass(frozen=True)
class Edit:
    """Replace [start, end) with ``new_text``; 1-based lines, code-point columns."""

    start_line: int
    start_col: int
    end_line: int
    end_col: int
    new_text: str


@dataclass(frozen=True)
class Fix:
    """A titled set of edits that fixes (or suppresses) one finding."""

    kind: str
    code: str
    title: str
    edits: tuple[Edit, ...]
    applicability: Applicability = "unsafe"


@dataclass(frozen=True)
class Finding:
    """One reported violation.

    ``id`` names the violation within the analysis that produced it, so that a
    code action finds its fixes from that analysis, never by position.
    """

    code: str
    message: str
    severity: Severity
    span: Span
    api: str
    failing: tuple[str, ...] = ()
    related: tuple[tuple[Span, str], ...] = ()
    resolved_by: str = "jedi"
    id: int = 0
