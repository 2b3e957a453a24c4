"""What a function's own statements say, read without resolving anything.

A flag an ``if`` clears (``if <test>: name = False``), the literal number a ``return``
gives, the value a name last got before a use where the function rebinds it later,
whether a statement returns a given constant, and what a comparison of constants gives.
``conditions.py`` reads backend tests with them.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Sequence

from .values import LITERALS, Values, body_statements

#: the statements that open a function scope
DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)


def clears_flag(stmt: ast.stmt, name: str) -> bool:
    """``if <test>: name = False`` (nothing else in it)."""
    if not isinstance(stmt, ast.If) or stmt.orelse or len(stmt.body) != 1:
        return False
    body = stmt.body[0]
    return (
        isinstance(body, ast.Assign)
        and len(body.targets) == 1
        and isinstance(body.targets[0], ast.Name)
        and body.targets[0].id == name
        and isinstance(body.value, ast.Constant)
        and body.value.value is False
    )


NUMBER_OPS: dict[type[ast.cmpop], Callable[[float, float], bool]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
}


def literal_number(node: ast.expr | None) -> float | None:
    """The number a returned expression is (``-1``, ``0``), None when not a literal one."""
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = literal_number(node.operand)
        return -inner if inner is not None else None
    value = node.value if isinstance(node, ast.Constant) else None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return None


def _stores(stmt: ast.stmt, name: str) -> bool:
    stored = (n for n in ast.walk(stmt) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store))
    return any(n.id == name for n in stored)


def value_before(name: ast.Name, chain: Sequence[ast.AST]) -> tuple[ast.expr, list[ast.AST]] | None:
    """The value a function's own statements last assigned ``name`` before its use, where they
    rebind it later (``kind = ...device_kind``; the test; ``kind = kind[:-5]``). None when a
    statement before the use binds it any other way."""
    at = next((i for i in range(len(chain) - 1, -1, -1) if isinstance(chain[i], DEFS)), None)
    if at is None:
        return None
    func = chain[at]
    assert isinstance(func, DEFS)
    last: ast.expr | None = None
    for stmt in body_statements(func):
        if stmt.lineno >= name.lineno:
            break
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        if isinstance(stmt, ast.Assign) and isinstance(target, ast.Name) and target.id == name.id:
            last = stmt.value
        elif _stores(stmt, name.id):
            return None
    return (last, [*chain[: at + 1]]) if last is not None else None


def returns_constant(stmt: ast.stmt, value: bool) -> bool:
    return isinstance(stmt, ast.Return) and isinstance(stmt.value, ast.Constant) and stmt.value.value is value


def _falsy_return(node: ast.AST) -> bool:
    """``return``, ``return False``, ``return None``, ``return 0``."""
    if not isinstance(node, ast.Return):
        return False
    return node.value is None or (isinstance(node.value, ast.Constant) and not node.value.value)


def last_return_after_falsy_exits(func: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.expr | None:
    """What a function returns last, where every return before it gives a falsy constant
    (``try: import triton`` / ``except ImportError: return False``, then ``return
    jax.default_backend() == "gpu"``): it can be true only where that last value can.
    None for another shape (a nested function, a generator, any other earlier return)."""
    body = body_statements(func)
    last = body[-1] if body else None
    if len(body) < 2 or not isinstance(last, ast.Return) or last.value is None:
        return None
    for stmt in body[:-1]:
        for node in ast.walk(stmt):
            if isinstance(node, (ast.Yield, ast.YieldFrom, ast.Lambda, ast.ClassDef, *DEFS)):
                return None
            if isinstance(node, ast.Return) and not _falsy_return(node):
                return None
    return last.value


def tested_names(chain: Sequence[ast.AST]) -> set[str]:
    """The bare names the tests that may gate the end of ``chain`` compare or read (``if
    DEBUG:``, ``scene == "synthetic"``, ``not flag``): the ``if``, conditional-expression and
    ``while`` tests around it, and those of the ``if`` statements before it in each body it
    is in (an early exit)."""
    tests: list[ast.expr] = []
    for parent, child in itertools.pairwise(chain):
        if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test:
            tests.append(parent.test)
        for field in ("body", "orelse", "finalbody"):
            body = getattr(parent, field, None)
            if not isinstance(body, list) or not any(s is child for s in body):
                continue
            for stmt in body:
                if stmt is child:
                    break
                if isinstance(stmt, ast.If):
                    tests.append(stmt.test)
    names: set[str] = set()
    while tests:
        test = tests.pop()
        if isinstance(test, ast.Name):
            names.add(test.id)
        elif isinstance(test, ast.UnaryOp):
            tests.append(test.operand)
        elif isinstance(test, ast.BoolOp):
            tests.extend(test.values)
        elif isinstance(test, ast.Compare):
            tests.extend([test.left, *test.comparators])
    return names


#: comparisons read between two constants (identity only against None)
CONSTANT_OPS: dict[type[ast.cmpop], Callable[[object, object], bool | None]] = {
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
    ast.In: lambda a, b: a in b if isinstance(b, tuple) else None,
    ast.NotIn: lambda a, b: a not in b if isinstance(b, tuple) else None,
    ast.Is: lambda a, b: a is b if b is None else None,
    ast.IsNot: lambda a, b: a is not b if b is None else None,
}


def constant_compare(
    values: Values, left: ast.expr, op: ast.cmpop, right: ast.expr, chain: Sequence[ast.AST]
) -> bool | None:
    """What a comparison of two constants always gives, a name one assignment binds to a
    constant standing for it (``scene_type == "synthetic"`` after ``scene_type =
    "synthetic"``: the other branches never run, whatever the platform). None: unknown."""
    compare = CONSTANT_OPS.get(type(op))
    if compare is None:
        return None
    a, b = _constant(values, left, chain), _constant(values, right, chain)
    if a is None or b is None:
        return None
    known = compare(a[0], b[0])
    return known if isinstance(known, bool) else None


def _constant(values: Values, node: ast.expr, chain: Sequence[ast.AST]) -> tuple[object] | None:
    """The literal ``node`` always is: a str, number, bool or None, or a tuple, list or
    set of those but None (as a tuple), also through a name one assignment binds to one."""
    if isinstance(node, ast.Name):
        found = values.value_of(node, chain)
        if found is None or isinstance(found[0], ast.Name):
            return None
        node = found[0]
    if isinstance(node, ast.Constant) and isinstance(node.value, LITERALS):
        return (node.value,)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        items = [e.value for e in node.elts if isinstance(e, ast.Constant)]
        if len(items) == len(node.elts) and all(isinstance(i, LITERALS) and i is not None for i in items):
            return (tuple(items),)
    return None
