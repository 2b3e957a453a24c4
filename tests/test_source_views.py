"""The parsed views of a module, sparse and whole, answer exactly what the analysis asks of them.

``older_grammar`` keeps every column, ``parse_recovering`` blanks the lines Python
names and nothing else, ``TokenFacts`` reads comments and string interiors as the
tokenizer does, and a ``SparseModule`` parses exactly the chunks asked for (merging
a chunk that does not parse alone with the next), keeping its cache to what it used.
"""

from __future__ import annotations

import ast
import textwrap
from collections.abc import Callable

import pytest

from jaxtarget.semantics.grammar import newer_fstrings, older_grammar, parse_modern
from jaxtarget.semantics.source import (
    ChunkCache,
    FullView,
    SparseModule,
    TokenFacts,
    parse_recovering,
)
from jaxtarget.semantics.text import Lines

from .conftest import CheckFn

# ---------------------------------------------------------------- newer grammar


_OLDER = older_grammar
_FSTRINGS = newer_fstrings


@pytest.mark.parametrize(
    ("rewrite", "source", "rewritten"),
    [
        (_OLDER, "def f[T](x): pass\n", "def f   (x): pass\n"),
        (_OLDER, "def f[T: dict[str, int]](x): pass\n", "def f                   (x): pass\n"),
        (_OLDER, "async  def f[T](): pass\n", "async  def f   (): pass\n"),
        # a bracket list across lines keeps its line breaks, \r\n included, each blanked
        # line ending in a backslash that joins it to the next as the brackets did
        (_OLDER, "class C[\n  T,\r\n]:\n  pass\n", "class C\\\n   \\\r\n :\n  pass\n"),
        (_OLDER, "def f[\n    T,\n](x): pass\n", "def f\\\n     \\\n (x): pass\n"),
        (_OLDER, "type X[T] = list[T]\n", "if 1:X    = list[T]\n"),
        (_OLDER, "type X = int\n", "if 1:X = int\n"),
        (_OLDER, "    type X = int\n", "    if 1:X = int\n"),
        (_OLDER, "type A = int\ntype B[T] = A\n", "if 1:A = int\nif 1:B    = A\n"),
        # PEP 701: the f-string's own quote, nested f-strings, a backslash in a field
        (_FSTRINGS, 'x = f"{d["a"]}"\n', 'x = "         "\n'),
        (_FSTRINGS, 's = f"{f"{x["k"]}"}" + "z"\n', 's = "              " + "z"\n'),
        (_FSTRINGS, 'r = rf"\\d{d["k"]}"\n', 'r = "            "\n'),
        (_FSTRINGS, "t = f'{\"\\\\n\".join(xs)}'\n", "t = '                 '\n"),
        # only the f-strings Python 3.12 alone reads change
        (_FSTRINGS, 'y = f"{a!r:>10}" + f"{d["a"]}"\n', 'y = f"{a!r:>10}" + "         "\n'),
    ],
)
def test_newer_grammar_is_rewritten_in_place(
    rewrite: Callable[[str], str | None], source: str, rewritten: str
) -> None:
    assert rewrite(source) == rewritten
    ast.parse(textwrap.dedent(rewritten))  # and the result parses on every supported Python


@pytest.mark.parametrize("source", ["x = [1]\n", "x = 1\n", "type(x)\n", "y = type\n", "d[k] = v\n"])
def test_older_grammar_leaves_ordinary_code_alone(source: str) -> None:
    assert older_grammar(source) is None


@pytest.mark.parametrize(
    "source",
    [
        "y = f'{a!r:>10} {b}'\n",
        'w = f"""{d["a"]}\nline2 {b}"""\n',
        'v = f"{d[\'k\']}" + "{not an f-string}"\n',
        "elf = 1; z = elf\n",
    ],
)
def test_newer_fstrings_leave_what_older_pythons_read(source: str) -> None:
    assert newer_fstrings(source) is None


