"""Where a use visibly passes the argument that makes an API platform-limited.

Rule-agnostic: a rule's ``ArgCondition`` (apis.py) names the argument (keyword or
position, also through ``functools.partial``) and the values that matter (literals,
enum members, instances of classes, arrays of a visible rank). The argument's
expression is read through single assignments and module constants (values.py), a
value chosen by a backend test (``"cudnn" if on_gpu else "xla"``) holds only where
that test is true, and names are matched by what the resolver says they are, never
by their spelling. An argument that cannot be read is not visible: no condition holds.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from ..apis import AllOf, ArgCondition, ArrayDtype, ArrayRank, Condition, Instance, Member, Value
from ..platforms import ALL_PLATFORMS
from ..semantics.module import Module, Reference
from ..semantics.settings_calls import set_where

PARTIAL = "functools.partial"
NONE: frozenset[str] = frozenset()
#: (platforms where the argument can have the value, platforms where it can have another)
Sides = tuple[frozenset[str], frozenset[str]]
_UNKNOWN: Sides = (NONE, NONE)
_MATCH: Sides = (ALL_PLATFORMS, NONE)
_OTHER: Sides = (NONE, ALL_PLATFORMS)
_MAX_DEPTH = 4


def condition_platforms(module: Module, ref: Reference, cond: Condition) -> frozenset[str]:
    """The platforms on which a use visibly passes the argument that makes the API platform-limited."""
    if isinstance(cond, AllOf):
        out = ALL_PLATFORMS
        for part in cond.parts:
            out &= condition_platforms(module, ref, part)
        return out
    chain = [*ref.ancestors, ref.node]
    arg = argument(module, ref, cond)
    if arg is None:
        # not passed: only the absence of a value holds, except where a setter gives it
        given = set_where(module, ref, cond.set_by) if cond.set_by else NONE
        return ALL_PLATFORMS - given if cond.negated else given
    if isinstance(arg, ast.Starred):
        return NONE
    match, other = _sides(module, arg, chain, cond, 0)
    return other if cond.negated else match


def argument(module: Module, ref: Reference, cond: ArgCondition) -> ast.expr | None:
    """The expression a use passes for the condition's argument (a ``Starred`` where unknown)."""
    for kw in ref.keywords:
        if kw.arg == cond.keyword:
            return kw.value
    for kw in ref.keywords:
        if kw.arg is None:
            # **kwargs: anything may be passed, unless they are the function's own and every
            # use of that function in its scope binds the keyword (``partial(body, implementation=...)``)
            handed = _keyword_handed_in(module, ref, kw.value, cond.keyword)
            return handed if handed is not None else ast.Starred(ast.Constant(None), ast.Load())
    if cond.position is None:
        return None
    args = _positional(module, ref)
    for i, a in enumerate(args):
        if isinstance(a, ast.Starred):
            return a
        if i == cond.position:
            return a
    return None


def _keyword_handed_in(module: Module, ref: Reference, kwargs: ast.expr, keyword: str) -> ast.expr | None:
    """The value every use of the enclosing function passes for ``keyword`` into its ``**kwargs``.

    Only a nested function is followed: the uses are read in the function that defines it,
    each a call or a ``functools.partial`` of it binding the keyword to one same value.
    """
    defs = [n for n in ref.ancestors if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]
    if len(defs) < 2 or not isinstance(kwargs, ast.Name):
        return None
    scope, func = defs[-2], defs[-1]
    if func.args.kwarg is None or func.args.kwarg.arg != kwargs.id:
        return None
    found: list[ast.expr] = []
    used = 0
    for node in ast.walk(scope):
        if isinstance(node, ast.Name) and node.id == func.name and isinstance(node.ctx, ast.Load):
            used += 1
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Name) and node.func.id == func.name:
            keywords = node.keywords
        elif node.args and isinstance(node.args[0], ast.Name) and node.args[0].id == func.name:
            if module.guards.callee(node) != PARTIAL:
                continue
            keywords = node.keywords
        else:
            continue
        value = next((kw.value for kw in keywords if kw.arg == keyword), None)
        if value is None:
            return None
        found.append(value)
    if not found or len(found) != used or len({ast.dump(v) for v in found}) != 1:
        return None  # used another way too (passed on as it is), or with different values
    return found[0]


