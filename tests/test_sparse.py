"""The language server's sparse parse gives exactly the findings of a whole-module parse."""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jaxtarget.engine import Analysis, Engine
from jaxtarget.rules.registry import WANTED
from jaxtarget.semantics.module import analyse
from jaxtarget.semantics.passing import local_loads
from jaxtarget.semantics.source import ChunkCache, SparseModule
from jaxtarget.semantics.text import Lines

from .conftest import ROOT, make_engine
from .test_resolution import LOOKALIKES, SPELLINGS
from .test_rules import CALL, GUARDED, HEADER, PAIR, UNGUARDED

sys.path.insert(0, str(ROOT / "bench"))
from generate import module

ENGINE: Engine = make_engine(("cpu", "tpu"))


def summary(a: Analysis) -> list[tuple[object, ...]]:
    return [(f.code, f.span, f.message, f.related) for f in a.findings]


def corpus() -> dict[str, str]:
    out = {f"spelling-{k}": v[0] for k, v in SPELLINGS.items()}
    out |= {f"lookalike-{k}": v for k, v in LOOKALIKES.items()}
    out |= {f"guarded-{k}": HEADER + v.format(call=CALL) for k, v in GUARDED.items()}
    out |= {f"unguarded-{k}": HEADER + v.format(call=CALL) for k, v in UNGUARDED.items()}
    out |= {f"example-{p.name}": p.read_text() for p in (ROOT / "examples").glob("*.py")}
    out["pair"] = PAIR
    out["bench"] = module()
    out["decorated-multiline"] = (
        "import jax\nfrom functools import partial\nfrom jax import lax\n"
        "@partial(\n    jax.shard_map,\n    mesh=m,\n)\n@other\ndef f(x):\n    return lax.psend(x, 'i', p)\n"
    )
    out["string-at-column-0"] = (
        'from jax import lax\ndoc = """\nlax = None\ndef psend():\n"""\ny = lax.psend(x, "i", p)\n'
    )
    out["module-rebind-late"] = "from jax import lax\ndef f():\n    return lax.psend(x)\nlax = object()\n"
    out["global-rebind"] = (
        "from jax import lax\ndef g():\n    global lax\n    lax = 1\ndef f():\n    return lax.psend(x)\n"
    )
    out["passed-to-shard-map"] = (
        "import jax\nfrom jax import lax\ndef inner(x):\n    return lax.psend(x, 'i', p)\n"
        + "".join(f"def filler{i}(x):\n    return x + {i}\n" for i in range(30))
        + "def outer(x):\n    return inner(x)\ng = jax.shard_map(outer, mesh=m, in_specs=s, out_specs=s)\n"
    )
    out["partial-passed-to-shard-map"] = (
        "import jax\nfrom functools import partial\nfrom jax import lax\n"
        "def body(x, axis):\n    return lax.psend(x, axis, p)\n"
        + "".join(f"def filler{i}(x):\n    return x + {i}\n" for i in range(30))
        + "entry = partial(body, axis='i')\n"
        + "".join(f"def later{i}(x):\n    return x - {i}\n" for i in range(30))
        + "g = jax.shard_map(entry, mesh=m, in_specs=s, out_specs=s)\n"
    )
    out["backslash"] = "from jax import lax\nx = 1 + \\\n2\ny = lax.psend(x, 'i', p)\n"
    out["syntax-error"] = HEADER + f"y = {CALL}\ndef broken(:\n"
    # an argument's value bound by `global` in a long function far above the call: parsed on demand
    out["global-argument-far-away"] = (
        "import jax\n\ndef configure():\n    global IMPL\n"
        + "    x = 1\n" * 15
        + "    IMPL = 'cudnn'\n"
        + "".join(f"def filler{i}(x):\n    return x + {i}\n" for i in range(30))
        + "def attend(q, k, v):\n    return jax.nn.dot_product_attention(q, k, v, implementation=IMPL)\n"
    )
    # a bracket left open while typing, after or before the call in its function: no chunk
    # parses to the end, and the whole-file reading (which recovers) is the one given
    out["unclosed-after-call"] = f"from jax import lax\n\ndef f(x):\n    return {CALL}\n    y = (\n"
    out["unclosed-before-call"] = f"from jax import lax\n\ndef f(x):\n    y = (\n    return {CALL}\n"
    out["string-hides-rebinding"] = (
        "if has_gpu_backend():\n    y = lax.psend(x, 'i', p)\nelse:\n    y = 0\n"
        "s = '''\nlax = 3\n'''\nfrom jax import lax\n"
    )
    out["docstring-with-code-at-column-0"] = (
        '"""Example:\n\nfrom jax import lax\nlax.psend(x, "i", p)\n"""\nimport jax\n'
    )
    out["arguments-at-column-0"] = (
        "from jax import lax\nif has_gpu_backend():\n    y = foo(\nlax.psend(x, 'i', p),\n)\n"
    )
    out["comment-with-quote"] = "from jax import lax\n# don't\ny = lax.psend(x, 'i', p)  # it's\n"
    # a test of constants far from the use: the constant's statement is parsed on demand,
    # and so is a function far below that rebinds it through `global`
    fillers = "".join(f"def filler{i}(x):\n    return x + {i}\n" for i in range(30))
    out["constant-test-far-away"] = (
        "from jax import lax\nSCENE = 'synthetic'\nDEBUG = False\n"
        + fillers
        + "def f(x):\n    if DEBUG:\n        return lax.psend(x, 'i', p)\n"
        + "    if SCENE != 'synthetic':\n        return lax.precv(x, 'i', p)\n    return x\n"
    )
    out["constant-rebound-far-away"] = (
        "from jax import lax\nDEBUG = False\n"
        + fillers
        + "def f(x):\n    if not DEBUG:\n        return x\n    return lax.psend(x, 'i', p)\n"
        + fillers.replace("filler", "later")
        + "def debug_on():\n    global DEBUG\n    DEBUG = True\n"
    )
    out["module-early-exit"] = (
        HEADER + "if not has_gpu_backend():\n    raise ImportError\n" + "x = 1\n" * 10 + f"y = {CALL}\n"
    )
    return out