def test_parse_modern_reads_a_type_alias_as_an_assignment() -> None:
    tree = parse_modern("type X = int\ny = 2\n")
    assert [type(s).__name__ for s in tree.body] == ["If", "Assign"]
    assert [s.lineno for s in tree.body] == [1, 2]


def test_parse_modern_raises_the_syntax_error_of_ordinary_code() -> None:
    with pytest.raises(SyntaxError) as info:
        parse_modern("x = 1\ny = 2 +* 3\n")
    assert (info.value.msg, info.value.lineno) == ("invalid syntax", 2)
    with pytest.raises(SyntaxError) as info:
        parse_modern("def f[T](:\n")  # newer grammar and a real error: the rewrite does not hide it
    assert (info.value.msg, info.value.lineno, info.value.offset) == ("expected '('", 1, 6)


def test_parse_modern_drops_exactly_a_leading_byte_order_mark() -> None:
    tree = parse_modern("\ufeffimport jax\n")
    assert ast.dump(tree) == ast.dump(ast.parse("import jax\n"))
    with pytest.raises(SyntaxError):
        parse_modern("x = 1\n\ufeffy = 2\n")


# ---------------------------------------------------------------- recovering from syntax errors


def _same_tree(tree: ast.Module | None, source: str) -> bool:
    assert tree is not None
    return ast.dump(tree, include_attributes=True) == ast.dump(ast.parse(source), include_attributes=True)


def test_a_module_that_parses_has_no_error() -> None:
    tree, error, line, col = parse_recovering("x = 1\n")
    assert _same_tree(tree, "x = 1\n")
    assert (error, line, col) == (None, None, 1)


def test_the_line_python_names_is_blanked_and_the_rest_kept() -> None:
    tree, error, line, col = parse_recovering("import jax\ndef broken(:\nx = 1\n")
    assert _same_tree(tree, "import jax\npass\nx = 1\n")
    assert (error, line, col) == ("SyntaxError: invalid syntax", 2, 12)


def test_an_error_on_the_first_line_is_blanked_too() -> None:
    tree, error, line, col = parse_recovering("def f(:\nx = 1\n")
    assert _same_tree(tree, "pass\nx = 1\n")
    assert (error, line, col) == ("SyntaxError: invalid syntax", 1, 7)


def test_an_indented_bad_line_keeps_its_indent_and_a_blanked_pass_goes() -> None:
    # the error is reported past the last line: that last line is the one blanked
    tree, error, line, _ = parse_recovering("x = 1\nif x:\n")
    assert _same_tree(tree, "x = 1\npass\n")
    assert (error, line) == ("SyntaxError: expected an indented block after 'if' statement on line 2", 2)
    # an indented bad line becomes an indented pass
    tree, _, line, _ = parse_recovering("if x:\n    y = = 1\nz = 2\n")
    assert _same_tree(tree, "if x:\n    pass\nz = 2\n")
    assert line == 2


def test_a_line_without_a_break_at_the_end_is_blanked_without_one() -> None:
    tree, _, line, _ = parse_recovering("x = 1\r\ny = = 2")
    assert _same_tree(tree, "x = 1\r\npass\n")
    assert line == 2


def test_an_error_python_gives_no_line_for() -> None:
    # Python names no line for a null byte: the first line is blanked, then the next
    tree, error, line, col = parse_recovering("x = 1\x00\ny = 2\n")
    assert _same_tree(tree, "pass\ny = 2\n")
    assert (error, line, col) == ("SyntaxError: source code string cannot contain null bytes", None, 1)


def test_recovery_gives_up_after_fifty_tries() -> None:
    # 49 bad lines are 49 blankings and a 50th parse: still recovered
    tree, error, line, col = parse_recovering("1 +\n" * 49 + "y = 2\n")
    assert _same_tree(tree, "pass\n" * 49 + "y = 2\n")
    assert (error, line, col) == ("SyntaxError: invalid syntax", 1, 4)
    # one more is too many
    assert parse_recovering("1 +\n" * 50 + "y = 2\n") == (None, "SyntaxError: invalid syntax", 1, 4)


