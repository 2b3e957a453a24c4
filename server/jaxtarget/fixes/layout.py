"""Layout helpers: newlines, indentation, whole-line statements, import and helper insertion."""

from __future__ import annotations

import ast
import io
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

from ..model import Edit
from ..platforms import Version
from ..semantics.grammar import parse_modern
from ..semantics.module import Reference
from ..semantics.source import SourceView, TokenFacts
from ..semantics.text import Lines, lines_with_words
from .project_helper import importable_helper

#: The GPU test the guard fixes insert (and the guards recognise).
HELPER_NAME = "has_gpu_backend"


#: the names fixes may need bound at module level: the imports they add and the GPU test
MODULE_NAMES = ("jax", "pytest", HELPER_NAME)


@dataclass
class FixContext:
    """The module being fixed: what its fixes read of it, each read at most once.

    With the analysed ``view`` (the language server's sparse one), only the statements
    fixes need are parsed: those that may bind a name in ``MODULE_NAMES``, the leading
    docstring and imports, and the statement being changed; nothing reads the whole file.
    """

    source: str
    path: str | None
    version: Version | None
    #: the analysed tree, used when the whole source does not parse
    fallback_tree: ast.Module | None = None
    #: the analysed view of the module, and its text
    view: SourceView | None = None
    text: Lines | None = None

    @cached_property
    def lines(self) -> Lines:
        return self.text if self.text is not None else Lines(self.source)

    @cached_property
    def tree(self) -> ast.Module | None:
        """Module-level facts (imports, helpers): every statement that can hold them."""
        view = self.view
        if view is None or view.failed or view.replaced:
            try:
                return parse_modern(self.source)
            except (SyntaxError, ValueError):
                return self.fallback_tree
        lines = self.lines
        binding: list[int] = []
        for name in MODULE_NAMES:
            asked: set[int] = set()
            for ln in lines_with_words(lines, (name,)):
                chunk = view.chunk_index(ln)
                if chunk in asked or ln in view:
                    continue
                asked.add(chunk)
                if view.may_bind_module_name(ln, name):
                    binding.append(ln)
        view.ensure(binding)
        # the leading docstring and imports, up to the first other statement
        line, n = 1, len(lines.starts)
        while line <= n:
            view.ensure([line])
            last = view.chunk_last_line(line)
            if any(not _leads(s) for s in view.module().body if line <= stmt_start(s) <= last):
                break
            line = max(last, line) + 1
        return None if view.failed else view.module()

    @cached_property
    def project_helper(self) -> str | None:
        """The project module whose ``has_gpu_backend`` a fix imports rather than define another."""
        return importable_helper(self.path, HELPER_NAME)

    def tokens(self, line: int) -> TokenFacts:
        """The tokenizer's facts about the top-level statement holding ``line`` (file line numbers)."""
        first, last = self._statement_lines(line)
        key = (first, last)
        found = self._tokens.get(key)
        if found is None:
            lines = self.lines
            end = lines.offset(last + 1) if last < len(lines.starts) else len(self.source)
            found = self._tokens[key] = TokenFacts(self.source[lines.offset(first) : end], first - 1)
        return found

    @cached_property
    def _tokens(self) -> dict[tuple[int, int], TokenFacts]:
        return {}

    def _statement_lines(self, line: int) -> tuple[int, int]:
        view = self.view
        if view is not None and not view.failed:
            view.ensure([line])
            for stmt in view.module().body:
                if stmt_start(stmt) <= line <= (stmt.end_lineno or stmt.lineno):
                    return stmt_start(stmt), stmt.end_lineno or stmt.lineno
        return 1, len(self.lines.starts)

    @cached_property
    def newline(self) -> str:
        m = re.search(r"\r\n|\r|\n", self.source)
        return m.group(0) if m else "\n"

    def indent_unit(self, near: str) -> str:
        """The file's indentation step, read from its INDENT tokens (strings do not count)."""
        if "\t" in near:
            return "\t"
        first = self._first_indent
        if first is None:
            return "    "
        if "\t" in first:
            return "\t"
        # the file's first INDENT token is one step in from column 0
        width = len(first)
        return " " * (width if 0 < width <= 8 else 4)

    @cached_property
    def _first_indent(self) -> str | None:
        try:
            for tok in tokenize.generate_tokens(io.StringIO(self.source).readline):
                if tok.type == tokenize.INDENT:
                    return tok.string
        except (tokenize.TokenError, SyntaxError):
            pass
        return None

    def string_interior(self, first: int, last: int) -> set[int]:
        """Lines ``first..last`` that begin inside a multi-line string."""
        if '"""' not in self.source and "'''" not in self.source:
            return set()
        out: set[int] = set()
        line = first
        while line <= last:
            facts = self.tokens(line)
            out |= facts.string_interior
            line = max(self._statement_lines(line)[1], line) + 1
        return {ln for ln in out if first <= ln <= last}

    def expr_text(self, node: ast.AST) -> str:
        """The source text of ``node``, from the line table (``ast.get_source_segment`` splits the file)."""
        lines = self.lines
        try:
            line, col = node.lineno, node.col_offset  # type: ignore[attr-defined]
            end_line, end_col = node.end_lineno, node.end_col_offset  # type: ignore[attr-defined]
        except AttributeError:
            return ast.unparse(node)
        if end_line is None or end_col is None:
            return ast.unparse(node)
        start = lines.offset(line) + lines.char_col(line, col)
        end = lines.offset(end_line) + lines.char_col(end_line, end_col)
        return self.source[start:end]