def _positional(module: Module, ref: Reference) -> Sequence[ast.expr]:
    if ref.call is not None:
        return ref.call.args
    parent = ref.ancestors[-1] if ref.ancestors else None
    if (
        isinstance(parent, ast.Call)
        and parent.args
        and parent.args[0] is ref.node
        and module.guards.callee(parent) == PARTIAL
    ):
        return parent.args[1:]
    return []


def _sides(module: Module, value: ast.expr, chain: list[ast.AST], cond: ArgCondition, depth: int) -> Sides:
    guards = module.guards
    if isinstance(value, ast.IfExp):
        true, false = guards.sets(value.test, chain)
        body = _sides(module, value.body, chain, cond, depth)
        orelse = _sides(module, value.orelse, chain, cond, depth)
        if (true, false) == (ALL_PLATFORMS, ALL_PLATFORMS):
            # a choice on something other than the backend: visible only if both sides agree
            return body[0] & orelse[0], body[1] & orelse[1]
        return (true & body[0]) | (false & orelse[0]), (true & body[1]) | (false & orelse[1])
    if isinstance(value, ast.Name) and depth < _MAX_DEPTH:
        found = guards.values.value_of(value, chain)
        local = guards.values.bound_locally(value.id, chain)
        if found is None and not local and module.ensure_bound(value.id):
            # a module constant whose statement the sparse view had not parsed
            guards = module.guards
            found = guards.values.value_of(value, chain)
        if found is not None:
            _resolve_names_in(module, found[0], cond)
            return _sides(module, found[0], list(found[1]), cond, depth + 1)
    if cond.value is None:
        # passed with anything but None; a parameter handed on
        # (``subset_by_index=subset_by_index``) may well be None
        if isinstance(value, ast.Constant) and value.value is None:
            return _OTHER
        return _UNKNOWN if isinstance(value, ast.Name) and _is_parameter(value, chain) else _MATCH
    if isinstance(value, ast.Constant) and value.value is None:
        return _OTHER
    if isinstance(value, ast.Constant):
        # a flag is read the way jax reads it (``if interpret:``): ``interpret=1`` is True
        wanted = [v for v in cond.alternatives if isinstance(v, bool)]
        if wanted:
            return _MATCH if bool(value.value) in wanted else _OTHER
    if any(isinstance(v, bool) for v in cond.alternatives):
        # a backend test passed as a flag (``interpret=jax.default_backend() == "cpu"``)
        true, false = guards.sets(value, chain)
        if (true, false) != (ALL_PLATFORMS, ALL_PLATFORMS):
            # where the test can go either way (``eager and on_cpu`` on cpu: ``eager`` decides),
            # the flag is not visible there
            true, false = true - false, false - true
            return (true, false) if True in cond.alternatives else (false, true)
    seen = [_one(module, value, chain, v) for v in cond.alternatives]
    if True in seen:
        return _MATCH
    return _UNKNOWN if None in seen or not seen else _OTHER