def test_a_module_too_deep_for_the_parser_gives_no_tree() -> None:
    tree, error, line, col = parse_recovering("y = 1\nx" + ".a" * 100_000 + "\n")
    assert tree is None
    assert error is not None and error.startswith("RecursionError: ")
    assert (line, col) == (1, 1)


def test_recovery_counts_lines_as_python_does() -> None:
    # U+2028 and a form feed are no line breaks to Python: the line blanked is Python's line 2
    source = "s = '\u2028'\nt = 1\x0c+ 2\ndef f(:\nx = 1\n"
    tree, error, line, _ = parse_recovering(source)
    assert (error, line) == ("SyntaxError: invalid syntax", 3)
    assert _same_tree(tree, "s = '\u2028'\nt = 1\x0c+ 2\npass\nx = 1\n")
    tree, _, line, _ = parse_recovering("a = 1\rdef f(:\rb = 2\r")
    assert line == 2
    assert _same_tree(tree, "a = 1\rpass\rb = 2\r")


# ---------------------------------------------------------------- tokens


def test_token_facts_comments_and_string_interiors() -> None:
    facts = TokenFacts("x = 1  # c\ns = '''\na\nb'''\n# end\n", 10)
    assert facts.comments == {11: (7, "# c"), 15: (0, "# end")}
    assert facts.string_interior == {13, 14}
    plain = TokenFacts("x = 'a'  # one\n")
    assert plain.comments == {1: (9, "# one")}
    assert plain.string_interior == set()


def test_token_facts_keep_what_was_read_before_an_unterminated_string() -> None:
    facts = TokenFacts("# a\nx = 1  # b\ny = '''\n")
    assert facts.comments == {1: (0, "# a"), 2: (7, "# b")}
    assert facts.string_interior == set()


def test_token_facts_columns_are_code_points() -> None:
    facts = TokenFacts("é = 'ü'  # ö\n")
    assert facts.comments == {1: (9, "# ö")}


# ---------------------------------------------------------------- the sparse view

MODULE = (
    "# head\n"  # 1
    "\n"
    "import jax\n"  # 3
    "def f(x):\n"  # 4
    "    return x\n"
    "\n"
    "@d\n"  # 7
    "@e\n"
    "async def g():\n"
    "    global h\n"
    "    h = 1\n"
    "class C:\n"  # 12
    "    pass\n"
    "y = 1\n"  # 14
)


def test_chunks_are_the_top_level_statements() -> None:
    view = SparseModule(Lines(MODULE))
    # a module that does not start with a statement still has a first chunk from line 1
    assert view.starts == [1, 3, 4, 7, 12, 14]
    assert view.n_lines == 15
    assert [view.chunk_index(ln) for ln in range(1, 16)] == [0, 0, 1, 2, 2, 2, 3, 3, 3, 3, 3, 4, 4, 5, 5]
    assert [view.chunk_last_line(ln) for ln in (1, 3, 4, 7, 12, 14)] == [2, 3, 6, 11, 13, 15]
    assert [view.chunk_first_line(ln) for ln in (2, 3, 5, 9, 13, 14)] == [
        "# head",
        "import jax",
        "def f(x):",
        "@d",
        "class C:",
        "y = 1",
    ]
    assert view.chunk_text(10) == "@d\n@e\nasync def g():\n    global h\n    h = 1\n"
    assert view.chunk_text(14) == "y = 1\n"


