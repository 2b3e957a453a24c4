"""Which backends can reach a piece of code, given the guards around it.

Rule-agnostic: a guard restricts the set of platforms on which the guarded
code runs (``if`` tests, conditional expressions, ``and`` chains, early exits,
``assert``, skip decorators and a module-level ``pytestmark``). JAX's backend
queries are recognised by what they resolve to, through the same resolver as
everything else; ``None`` means "no restriction known".
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Mapping, Sequence

from ..platforms import ALL_PLATFORMS, GPU_PLATFORMS, platforms_of

#: JAX's backend queries; the semantic layer resolves loads of these names.
DEFAULT_BACKEND = "jax.default_backend"
GUARD_NAMES: frozenset[str] = frozenset({DEFAULT_BACKEND})

#: Helpers that are GPU tests by convention (the fix inserts the first one).
GPU_TEST_FUNCTIONS = frozenset({"has_gpu_backend", "is_gpu_backend", "gpu_available"})
_TERMINATING_CALLS = frozenset({"skip", "exit", "fail"})

#: Words whose lines must be parsed so that guards can be read.
SETUP_WORDS: tuple[str, ...] = (
    "import",
    *sorted(GPU_TEST_FUNCTIONS),
    "default_backend",
    "platform",
    "pytestmark",
)

Allowed = frozenset[str] | None
Sets = tuple[Allowed, Allowed]
#: id(node) -> the public name a load resolved to
Resolved = Mapping[int, str]


def terminal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _is_backend_expr(node: ast.AST, resolved: Resolved) -> bool:
    if isinstance(node, ast.Call) and resolved.get(id(node.func)) == DEFAULT_BACKEND:
        return True
    return bool(isinstance(node, ast.Attribute) and node.attr == "platform")


def _string_set(node: ast.AST) -> frozenset[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return platforms_of(node.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        out: set[str] = set()
        for elt in node.elts:
            if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
                return None
            out |= platforms_of(elt.value)
        return frozenset(out)
    return None


def guard_sets(test: ast.AST, resolved: Resolved) -> Sets:
    """Platforms on which the true branch / the false branch of ``test`` can run."""
    if isinstance(test, ast.Call) and terminal(test.func) in GPU_TEST_FUNCTIONS and not test.args:
        return GPU_PLATFORMS, ALL_PLATFORMS - GPU_PLATFORMS
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        body, orelse = guard_sets(test.operand, resolved)
        return orelse, body
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left, op, right = test.left, test.ops[0], test.comparators[0]
        if _is_backend_expr(right, resolved) and isinstance(op, (ast.Eq, ast.NotEq)):
            left, right = right, left
        if _is_backend_expr(left, resolved):
            values = _string_set(right)
            if values is not None:
                if isinstance(op, (ast.Eq, ast.In)):
                    exact = len(values) <= 1 or isinstance(op, ast.In)
                    return values, ALL_PLATFORMS - values if exact else None
                if isinstance(op, (ast.NotEq, ast.NotIn)):
                    return ALL_PLATFORMS - values, values
    if isinstance(test, ast.BoolOp):
        parts = [guard_sets(v, resolved) for v in test.values]
        bodies = [b for b, _ in parts]
        elses = [e for _, e in parts]
        if isinstance(test.op, ast.And):
            return _meet(bodies), _join(elses)
        return _join(bodies), _meet(elses)
    return None, None


def _meet(sets: Sequence[Allowed]) -> Allowed:
    """Where all of these hold (unknown ones left out)."""
    known = [s for s in sets if s is not None]
    return frozenset.intersection(*known) if known else None


def _join(sets: Sequence[Allowed]) -> Allowed:
    """Where any of these holds (unknown if any is unknown)."""
    known = [s for s in sets if s is not None]
    return frozenset.union(*known) if len(known) == len(sets) else None


def restrict(allowed: Allowed, more: Allowed) -> Allowed:
    if more is None:
        return allowed
    return more if allowed is None else allowed & more


def _terminates(body: Sequence[ast.stmt]) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    return (
        isinstance(last, ast.Expr)
        and isinstance(last.value, ast.Call)
        and terminal(last.value.func) in _TERMINATING_CALLS
    )


def _early_exit(stmts: Sequence[ast.stmt], upto: ast.stmt, resolved: Resolved) -> Allowed:
    """Platforms that still run ``upto`` after earlier guard-and-exit statements."""
    allowed: Allowed = None
    for stmt in stmts:
        if stmt is upto:
            break
        if isinstance(stmt, ast.If):
            body, orelse = guard_sets(stmt.test, resolved)
            if _terminates(stmt.body) and (not stmt.orelse or not _terminates(stmt.orelse)):
                allowed = restrict(allowed, orelse)
            elif stmt.orelse and _terminates(stmt.orelse):
                allowed = restrict(allowed, body)
        elif isinstance(stmt, ast.Assert):
            allowed = restrict(allowed, guard_sets(stmt.test, resolved)[0])
    return allowed


def _decorator_sets(decorators: Sequence[ast.expr], resolved: Resolved) -> Allowed:
    allowed: Allowed = None
    for dec in decorators:
        if not isinstance(dec, ast.Call) or not dec.args:
            continue
        name = terminal(dec.func)
        body, orelse = guard_sets(dec.args[0], resolved)
        if name in ("skipif", "skipIf"):
            allowed = restrict(allowed, orelse)
        elif name == "skipUnless":
            allowed = restrict(allowed, body)
    return allowed


def _block_of(parent: ast.AST, child: ast.AST) -> list[ast.stmt] | None:
    for name in ("body", "orelse", "finalbody", "handlers"):
        block = getattr(parent, name, None)
        if isinstance(block, list) and any(c is child for c in block):
            return block
    return None


def allowed_platforms(ancestors: Sequence[ast.AST], node: ast.AST, resolved: Resolved) -> Allowed:
    """Which platforms can reach ``node``, given the guards around it (None: any)."""
    allowed: Allowed = None
    chain = [*ancestors, node]
    for parent, child in itertools.pairwise(chain):
        if isinstance(parent, (ast.If, ast.IfExp)):
            body, orelse = guard_sets(parent.test, resolved)
            if isinstance(parent, ast.If):
                in_body = any(c is child for c in parent.body)
                in_else = any(c is child for c in parent.orelse)
            else:
                in_body, in_else = parent.body is child, parent.orelse is child
            if in_body:
                allowed = restrict(allowed, body)
            elif in_else:
                allowed = restrict(allowed, orelse)
        elif isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
            for value in parent.values:
                if value is child:
                    break
                allowed = restrict(allowed, guard_sets(value, resolved)[0])
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
            c is child for c in parent.body
        ):
            allowed = restrict(allowed, _decorator_sets(parent.decorator_list, resolved))
        block = _block_of(parent, child)
        if block is not None and isinstance(child, ast.stmt):
            allowed = restrict(allowed, _early_exit(block, child, resolved))
    return allowed


def module_pytestmark(tree: ast.Module, resolved: Resolved) -> Allowed:
    """Platforms a module-level ``pytestmark = pytest.mark.skipif(...)`` lets run."""
    allowed: Allowed = None
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets
        ):
            marks = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
            allowed = restrict(allowed, _decorator_sets(marks, resolved))
    return allowed