CORPUS = corpus()


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_sparse_equals_full(name: str) -> None:
    source = CORPUS[name]
    full = ENGINE.check(source)
    sparse = ENGINE.check(source, sparse=True, cache=ChunkCache())
    assert summary(sparse) == summary(full)


def test_sparse_parses_only_what_matters() -> None:
    source = module()
    view = SparseModule(Lines(source))
    analyse(view, Lines(source), None, ENGINE.environment.resolver, WANTED)
    parsed_lines = sum(view._end_line(k) - view.starts[k] + 1 for k, stmts in view.parsed.items() if stmts)
    assert 0 < parsed_lines < source.count("\n") // 4


def test_cache_is_reused_and_pruned() -> None:
    source = module()
    cache = ChunkCache()
    first = ENGINE.check(source, sparse=True, cache=cache)
    before = dict(cache)
    assert any("lax.psend" in text for _, text in before), "the psend chunks are parsed and cached"
    lines = source.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if "lax.psend" in line)
    lines[at] = lines[at].replace("[(0, 1)]", "[(1, 0)]")
    assert lines[at] != source.splitlines(keepends=True)[at]
    edited = "".join(lines)
    (old_key,) = [k for k in before if k[0] <= at + 1 < k[0] + k[1].count("\n")]  # the chunk holding it
    second = ENGINE.check(edited, sparse=True, cache=cache)
    assert summary(first) == summary(second)
    added, removed = set(cache) - set(before), set(before) - set(cache)
    assert removed == {old_key}  # the edited chunk's old text is pruned, nothing else
    (new_key,) = added  # exactly the edited chunk is parsed anew
    assert new_key[0] == old_key[0] and "[(1, 0)]" in new_key[1]
    assert cache[new_key] is not before[old_key]
    # every unchanged chunk keeps the very parse the first check cached
    for key in set(before) - removed:
        assert cache[key] is before[key], key
    # and the second analysis ran on those reused statements
    body = second.module.tree.body if second.module is not None else []
    reused = {id(s) for key in set(before) - removed for s in before[key]}
    assert reused and reused <= {id(s) for s in body}


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(
            [
                "x = 1\n",
                "lax = None\n",
                "from jax import lax\n",
                "import jax.lax as lax\n",
                "def lax():\n    pass\n",
                "if has_gpu_backend():\n    y = lax.psend(x, 'i', p)\nelse:\n    y = 0\n",
                "y = lax.psend(x, 'i', p)\n",
                "def f(x):\n    return lax.precv(t, x, 'i', p)\n",
                "g = jax.shard_map(f, mesh=m, in_specs=s, out_specs=s)\n",
                "import jax\n",
                "s = '''\nlax = 3\n'''\n",
                "@jax.jit\ndef h(x):\n    return lax.psend(x, 'i', p)\n",
                "class C:\n    lax = 1\n    def m(self):\n        return lax.psend(1)\n",
                "# noqa\n",
                "DEBUG = False\n",
                "MODE = 'a'\n",
                "if DEBUG:\n    y = lax.psend(x, 'i', p)\n",
                "def m(x):\n    if MODE == 'a':\n        return x\n    return lax.psend(x, 'i', p)\n",
                "def on():\n    global DEBUG, MODE\n    DEBUG = True\n",
                "def k[\n    T: int,\n](x: T) -> T:\n    return lax.psend(x, 'i', p)\n",
                "type Pair[\n    T,\n] = tuple[T, T]\n",
            ]
        ),
        max_size=8,
    )
)
def test_sparse_equals_full_on_generated_modules(parts: list[str]) -> None:
    source = "".join(parts)
    assert summary(ENGINE.check(source, sparse=True, cache=ChunkCache())) == summary(ENGINE.check(source))