def test_only_the_chunks_asked_for_are_parsed() -> None:
    view = SparseModule(Lines(MODULE))
    assert not any(ln in view for ln in range(1, 16))
    assert view.ensure([5, 14]) is True
    assert sorted(view.parsed) == [2, 5]
    assert [ln for ln in range(1, 16) if ln in view] == [4, 5, 6, 14, 15]
    module = view.module()
    assert [(type(s).__name__, s.lineno, s.end_lineno) for s in module.body] == [
        ("FunctionDef", 4, 5),
        ("Assign", 14, 14),
    ]
    assert view.module() is module
    # asking again parses nothing
    assert view.ensure([4, 6, 15]) is False
    assert view.module() is module
    # asking for more gives a new module with the statements in source order
    assert view.ensure([8]) is True
    assert [(type(s).__name__, s.lineno) for s in view.module().body] == [
        ("FunctionDef", 4),
        ("AsyncFunctionDef", 9),
        ("Assign", 14),
    ]
    assert view.failed is False and view.replaced is False


def test_every_chunk_parsed_is_the_whole_module() -> None:
    view = SparseModule(Lines(MODULE))
    view.ensure(range(1, 16))
    assert sorted(view.parsed) == [0, 1, 2, 3, 4, 5]
    assert view.parsed[0] == []  # a comment and a blank line
    assert ast.dump(view.module(), include_attributes=True) == ast.dump(
        ast.parse(MODULE), include_attributes=True
    )


def test_an_empty_module_is_one_empty_chunk() -> None:
    view = SparseModule(Lines(""))
    assert view.starts == [1]
    assert view.ensure([1]) is True
    assert view.parsed == {0: []}
    assert view.module().body == []
    assert view.failed is False


def test_definitions_and_what_they_may_bind() -> None:
    view = SparseModule(Lines(MODULE))
    assert [view.is_definition(ln) for ln in (1, 3, 4, 7, 9, 12, 14)] == [
        False,
        False,
        True,
        True,
        True,
        True,
        False,
    ]
    binds = {
        name: [view.may_bind_module_name(ln, name) for ln in (3, 4, 7, 9, 12, 14)]
        for name in ("f", "g", "h", "C", "y")
    }
    assert binds == {
        # other statements may bind anything; a definition binds its name and its globals
        "f": [True, True, False, False, False, True],
        "g": [True, False, True, True, False, True],
        "h": [True, False, True, True, False, True],
        "C": [True, False, False, False, True, True],
        "y": [True, False, False, False, False, True],
    }


def test_a_global_statement_lets_a_plain_definition_bind_the_name() -> None:
    source = (
        "def k():\n    global m, n\n    m = 1\n"  # 1
        "def q():\n    return 'global'\n"  # 4
        "class K:\n    pass\n"  # 6
        "@d\nclass W:\n    pass\n"  # 8
    )
    view = SparseModule(Lines(source))
    assert [view.may_bind_module_name(1, name) for name in ("k", "m", "n", "o")] == [True, True, True, False]
    # the word in a string is no global statement
    assert [view.may_bind_module_name(4, name) for name in ("q", "z")] == [True, False]
    assert [view.may_bind_module_name(6, name) for name in ("K", "k")] == [True, False]
    assert [view.may_bind_module_name(9, name) for name in ("W", "K")] == [True, False]
    # a def or class is read again only when it spells "global"
    assert view._kinds().spells_global == [True, True, False, False]


def test_a_global_statement_is_found_when_the_module_starts_with_the_word() -> None:
    source = "global_config = {}\ndef set_config():\n    global global_config\n    global_config = 1\n"
    view = SparseModule(Lines(source))
    assert view.may_bind_module_name(2, "global_config") is True
    assert view.may_bind_module_name(2, "other") is False


def test_a_chunk_that_does_not_parse_alone_is_merged_with_the_next() -> None:
    # ``class\t`` is not read as the decorated definition it is: "@d" is a chunk of its own
    source = "x = 1\n@d\nclass\tC:\n    pass\ny = 1\n"
    view = SparseModule(Lines(source))
    assert view.starts == [1, 2, 3, 5]
    view.ensure([2])
    assert view.replaced is False
    assert sorted(view.parsed) == [1, 2]
    (cls,) = view.parsed[1]
    assert view.parsed[2] == []
    assert isinstance(cls, ast.ClassDef) and (cls.lineno, cls.end_lineno) == (3, 4)
    assert [ast.unparse(d) for d in cls.decorator_list] == ["d"]
    assert 3 in view and 5 not in view


