"""Source edits that fix or suppress findings. Pure text in, edits out.

Every fix keeps the module parseable, keeps its indentation style (spaces or
tabs), leaves multi-line string contents alone and touches nothing outside the
lines it rewrites. Applying a fix makes its finding go away, so a second
application finds nothing to do.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Literal

from .analysis import Analysis, Finding, Reference
from .catalog import APIS, Api, FixKind
from .parsing import Lines, TokenFacts
from .targets import GPU_PLATFORMS, PLATFORMS

HELPER_NAME = "has_gpu_backend"


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
    kind: FixKind
    code: str
    title: str
    edits: tuple[Edit, ...]
    applicability: Literal["safe", "unsafe", "display-only"] = "unsafe"


def apply_edits(source: str, edits: Sequence[Edit]) -> str:
    lines = Lines(source)

    def offset(line: int, col: int) -> int:
        if line > len(lines.starts):
            return len(source)
        return lines.starts[line - 1] + col

    spans = sorted(
        ((offset(e.start_line, e.start_col), offset(e.end_line, e.end_col), e.new_text) for e in edits),
        reverse=True,
    )
    out = source
    for start, end, text in spans:
        out = out[:start] + text + out[end:]
    return out


# ---------------------------------------------------------------- layout helpers


def _newline(source: str) -> str:
    m = re.search(r"\r\n|\r|\n", source)
    return m.group(0) if m else "\n"


def _indent_unit(source: str, near: str) -> str:
    """The file's indentation step, read from its INDENT tokens (strings do not count)."""
    if "\t" in near:
        return "\t"
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.INDENT:
                if "\t" in tok.string:
                    return "\t"
                width = (
                    len(tok.string) - len(near) if tok.string.startswith(near) and near else len(tok.string)
                )
                return " " * (width if 0 < width <= 8 else 4)
    except (tokenize.TokenError, SyntaxError):
        pass
    return "    "


def _stmt_start(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])


def _whole_lines(lines: Lines, first_stmt: ast.stmt, last_stmt: ast.stmt) -> bool:
    """The statements own their lines: nothing else before the first or after the last."""
    decorators: list[ast.expr] = getattr(first_stmt, "decorator_list", None) or []
    start = min(
        [(first_stmt.lineno, first_stmt.col_offset), *((d.lineno, d.col_offset - 1) for d in decorators)]
    )
    head = lines.text(start[0]).encode("utf-8")
    indent = len(head) - len(head.lstrip(b" \t"))
    end_line = last_stmt.end_lineno or last_stmt.lineno
    tail = lines.text(end_line).encode("utf-8")[last_stmt.end_col_offset or 0 :].decode("utf-8", "replace")
    return start[1] == indent and (not tail.strip() or tail.strip().startswith("#"))


def _block_of(ref: Reference) -> list[ast.stmt] | None:
    stmt = ref.statement
    for parent in reversed(ref.ancestors):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block
    return None


# ---------------------------------------------------------------- module-level inserts


def _module_binds(tree: ast.Module, name: str) -> bool:
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
            return True
        if isinstance(stmt, ast.Import):
            for a in stmt.names:
                if (a.asname or a.name.split(".")[0]) == name:
                    return True
        if isinstance(stmt, ast.ImportFrom):
            for a in stmt.names:
                if (a.asname or a.name) == name:
                    return True
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == name for t in stmt.targets
        ):
            return True
    return False


def _import_block_end(tree: ast.Module) -> int:
    """Line after which new imports go (0: top of file)."""
    last = 0
    for i, stmt in enumerate(tree.body):
        is_doc = (
            i == 0
            and isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str)
        )
        is_import = isinstance(stmt, (ast.Import, ast.ImportFrom))
        is_guarded_import = isinstance(stmt, ast.Try) and all(
            isinstance(s, (ast.Import, ast.ImportFrom)) for s in stmt.body
        )
        if is_doc or is_import or is_guarded_import:
            last = stmt.end_lineno or stmt.lineno
        else:
            break
    return last


