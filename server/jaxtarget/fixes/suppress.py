"""The suppression fix: add (or extend) a ``# jaxtarget: ignore[...]`` comment on the line."""

from __future__ import annotations

import re

from ..model import Edit, Fix, Span
from ..suppression import ignore_comment
from .layout import FixContext


def suppress_fix(ctx: FixContext, code: str, span: Span) -> Fix | None:
    lines = ctx.lines
    line = span.line
    text = lines.text(line)
    if text.rstrip().endswith("\\"):
        return None
    facts = ctx.tokens(line)
    if line + 1 in facts.string_interior:
        return None  # the line ends inside a multi-line string: no comment can go there
    existing = facts.comments.get(line)
    title = f"Suppress {code} on this line (# jaxtarget: ignore)"
    if existing is not None:
        col, comment = existing
        m = re.search(r"#\s*jaxtarget:\s*ignore\[([^\]]*)\]", comment)
        if m:
            codes = [c.strip() for c in m.group(1).split(",") if c.strip()]
            new_comment = comment[: m.start(1)] + ", ".join([*codes, code]) + comment[m.end(1) :]
            edit = Edit(line, col, line, len(text), new_comment)
        else:
            edit = Edit(line, len(text), line, len(text), f"  {ignore_comment(code)}")
    else:
        stripped = len(text.rstrip())
        edit = Edit(line, stripped, line, len(text), f"  {ignore_comment(code)}")
    return Fix("suppress", code, title, (edit,))
