"""A small mutation tester: does the test selection notice when a module's code changes?

    .venv/bin/python bench/mutation.py server/jaxtarget/platforms.py \
        tests/test_rules.py tests/test_rule_examples.py --max-mutants 30 --jobs 2

Each mutant is one ast-level change to the module (a comparison flipped, ``and``/``or``
swapped, ``True``/``False`` swapped, an int constant moved by one, a ``not`` removed, a
``return`` of a value made ``return None``, one statement of a branch deleted). The
repository is copied to a temporary folder once per job; each mutant is written over
the module there, the selection runs with ``pytest -x -q`` under a per-mutant timeout,
and the module is put back. A mutant is killed when the tests fail, survives when they
pass, and times out when they run past the limit. Standard library only.

The selection is any pytest arguments naming tests: files, or node ids such as
``tests/test_idioms.py::test_findings_match_the_markers``; ``-k EXPR`` narrows it
further with pytest's keyword expression (a slow test that does not exercise the
module can be left out: ``-k "not runtime_claims"``). The virtual environments
under ``.jax-venvs`` are linked into each copy, not copied (the tests only run them).
"""

from __future__ import annotations

import argparse
import ast
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from queue import Queue

ROOT = Path(__file__).resolve().parents[1]

_FLIP: dict[type[ast.cmpop], type[ast.cmpop]] = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}
_SKIP_DIRS = {".git", "node_modules", ".mypy_cache", ".ruff_cache", ".pytest_cache", "__pycache__", ".venv"}
#: large read-only folders at the repository root that each copy links to instead of copying
_LINKED = (".jax-venvs",)


@dataclass(frozen=True)
class Mutant:
    index: int  # position in the module's mutant list
    line: int
    description: str


@dataclass
class Outcome:
    mutant: Mutant
    status: str  # killed, survived, timeout
    seconds: float


def _docstring_ids(tree: ast.Module) -> set[int]:
    ids: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                ids.add(id(body[0].value))
    return ids


def _sites(tree: ast.Module) -> Iterator[tuple[ast.AST, str, int, str]]:
    """(node, kind, detail, description) for every mutation site, in source order."""
    docstrings = _docstring_ids(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in _FLIP:
                    new = _FLIP[type(op)].__name__
                    yield node, "compare", i, f"{type(op).__name__} -> {new}"
        elif isinstance(node, ast.BoolOp):
            other = "Or" if isinstance(node.op, ast.And) else "And"
            yield node, "boolop", 0, f"{type(node.op).__name__} -> {other}"
        elif isinstance(node, ast.Constant) and id(node) not in docstrings:
            if isinstance(node.value, bool):
                yield node, "bool", 0, f"{node.value} -> {not node.value}"
            elif isinstance(node.value, int):
                yield node, "int", 1, f"{node.value} -> {node.value + 1}"
                yield node, "int", -1, f"{node.value} -> {node.value - 1}"
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            yield node, "not", 0, "remove `not`"
        elif isinstance(node, ast.Return) and node.value is not None:
            if not (isinstance(node.value, ast.Constant) and node.value.value is None):
                yield node, "return", 0, "return None instead of the value"
        elif isinstance(node, (ast.If, ast.For, ast.While, ast.With, ast.Try)):
            for field in ("body", "orelse"):
                stmts = getattr(node, field, [])
                if len(stmts) > 1:  # deleting a branch's only statement leaves no valid code
                    for i in range(len(stmts)):
                        yield node, f"delete-{field}", i, f"delete statement {i + 1} of the {field}"


def _ordered_sites(tree: ast.Module) -> list[tuple[int, ast.AST, str, int, str]]:
    """Every site as (line, node, kind, detail, description), in source order."""
    found = []
    for node, kind, detail, description in _sites(tree):
        where = getattr(node, _field(kind))[detail] if kind.startswith("delete") else node
        found.append((where.lineno, getattr(where, "col_offset", 0), node, kind, detail, description))
    found.sort(key=lambda t: (t[0], t[1]))
    return [(line, node, kind, detail, description) for line, _, node, kind, detail, description in found]


def _field(kind: str) -> str:
    return kind.split("-", 1)[1]


def mutants(source: str) -> list[Mutant]:
    sites = _ordered_sites(ast.parse(source))
    return [Mutant(i, line, description) for i, (line, _, _, _, description) in enumerate(sites)]


def mutate(source: str, index: int) -> str:
    """The module's source with mutant number ``index`` applied."""
    tree = ast.parse(source)
    _, node, kind, detail, _ = _ordered_sites(tree)[index]
    if isinstance(node, ast.Compare) and kind == "compare":
        node.ops[detail] = _FLIP[type(node.ops[detail])]()
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.Constant) and kind == "bool":
        node.value = not node.value
    elif isinstance(node, ast.Constant) and kind == "int":
        node.value = node.value + detail
    elif isinstance(node, ast.UnaryOp) and kind == "not":
        _replace(tree, node, node.operand)
    elif isinstance(node, ast.Return):
        node.value = ast.Constant(None)
    elif kind.startswith("delete"):
        del getattr(node, _field(kind))[detail]
    return ast.unparse(ast.fix_missing_locations(tree)) + "\n"


