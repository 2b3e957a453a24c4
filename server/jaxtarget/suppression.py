"""Suppression comments: ``# jaxtarget: ignore[CODE]`` and ruff-style ``# noqa: CODE``."""

from __future__ import annotations

import re
from collections.abc import Sequence

from .model import Finding
from .semantics.source import TokenFacts
from .semantics.text import Lines

IGNORE_RE = re.compile(r"#\s*jaxtarget:\s*ignore(?:\[(?P<codes>[^\]]*)\])?", re.I)
_NOQA_RE = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)


def ignore_comment(code: str) -> str:
    """The comment that silences ``code`` on its line."""
    return f"# jaxtarget: ignore[{code}]"


def suppressed_codes(comment: str) -> set[str] | None:
    """Codes a comment silences; an empty set means all; None means none."""
    found: set[str] | None = None
    for pattern in (IGNORE_RE, _NOQA_RE):
        for m in pattern.finditer(comment):
            codes = m.group("codes")
            if codes is None or not codes.strip():
                return set()
            found = (found or set()) | {c.upper() for c in re.split(r"[\s,]+", codes.strip()) if c}
    return found


def unsuppressed(findings: Sequence[Finding], text: Lines) -> list[Finding]:
    """The findings no comment on their line silences (comments read by the tokenizer)."""
    marked = [f for f in findings if re.search(r"noqa|jaxtarget", text.text(f.span.line), re.I)]
    if not marked:
        return list(findings)
    comments = {line: comment for line, (_, comment) in TokenFacts(text.source).comments.items()}
    kept = []
    for f in findings:
        comment = comments.get(f.span.line)
        codes = suppressed_codes(comment) if comment else None
        if codes is not None and (not codes or f.code in codes):
            continue
        kept.append(f)
    return kept