def _module_edits(source: str, tree: ast.Module, need: Sequence[str]) -> list[Edit]:
    """Imports and the helper a fix relies on, inserted once after the import block."""
    nl = _newline(source)
    unit = _indent_unit(source, "")
    lines = Lines(source)
    at = _import_block_end(tree)
    pieces: list[str] = []
    for module in need:
        if module != HELPER_NAME and not _module_binds(tree, module):
            pieces.append(f"import {module}{nl}")
    helper = HELPER_NAME in need and not _module_binds(tree, HELPER_NAME)
    if helper:
        pieces.append(
            f"{nl}{nl}def {HELPER_NAME}() -> bool:{nl}"
            f'{unit}"""True when JAX runs on a GPU backend (cuda or rocm)."""{nl}'
            f'{unit}return jax.default_backend() in ("gpu", "cuda", "rocm"){nl}'
        )
        # two blank lines after the helper, counting those already there
        blank = 0
        while at + 1 + blank < len(lines.starts) and blank < 2 and not lines.text(at + 1 + blank).strip():
            blank += 1
        pieces.append(nl * (2 - blank))
    if not pieces:
        return []
    text = "".join(pieces)
    if at == 0:
        if helper:
            text = text.lstrip("\r\n") + ("" if text.endswith(nl + nl) else nl)
        return [Edit(1, 0, 1, 0, text)]
    if at < len(lines.starts):
        return [Edit(at + 1, 0, at + 1, 0, text)]
    end_text = lines.text(at)
    return [Edit(at, len(end_text), at, len(end_text), nl + text.rstrip("\r\n"))]


# ---------------------------------------------------------------- guard fixes


def _guard_condition(api: Api, version: tuple[int, ...] | None) -> tuple[str, list[str]]:
    plats = api.platforms(version)
    if plats == GPU_PLATFORMS:
        return f"{HELPER_NAME}()", ["jax", HELPER_NAME]
    names = [p for p in PLATFORMS if p in plats]
    if plats >= GPU_PLATFORMS:
        names = [n for n in names if n not in GPU_PLATFORMS] + ["gpu", "cuda", "rocm"]
    elif plats & GPU_PLATFORMS:
        return (
            "jax.devices()[0].platform in ("
            + ", ".join(f'"{n}"' for n in names)
            + ("," if len(names) == 1 else "")
            + ")",
            ["jax"],
        )
    return "jax.default_backend() in (" + ", ".join(f'"{n}"' for n in names) + (
        "," if len(names) == 1 else ""
    ) + ")", ["jax"]


def _requirement(api: Api, version: tuple[int, ...] | None) -> str:
    plats = api.platforms(version)
    if plats == GPU_PLATFORMS:
        return "a GPU backend (cuda or rocm)"
    return "one of: " + ", ".join(p for p in PLATFORMS if p in plats)


def _reindent(lines: Lines, first: int, last: int, prefix: str, interior: set[int]) -> str:
    nl = _newline(lines.source)
    out = []
    for n in range(first, last + 1):
        text = lines.text(n)
        if n in interior or not text.strip():
            out.append(text + nl)
        else:
            out.append(prefix + text + nl)
    return "".join(out)


def _expr_text(source: str, node: ast.AST) -> str:
    return ast.get_source_segment(source, node) or ast.unparse(node)


def _call_arg(call: ast.Call, index: int, name: str) -> ast.expr | None:
    if len(call.args) > index:
        return call.args[index]
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
    return None


def _full_tree(analysis: Analysis) -> ast.Module | None:
    """Module-level facts (imports, helpers) need every statement, not a sparse view."""
    try:
        return ast.parse(analysis.source)
    except (SyntaxError, ValueError):
        return analysis.tree