def _is_parameter(name: ast.Name, chain: Sequence[ast.AST]) -> bool:
    """Whether ``name`` is a parameter of the function it is read in."""
    func = next((n for n in reversed(chain) if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
    if func is None:
        return False
    args = func.args
    params = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return any(a is not None and a.arg == name.id for a in params)


def _resolve_names_in(module: Module, value: ast.expr, cond: ArgCondition) -> None:
    """Resolve the names a value bound elsewhere spells (a module constant ``ALG = SvdAlgorithm.QR``).

    Only the statements around a use are resolved up front; the one binding the value may not be.
    """
    if not cond.names or module.resolver is None:
        return
    resolved = module.guards.resolved
    terms = {q.rsplit(".", 1)[-1] for q in cond.names}
    for node in ast.walk(value):
        if isinstance(node, ast.Attribute):
            spelled: str | None = node.attr
        elif isinstance(node, ast.Name):
            spelled = node.id
        else:
            continue
        if spelled in terms and id(node) not in resolved:
            module.resolve([node.lineno], module.names)
            return


def _one(module: Module, value: ast.expr, chain: list[ast.AST], want: Value) -> bool | None:
    """Whether ``value`` visibly is ``want`` (None: cannot tell)."""
    resolved = module.guards.resolved
    if isinstance(want, Member):
        if isinstance(value, ast.Attribute) and resolved.get(id(value.value)) == want.cls:
            return value.attr == want.name
        if isinstance(value, ast.Constant):
            return False
        return None
    if isinstance(want, Instance):
        if isinstance(value, ast.Call):
            callee = resolved.get(id(value.func))
            if callee in want.classes:
                return True
            return None if callee is None else False
        return False if isinstance(value, ast.Constant) else None
    if isinstance(want, ArrayRank):
        rank = _rank(module, value, chain, want, 0)
        return None if rank is None else rank == want.rank
    if isinstance(want, ArrayDtype):
        return _of_dtype(module, value, chain, want, 0)
    if isinstance(value, ast.Constant):
        return value.value == want and type(value.value) is type(want)
    # an enum member or an instance the resolver knows is no literal
    known = value.func if isinstance(value, ast.Call) else None
    if isinstance(value, ast.Attribute):
        known = value.value
    return False if known is not None and id(known) in resolved else None


def _of_dtype(
    module: Module, value: ast.expr, chain: list[ast.AST], want: ArrayDtype, depth: int
) -> bool | None:
    """Whether an array expression is visibly of a wanted dtype (None: cannot tell)."""
    if isinstance(value, ast.Name) and depth < _MAX_DEPTH:
        found = module.guards.values.value_of(value, chain)
        return None if found is None else _of_dtype(module, found[0], list(found[1]), want, depth + 1)
    if not isinstance(value, ast.Call):
        return None
    if isinstance(value.func, ast.Attribute) and value.func.attr == "astype":
        keyword = next((k.value for k in value.keywords if k.arg == "dtype"), None)
        target = value.args[0] if value.args else keyword
        return None if target is None else _is_dtype(module, target, want)
    if module.guards.resolved.get(id(value.func)) in want.dtypes:
        return True  # jnp.float16(x)
    named = next((k.value for k in value.keywords if k.arg == "dtype"), None)
    return None if named is None else _is_dtype(module, named, want)


def _is_dtype(module: Module, value: ast.expr, want: ArrayDtype) -> bool | None:
    if isinstance(value, ast.Constant) and isinstance(value.value, str):
        return value.value in want.spelled
    resolved = module.guards.resolved.get(id(value))
    if resolved is None:
        return None
    return resolved in want.dtypes


def _element_rank(
    module: Module, elt: ast.expr, chain: list[ast.AST], want: ArrayRank, depth: int
) -> int | None:
    """A literal's element: a number is rank 0, a nested literal its own rank, anything else unknown."""
    if isinstance(elt, ast.Constant) and isinstance(elt.value, (int, float, complex)):
        return 0
    if isinstance(elt, ast.UnaryOp) and isinstance(elt.operand, ast.Constant):
        return 0
    if isinstance(elt, (ast.List, ast.Tuple)):
        return _rank(module, elt, chain, want, depth + 1)
    return None


def _rank(module: Module, value: ast.expr, chain: list[ast.AST], want: ArrayRank, depth: int) -> int | None:
    """An array expression's rank where it is visible (a literal, ``jnp.eye(n)``, ``jnp.zeros((n, n))``)."""
    if isinstance(value, (ast.List, ast.Tuple)):
        if not value.elts:
            return 1
        ranks = {_element_rank(module, e, chain, want, depth) for e in value.elts}
        if None in ranks or len(ranks) != 1:
            return None
        return 1 + next(r for r in ranks if r is not None)
    if isinstance(value, ast.Name) and depth < _MAX_DEPTH:
        found = module.guards.values.value_of(value, chain)
        return None if found is None else _rank(module, found[0], list(found[1]), want, depth + 1)
    if not isinstance(value, ast.Call):
        return None
    callee = module.guards.resolved.get(id(value.func))
    if callee in want.square:
        # eye(n) / identity(n) is n x n; eye(n, m) is n x m
        return 2
    if callee in want.wrappers and value.args:
        return _rank(module, value.args[0], chain, want, depth + 1)
    if callee in want.shaped:
        named = [k.value for k in value.keywords if k.arg == "shape"]
        shape = value.args[0] if value.args else named[0] if named else None
        if isinstance(shape, ast.Tuple) and not any(isinstance(e, ast.Starred) for e in shape.elts):
            return len(shape.elts)
        if isinstance(shape, ast.Constant) and isinstance(shape.value, int):
            return 1
    return None