def _leads(stmt: ast.stmt) -> bool:
    """A statement of the leading block: a docstring, an import, or a ``try`` of imports."""
    if isinstance(stmt, ast.Expr):
        return isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
    if isinstance(stmt, ast.Try):
        return all(isinstance(s, (ast.Import, ast.ImportFrom)) for s in stmt.body)
    return isinstance(stmt, (ast.Import, ast.ImportFrom))


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


def stmt_start(node: ast.stmt) -> int:
    decorators: list[ast.expr] = getattr(node, "decorator_list", None) or []
    return min([node.lineno, *(d.lineno for d in decorators)])


def indent_of(text: str) -> str:
    return text[: len(text) - len(text.lstrip(" \t"))]


def whole_lines(lines: Lines, first_stmt: ast.stmt, last_stmt: ast.stmt) -> bool:
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


def block_of(ref: Reference) -> list[ast.stmt] | None:
    """The statement list that holds the statement of ``ref``."""
    stmt = ref.statement
    for parent in reversed(ref.ancestors):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(parent, name, None)
            if isinstance(block, list) and any(s is stmt for s in block):
                return block
    return None


def reindent(lines: Lines, first: int, last: int, prefix: str, interior: set[int], nl: str) -> str:
    """Lines ``first..last`` with ``prefix`` added (string interiors and blank lines kept)."""
    out = []
    for n in range(first, last + 1):
        text = lines.text(n)
        if n in interior or not text.strip():
            out.append(text + nl)
        else:
            out.append(prefix + text + nl)
    return "".join(out)


def replace_lines(ctx: FixContext, first: int, last: int, new: str) -> Edit:
    """An edit replacing whole lines ``first..last`` by ``new`` (which ends in a newline)."""
    lines = ctx.lines
    if last < len(lines.starts):
        return Edit(first, 0, last + 1, 0, new)
    return Edit(first, 0, last, len(lines.text(last)), new[: -len(ctx.newline)])


# ---------------------------------------------------------------- module-level inserts


def module_binding_line(tree: ast.Module, name: str) -> int | None:
    """The first line of the first module-level statement that binds ``name`` (None: none does)."""
    for stmt in tree.body:
        found = False
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == name:
            found = True
        elif isinstance(stmt, ast.Import):
            found = any((a.asname or a.name.split(".")[0]) == name for a in stmt.names)
        elif isinstance(stmt, ast.ImportFrom):
            found = any((a.asname or a.name) == name for a in stmt.names)
        elif isinstance(stmt, ast.Assign):
            found = any(isinstance(t, ast.Name) and t.id == name for t in stmt.targets)
        if found:
            return stmt_start(stmt)
    return None


def _module_binds(tree: ast.Module, name: str) -> bool:
    return module_binding_line(tree, name) is not None


def merge_inserts(edits: Sequence[Edit]) -> list[Edit]:
    """Insertions at one position joined in order (clients order same-position inserts differently)."""
    out: list[Edit] = []
    for edit in edits:
        empty = edit.start_line == edit.end_line and edit.start_col == edit.end_col
        for i, seen in enumerate(out):
            same = (seen.start_line, seen.start_col, seen.end_line, seen.end_col) == (
                edit.start_line,
                edit.start_col,
                edit.end_line,
                edit.end_col,
            )
            if empty and same:
                out[i] = Edit(
                    seen.start_line,
                    seen.start_col,
                    seen.end_line,
                    seen.end_col,
                    seen.new_text + edit.new_text,
                )
                break
        else:
            out.append(edit)
    return out


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


def module_edits(ctx: FixContext, tree: ast.Module, need: Sequence[str]) -> list[Edit]:
    """Imports and the GPU-test helper a fix relies on, inserted once after the import block."""
    nl = ctx.newline
    unit = ctx.indent_unit("")
    lines = ctx.lines
    at = _import_block_end(tree)
    pieces: list[str] = []
    helper = HELPER_NAME in need and not _module_binds(tree, HELPER_NAME)
    imported = ctx.project_helper if helper else None
    for module in need:
        if module == "jax" and HELPER_NAME in need and (not helper or imported):
            continue  # only the helper needed jax, and the module has one (or imports the project's)
        if module != HELPER_NAME and not _module_binds(tree, module):
            pieces.append(f"import {module}{nl}")
    if imported:
        pieces.append(f"from {imported} import {HELPER_NAME}{nl}")
    elif helper:
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
        if helper and not imported:
            text = text.lstrip("\r\n") + ("" if text.endswith(nl + nl) else nl)
        return [Edit(1, 0, 1, 0, text)]
    if at < len(lines.starts):
        return [Edit(at + 1, 0, at + 1, 0, text)]
    end_text = lines.text(at)
    return [Edit(at, len(end_text), at, len(end_text), nl + text.rstrip("\r\n"))]