def guard_fix(
    analysis: Analysis,
    finding: Finding,
    ref: Reference,
    version: tuple[int, ...] | None,
    ppermute: bool = False,
) -> Fix | None:
    source = analysis.source
    tree = _full_tree(analysis)
    api = APIS.get(ref.qualname)
    if tree is None or api is None:
        return None
    block = _block_of(ref)
    if block is None:
        return None
    stmts = [ref.statement]
    partner = ref.partner
    if partner is not None:
        pblock = _block_of(partner)
        if pblock is block:
            stmts.append(partner.statement)
        elif ppermute:
            return None
    elif ppermute:
        return None
    idx = sorted(i for i, s in enumerate(block) if any(s is t for t in stmts))
    first_stmt, last_stmt = block[idx[0]], block[idx[-1]]
    lines = Lines(source)
    first = _stmt_start(first_stmt)
    last = last_stmt.end_lineno or last_stmt.lineno
    if not _whole_lines(lines, first_stmt, last_stmt):
        return None
    head = lines.text(first)
    indent = head[: len(head) - len(head.lstrip(" \t"))]
    unit = _indent_unit(source, indent)
    nl = _newline(source)
    condition, need = _guard_condition(api, version)
    interior = TokenFacts(source).string_interior if '"""' in source or "'''" in source else set()
    body = _reindent(lines, first, last, unit, interior)
    if ppermute:
        fallback = _ppermute_fallback(source, ref, partner, indent + unit, nl)
        if fallback is None:
            return None
        title = (
            f"Guard `{api.display}` with {HELPER_NAME}(), fall back to lax.ppermute (same values as the pair)"
        )
        kind: FixKind = "ppermute"
    else:
        needs = _requirement(api, version)
        fallback = f'{indent}{unit}raise NotImplementedError("{api.display} requires {needs}"){nl}'
        title = f"Guard `{api.display}` with {condition}"
        kind = "guard"
    new = f"{indent}if {condition}:{nl}{body}{indent}else:{nl}{fallback}"
    end_has_nl = last < len(lines.starts)
    if not end_has_nl:
        new = new[: -len(nl)]
    edits = [
        Edit(first, 0, last + 1, 0, new) if end_has_nl else Edit(first, 0, last, len(lines.text(last)), new)
    ]
    edits += _module_edits(source, tree, need)
    return Fix(kind, finding.code, title, tuple(edits))


def _ppermute_fallback(
    source: str, ref: Reference, partner: Reference | None, prefix: str, nl: str
) -> str | None:
    if partner is None:
        return None
    send, recv = (ref, partner) if ref.qualname == "jax.lax.psend" else (partner, ref)
    if send.call is None or recv.call is None:
        return None
    x = _call_arg(send.call, 0, "x")
    axis = _call_arg(send.call, 1, "axis_name")
    perm = _call_arg(send.call, 2, "perm")
    if x is None or axis is None or perm is None:
        return None
    spelled = _expr_text(source, send.node)
    module = spelled.rsplit(".", 1)[0] if "." in spelled else "jax.lax"
    call = (
        f"{module}.ppermute({_expr_text(source, x)}, {_expr_text(source, axis)}, {_expr_text(source, perm)})"
    )
    stmt = recv.statement
    if isinstance(stmt, ast.Assign) and stmt.value is recv.call:
        targets = " = ".join(_expr_text(source, t) for t in stmt.targets)
        return f"{prefix}{targets} = {call}{nl}"
    if isinstance(stmt, ast.Return) and stmt.value is recv.call:
        return f"{prefix}return {call}{nl}"
    if isinstance(stmt, ast.AnnAssign) and stmt.value is recv.call and stmt.target is not None:
        return f"{prefix}{_expr_text(source, stmt.target)} = {call}{nl}"
    return None


# ---------------------------------------------------------------- test skip


def is_test_file(path: str | None) -> bool:
    if not path:
        return False
    p = PurePath(path)
    return p.name.startswith("test_") or p.stem.endswith("_test") or "tests" in p.parts[:-1]