def test_real_library_file() -> None:
    import jax

    path = Path(jax.__file__).parent / "_src" / "lax" / "parallel.py"
    source = path.read_text()
    assert summary(ENGINE.check(source, sparse=True, cache=ChunkCache())) == summary(ENGINE.check(source))


_PIECES = [
    "x = 1\n",
    "from jax import lax\n",
    "def f(x):\n    return lax.psend(x, 'i', p)\n",
    "@jax.jit\n@other\ndef h(x):\n    return x\n",
    "s = '''\nlax = 3\n'''; lax = 2\n",
    'd = """doc\ndef g():\n"""\n',
    "t = (1,\n2)\n",
    "u = 1 + \\\n2\n",
    "if x:\n    y = lax\nelse:\n    y = 0\n",
    "# lax comment\n",
    "class C:\n    lax = 1\n",
    "laxer = lax_ = _lax + lax\r\n",
    'open = """never closed "x" \n',
    "stray = 'no end\n",
    "@d\nclass K:\n  pass\n",
    "def k():\n    global lax\n    lax = 1\n",
    "async def j():\n    pass\n",
    "def m[\n    T,\n](x: T) -> T:\n    return lax\n",
]
_TYPED = st.text(alphabet="lax_( )[]{}'\"\\#@\n\r\x0c\u2028édefclassglob:=1", max_size=12)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(_PIECES), min_size=1, max_size=10),
    st.integers(min_value=0),
    st.integers(min_value=0, max_value=30),
    _TYPED,
    st.lists(st.tuples(st.integers(min_value=0), st.integers(min_value=0, max_value=8), _TYPED), max_size=3),
)
def test_scans_after_an_edit_equal_scans_from_scratch(
    parts: list[str], at: int, cut: int, typed: str, more: list[tuple[int, int, str]]
) -> None:
    """Line starts, statement starts, what each statement binds and identifier lines reused from the previous version equal a
    fresh scan (the typed text holds ``\r``, ``\r\n`` and the breaks only str.splitlines knows)."""
    source = "".join(parts)
    previous = Lines(source)
    cache = ChunkCache()
    for text in (previous,):
        text.statement_starts()
        SparseModule(text, cache)._kinds()
        for word in ("lax", "def", "x"):
            text.word_lines(word)
    for where, length, insert in [(at, cut, typed), *more]:
        where %= len(source) + 1
        edited = source[:where] + insert + source[where + length :]
        incremental, fresh = Lines(edited, previous), Lines(edited)
        assert incremental.starts == fresh.starts, (source, edited)
        assert incremental.statement_starts() == fresh.statement_starts(), (source, edited)
        # what each statement binds, kept for the statements the edit left whole
        kept, read = SparseModule(incremental, cache)._kinds(), SparseModule(fresh)._kinds()
        assert (kept.names, kept.spells_global) == (read.names, read.spells_global), (source, edited)
        for word in ("lax", "def", "x"):
            assert incremental.word_lines(word) == fresh.word_lines(word), (word, source, edited)
        source, previous = edited, incremental


def test_a_string_ending_mid_line_starts_no_statement() -> None:
    source = 'x = """doc\n"""; y = 1\nz = 2\n'
    assert Lines(source).statement_starts() == [1, 3]


def _parses(code: str) -> bool:
    try:
        ast.parse(code)
    except SyntaxError:
        return False
    return True