def _replace(tree: ast.AST, old: ast.AST, new: ast.AST) -> None:
    for parent in ast.walk(tree):
        for field, value in ast.iter_fields(parent):
            if value is old:
                setattr(parent, field, new)
                return
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if item is old:
                        value[i] = new
                        return


def _copy_repo(dest: Path) -> None:
    def ignore(folder: str, names: list[str]) -> set[str]:
        skip = {n for n in names if n in _SKIP_DIRS or n.endswith(".egg-info")}
        if Path(folder) == ROOT:
            skip |= set(_LINKED)
        return skip

    shutil.copytree(ROOT, dest, ignore=ignore, symlinks=True)
    for name in _LINKED:
        if (ROOT / name).exists():
            (dest / name).symlink_to(ROOT / name, target_is_directory=True)


def _run_tests(copy: Path, tests: list[str], timeout: float, keyword: str | None = None) -> str:
    env = {k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}
    # the copy's sources come first, whatever the interpreter has installed
    env["PYTHONPATH"] = os.pathsep.join([str(copy / "server"), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *tests]
    if keyword is not None:
        cmd += ["-k", keyword]
    try:
        proc = subprocess.run(cmd, cwd=copy, env=env, capture_output=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout"
    return "survived" if proc.returncode == 0 else "killed"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("module", help="a module of server/jaxtarget, e.g. server/jaxtarget/platforms.py")
    parser.add_argument(
        "tests", nargs="+", help="the pytest selection that should kill the mutants (files or node ids)"
    )
    parser.add_argument(
        "-k", dest="keyword", default=None, help="a pytest -k expression that narrows the selection"
    )
    parser.add_argument("--max-mutants", type=int, default=None, help="try at most this many (spread evenly)")
    parser.add_argument(
        "--lines",
        default=None,
        help="only the mutants on these lines of the module (comma-separated), e.g. to re-run survivors",
    )
    parser.add_argument("--jobs", type=int, default=1, help="mutants tested at once (one repo copy each)")
    parser.add_argument(
        "--timeout", type=float, default=None, help="seconds per mutant (default: 3x baseline)"
    )
    args = parser.parse_args(argv)

    module = Path(args.module)
    rel = (module if not module.is_absolute() else module.relative_to(ROOT)).as_posix()
    source = (ROOT / rel).read_text()
    every = mutants(source)
    if args.lines:
        wanted = {int(n) for n in args.lines.split(",")}
        every = [m for m in every if m.line in wanted]
    chosen = every
    if args.max_mutants is not None and len(every) > args.max_mutants:
        step = len(every) / args.max_mutants
        chosen = [every[int(i * step)] for i in range(args.max_mutants)]
    narrowed = f" -k {args.keyword!r}" if args.keyword is not None else ""
    print(f"{rel}: {len(every)} mutants, testing {len(chosen)} with {' '.join(args.tests)}{narrowed}")

    with tempfile.TemporaryDirectory(prefix="jaxtarget-mutation-") as tmp:
        copies: Queue[Path] = Queue()
        for j in range(max(1, args.jobs)):
            dest = Path(tmp) / f"repo{j}"
            _copy_repo(dest)
            copies.put(dest)
        first = copies.get()
        started = time.monotonic()
        if _run_tests(first, args.tests, 3600, args.keyword) != "survived":
            print("the selection fails on the unmutated code: nothing to measure", file=sys.stderr)
            return 2
        baseline = time.monotonic() - started
        copies.put(first)
        timeout = args.timeout or max(30.0, 3 * baseline)
        print(f"baseline {baseline:.1f} s, per-mutant timeout {timeout:.0f} s")

        def one(m: Mutant) -> Outcome:
            copy = copies.get()
            try:
                target = copy / rel
                target.write_text(mutate(source, m.index))
                t0 = time.monotonic()
                status = _run_tests(copy, args.tests, timeout, args.keyword)
                return Outcome(m, status, time.monotonic() - t0)
            finally:
                (copy / rel).write_text(source)
                copies.put(copy)

        outcomes: list[Outcome] = []
        with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
            for outcome in pool.map(one, chosen):
                outcomes.append(outcome)
                m = outcome.mutant
                print(f"  {outcome.status:8} {rel}:{m.line} {m.description} ({outcome.seconds:.1f} s)")

    counts = {s: sum(1 for o in outcomes if o.status == s) for s in ("killed", "survived", "timeout")}
    detected = counts["killed"] + counts["timeout"]
    score = 100.0 * detected / len(outcomes) if outcomes else 0.0
    print()
    print(
        f"{rel}: killed {counts['killed']}, survived {counts['survived']}, timeout {counts['timeout']}"
        f" of {len(outcomes)}; score {score:.0f}% (killed or timed out)"
    )
    survivors = [o.mutant for o in outcomes if o.status == "survived"]
    if survivors:
        print("surviving mutants:")
        for m in survivors:
            print(f"  {rel}:{m.line}: {m.description}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