def skip_test_fix(
    analysis: Analysis,
    finding: Finding,
    ref: Reference,
    path: str | None,
    version: tuple[int, ...] | None,
) -> Fix | None:
    tree = _full_tree(analysis)
    api = APIS.get(ref.qualname)
    if tree is None or api is None or not is_test_file(path):
        return None
    fn = None
    for node in ref.ancestors:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            fn = node
    if fn is None:
        return None
    source = analysis.source
    lines = Lines(source)
    first = _stmt_start(fn)
    head = lines.text(first)
    indent = head[: len(head) - len(head.lstrip(" \t"))]
    nl = _newline(source)
    condition, need = _guard_condition(api, version)
    reason = f"{api.display} requires {_requirement(api, version)}"
    text = f'{indent}@pytest.mark.skipif(not {condition}, reason="{reason}"){nl}'
    edits = [Edit(first, 0, first, 0, text), *_module_edits(source, tree, ["pytest", *need])]
    return Fix("skip-test", finding.code, f"Skip `{fn.name}` unless {condition}", tuple(edits))


# ---------------------------------------------------------------- suppression


def suppress_fix(analysis: Analysis, finding: Finding) -> Fix | None:
    source = analysis.source
    lines = Lines(source)
    line = finding.span.line
    text = lines.text(line)
    if text.rstrip().endswith("\\"):
        return None
    facts = TokenFacts(source)
    if line + 1 in facts.string_interior:
        return None  # the line ends inside a multi-line string: no comment can go there
    existing = facts.comments.get(line)
    title = f"Suppress {finding.code} on this line"
    if existing is not None:
        col, comment = existing
        m = re.search(r"#\s*jaxtarget:\s*ignore\[([^\]]*)\]", comment)
        if m:
            codes = [c.strip() for c in m.group(1).split(",") if c.strip()]
            new_comment = comment[: m.start(1)] + ", ".join([*codes, finding.code]) + comment[m.end(1) :]
            return Fix(
                "suppress",
                finding.code,
                title,
                (Edit(line, col, line, len(text), new_comment),),
                "safe",
            )
        return Fix(
            "suppress",
            finding.code,
            title,
            (Edit(line, len(text), line, len(text), f"  # jaxtarget: ignore[{finding.code}]"),),
            "safe",
        )
    stripped = len(text.rstrip())
    return Fix(
        "suppress",
        finding.code,
        title,
        (Edit(line, stripped, line, len(text), f"  # jaxtarget: ignore[{finding.code}]"),),
        "safe",
    )


# ---------------------------------------------------------------- all fixes for a finding


def fixes_for(
    analysis: Analysis, finding: Finding, path: str | None, version: tuple[int, ...] | None
) -> list[Fix]:
    ref = analysis.reference_at(finding.span.line, finding.span.col)
    out: list[Fix] = []
    if ref is None:
        return out
    kinds = finding.rule.fixes
    builders: list[tuple[FixKind, Callable[[], Fix | None]]] = [
        ("ppermute", lambda: guard_fix(analysis, finding, ref, version, ppermute=True)),
        ("guard", lambda: guard_fix(analysis, finding, ref, version)),
        ("skip-test", lambda: skip_test_fix(analysis, finding, ref, path, version)),
        ("suppress", lambda: suppress_fix(analysis, finding)),
    ]
    for kind, build in builders:
        if kind in kinds:
            fix = build()
            if fix is not None:
                out.append(fix)
    return out


def preferred_fix(
    analysis: Analysis, finding: Finding, path: str | None, version: tuple[int, ...] | None
) -> Fix | None:
    """The fix `check --format json` reports and fix-all applies: the guard."""
    ref = analysis.reference_at(finding.span.line, finding.span.col)
    if ref is None or "guard" not in finding.rule.fixes:
        return None
    return guard_fix(analysis, finding, ref, version)


def fix_all(
    source: str,
    check: Callable[[str], Analysis],
    path: str | None,
    version: tuple[int, ...] | None,
    limit: int = 200,
) -> str:
    """Apply the guard fix to every fixable finding, re-checking after each."""
    skipped: set[tuple[str, int, int]] = set()
    for _ in range(limit):
        analysis = check(source)
        for finding in analysis.findings:
            key = (finding.code, finding.span.line, finding.span.col)
            if key in skipped:
                continue
            fix = preferred_fix(analysis, finding, path, version)
            if fix is None:
                skipped.add(key)
                continue
            source = apply_edits(source, fix.edits)
            skipped = set()
            break
        else:
            return source
    return source