def test_a_merge_over_a_chunk_handed_out_already_marks_the_view_replaced() -> None:
    source = "x = 1\n@d\nclass\tC:\n    pass\ny = 1\n"
    view = SparseModule(Lines(source))
    view.ensure([3])  # the class alone, without its decorator
    assert view.replaced is False
    assert [d for s in view.module().body for d in getattr(s, "decorator_list", [])] == []
    view.ensure([2])
    assert view.replaced is True
    assert [ast.unparse(d) for s in view.module().body for d in getattr(s, "decorator_list", [])] == ["d"]


def test_a_tail_that_never_parses_fails_the_view() -> None:
    view = SparseModule(Lines("x = 1\ndef broken(:\nz = 3\n"))
    assert view.ensure([1]) is True
    assert view.failed is False
    view.ensure([2])
    assert view.failed is True
    assert sorted(view.parsed) == [0]
    # a failed view parses nothing more
    assert view.ensure([3]) is False


def test_a_chunk_too_deep_for_the_parser_fails_the_view() -> None:
    view = SparseModule(Lines("y = 1\nx" + ".a" * 100_000 + "\nz = 2\n"))
    view.ensure([1])
    assert view.failed is False
    view.ensure([2])
    assert view.failed is True
    assert sorted(view.parsed) == [0]


def test_the_cache_is_shared_keyed_by_line_and_text_and_pruned_to_what_was_used() -> None:
    cache = ChunkCache()
    first = SparseModule(Lines(MODULE), cache)
    first.ensure([4, 14])
    assert set(cache) == {(4, "def f(x):\n    return x\n\n"), (14, "y = 1\n")}
    # the next version reuses the very statements for a chunk with the same line and text
    edited = MODULE.replace("y = 1", "y = 2")
    second = SparseModule(Lines(edited), cache)
    second.ensure([4, 14])
    assert second.parsed[2] is first.parsed[2]
    assert second.parsed[5] is not first.parsed[5]
    assert second.used == {(4, "def f(x):\n    return x\n\n"), (14, "y = 2\n")}
    assert len(cache) == 3
    second.prune_cache()
    assert set(cache) == second.used
    # a view made without a cache has its own
    assert SparseModule(Lines(MODULE)).cache == {}


# ---------------------------------------------------------------- the whole view


def test_full_view_chunks_are_its_statements_with_their_decorators() -> None:
    tree = ast.parse("x = 1\n@d\n@e\ndef f():\n    pass\ny = (\n  2)\n")
    view = FullView(tree)
    assert [view.chunk_index(ln) for ln in range(0, 9)] == [0, 0, 1, 1, 1, 1, 2, 2, 2]
    assert [view.chunk_last_line(ln) for ln in (1, 2, 4, 6)] == [1, 5, 5, 7]
    assert view.module() is tree
    # everything is parsed already: nothing to add, nothing lazily skipped
    assert view.ensure([1, 2, 3]) is False
    assert 100 in view
    assert view.failed is False and view.replaced is False
    assert view.is_definition(2) is False
    assert view.may_bind_module_name(4, "x") is True


def test_full_view_of_an_empty_module() -> None:
    view = FullView(ast.parse(""))
    assert view.chunk_last_line(3) == 3
    assert view.chunk_index(3) == 0


def test_a_line_separator_in_a_string_does_not_lose_the_findings_after_a_syntax_error(check: CheckFn) -> None:
    source = "from jax import lax\ns = '\u2028'\ndef broken(:\ny = lax.psend(x, 'i', [(0, 1)])\n"
    analysis = check(source, ("cpu",))
    assert analysis.syntax_error is not None
    assert [(f.code, f.span.line, f.span.col) for f in analysis.findings] == [
        ("JT001", 4, 8),
        ("JT002", 4, 8),
    ]