def _binding_oracle(view: SparseModule, lines: list[int], name: str) -> list[int]:
    """The first of ``lines`` in each top-level statement that can bind ``name`` in module scope,
    read from the statement's own parse: anything but a def or class may bind it; a def or
    class binds its own name and the names its body declares ``global``."""
    found: list[int] = []
    asked: set[int] = set()
    for ln in lines:
        k = view.chunk_index(ln)
        if k in asked:
            continue
        asked.add(k)
        try:
            body = ast.parse(view.chunk_text(ln)).body
        except SyntaxError:  # the analysis never reads a statement that does not parse
            continue
        stmt = body[0] if len(body) == 1 else None
        if not isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or (
            stmt.name == name or any(isinstance(n, ast.Global) and name in n.names for n in ast.walk(stmt))
        ):
            found.append(ln)
    return found


BINDERS = (
    "import jax\nfrom jax import lax\n"
    "def lax():\n    pass\n"
    "async def jnp():\n    return lax\n"
    "class lax_holder:\n    lax = 1\n"
    "@partial(\n    jax.jit,\n)\n@other\ndef lax(x):\n    return x\n"
    "@deco\nclass jnp:\n    pass\n"
    "def rebinds():\n    global lax, jnp\n    lax = jnp = None\n"
    "def reads():\n    return lax.psend(jnp)\n"
    "if flag:\n    lax = jnp = None\n"
    "@decorated_without_def\nx = lax\n"
    "def  spaced (x):\n    return lax\n"
    "lax, jnp = 1, 2\n"
)


@pytest.mark.parametrize("name", ["corpus", "binders", "bench"])
def test_binding_lines_ask_only_the_statements_that_can_bind(name: str) -> None:
    """The statements that can bind a name in module scope, read from the text of the
    statements that spell it, are those their parse says can."""
    sources = list(CORPUS.values()) if name == "corpus" else [BINDERS if name == "binders" else module(3000)]
    compared = 0
    for source in sources:
        text = Lines(source)
        view = SparseModule(text)
        words = set(re.findall(r"[A-Za-z_]\w*", source))
        for word in sorted(words):
            lines = text.word_lines(word)
            readable = [ln for ln in view.binding_lines(lines, word) if _parses(view.chunk_text(ln))]
            assert readable == _binding_oracle(view, lines, word), (source, word)
            compared += 1
    assert compared > 20
    if name == "binders":
        text = Lines(BINDERS)
        view = SparseModule(text)
        bound = {
            w: [text.text(ln).strip() for ln in view.binding_lines(text.word_lines(w), w)]
            for w in ("lax", "jnp")
        }
        # imports, defs and classes of that name (decorated too), globals, other statements
        assert bound["lax"] == [
            "from jax import lax",
            "def lax():",
            "def lax(x):",
            "global lax, jnp",
            "lax = jnp = None",
            "x = lax",
            "lax, jnp = 1, 2",
        ]
        assert bound["jnp"] == [
            "async def jnp():",
            "class jnp:",
            "global lax, jnp",
            "lax = jnp = None",
            "lax, jnp = 1, 2",
        ]


def _loads_walked(function: ast.AST, above: list[ast.AST], name: str) -> list[tuple[ast.Name, list[ast.AST]]]:
    """Every load of ``name`` in ``function``, with its ancestors, by a plain recursive walk."""
    found: list[tuple[ast.Name, list[ast.AST]]] = []

    def walk(node: ast.AST, chain: list[ast.AST]) -> None:
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            found.append((node, chain))
        for child in reversed(list(ast.iter_child_nodes(node))):
            walk(child, [*chain, node])

    walk(function, above)
    return found


def test_local_loads_are_every_load_in_the_function_with_its_ancestors() -> None:
    """The per-function index of loads answers what walking the function finds, asked twice
    (the second answer from the index) and from a use nested deeper in the function."""
    compared = 0
    for source in [*CORPUS.values(), BINDERS]:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for function in ast.walk(tree):
            if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            names = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)} | {"absent"}
            for name in sorted(names):
                expected = _loads_walked(function, [tree], name)
                for _ in range(2):
                    got = local_loads([tree, function, function.body[0]], name)
                    assert got is not None
                    assert [(id(n), [id(a) for a in above]) for n, above in got] == [
                        (id(n), [id(a) for a in above]) for n, above in expected
                    ]
                compared += 1
    assert compared > 50
    assert local_loads([ast.parse("x = y")], "y") is None
