"""Uses in module-level tables and functions, judged where the module uses them.

A table entry (``SOLVERS = {"general": jnp.linalg.eig}``, or a harness record
``Harness("eig", "plain", lambda x: lax.linalg.eig(x))`` in a list) runs where the
table is used; a decorator's use is the decorated test's, and there the test's skips
are read with the entry's own fields known (``if harness.group_name == "eig" and
not on_cpu: skip``). A module-level function that the module only passes to
``jax.jit(f, backend="cpu")`` is pinned to that platform. In a test module (``test_*.py``,
``*_test.py``: collected, not imported), a helper function runs where the module calls it,
so the guards at its call sites gate it (``sdpa_train`` called only from tests run on cuda).
A private function runs where its module calls it, and a call on the host inside a ``try``
that handles the failure ends there (``handled.eagerly_caught``).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import PurePath

from ..platforms import ALL_PLATFORMS, platforms_of
from . import passing, placed, uses
from .conditions import DEFS, as_allowed
from .entry import Entry
from .guards import Guards
from .handled import eagerly_caught
from .module_uses import ModuleUses, Use
from .project_names import spelled_elsewhere
from .values import positional_params

_CONTAINERS = (ast.List, ast.Tuple, ast.Set, ast.Dict)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp)
#: how many private callers up a function's reach is followed
_CALLER_DEPTH = 3
#: builtins that read a table without calling its entries
_READERS = frozenset({"sorted", "len", "list", "set", "tuple", "print", "repr", "str", "dict", "keys"})
#: how many tables a table's entries are followed through (``ALL = NUMERIC + ...``)
_TABLE_DEPTH = 3
#: methods that read or grow a table without calling its entries
_GROWERS = frozenset({"keys", "__len__", "append", "extend", "insert", "index", "count", "update"})


def through_module_names(module: ModuleUses, ref: Use) -> None:
    """Judge a use inside a module-level table or function where the module uses it."""
    chain = ref.ancestors
    if len(chain) < 2:
        return
    stmt = chain[1]
    table = _table_named(stmt)
    if table is not None:
        entry = _table_entry(module, chain, ref.node, grown=isinstance(stmt, ast.Expr))
        if entry is not None:
            reach = _table_reach(module, table, frozenset(), entry)
            if reach is not None:
                ref.inspected = False
                ref.allowed = as_allowed(reach if ref.allowed is None else reach & ref.allowed)
    elif (
        isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
        and ref.pinned is None
        # pinning needs `jax.jit(f, backend=...)` or `device=` somewhere, and another line naming f
        and module.may_pin()
        and len(module.lines_of_word(stmt.name)) > 1
    ):
        sites = module.uses_of(stmt.name)
        pins: set[str] = set()
        for site, above in sites:
            parent = above[-1]
            got = (
                placed.pinned_call(module.guards, parent, site, above[:-1])
                if isinstance(parent, ast.Call)
                else None
            )
            if got is None:  # a use that pins nothing: no pin (its callers are still read below)
                pins.clear()
                break
            pins |= got
        if pins:
            ref.pinned = frozenset(pins)
    # a test module's helper, or a private function of any module (``_decomposed_polymul``),
    # also one defined under a module-level `if`: its callers are the module's own, and it
    # runs where they call it
    func = _module_function(chain)
    if func is not None and _returned_to_no_one(module, func, chain, ref.node):
        ref.inspected = True
    if func is not None and (_helper_of_tests(module, func) or func.name.startswith("_")):
        reach = _callers_reach(module, func)
        if reach is not None:
            ref.allowed = as_allowed(reach if ref.allowed is None else reach & ref.allowed)
    if _in_unused_local_function(chain):
        ref.allowed = frozenset()


def _returned_to_no_one(
    module: ModuleUses, func: ast.FunctionDef | ast.AsyncFunctionDef, chain: Sequence[ast.AST], node: ast.AST
) -> bool:
    """``return api`` in a private function that its module only calls as a statement, its
    result dropped (``_load_solve_sylvester()`` inside a ``try``: a probe that the import
    works): nothing calls the API it returns."""
    if not (func.name.startswith("_") and isinstance(chain[-1], ast.Return) and chain[-1].value is node):
        return False
    sites = module.uses_of(func.name)
    return bool(sites) and all(
        len(above) > 1
        and isinstance(above[-1], ast.Call)
        and above[-1].func is site
        and isinstance(above[-2], ast.Expr)
        for site, above in sites
    )


#: calls that can reach a function's local names without naming them
_SCOPE_READERS = frozenset({"locals", "vars", "eval", "exec"})


def _in_unused_local_function(chain: Sequence[ast.AST]) -> bool:
    """Inside a function defined in another function that never names it (``def to_group(g):``
    in an ``__init__`` that neither calls, returns nor stores it): nothing can call it. A
    decorated one (a decorator may register it), one declared ``global`` or ``nonlocal``, and
    one whose function reads its scope (``locals()``, ``eval``) may run."""
    for k, node in enumerate(chain):
        if not isinstance(node, DEFS) or node.decorator_list:
            continue
        at = passing.innermost_def(chain[:k], kinds=(*DEFS, ast.ClassDef, ast.Lambda))
        scope = chain[at] if at is not None else None
        if not isinstance(scope, DEFS):
            continue
        if passing.local_loads(chain[:k], node.name) == [] and not any(
            (isinstance(n, (ast.Global, ast.Nonlocal)) and node.name in n.names)
            or (isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id in _SCOPE_READERS)
            for n in ast.walk(scope)
        ):
            return True
    return False


def _module_function(chain: Sequence[ast.AST]) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The function of the module that ``chain`` is in, defined at top level or in a
    top-level ``if``/``try``/``with`` block (``if CUPY_AVAILABLE: def _solve_gpu(...)``)."""
    for node in chain[1:]:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return node
        if not isinstance(node, (ast.If, ast.Try, ast.With)):
            return None
    return None


def _helper_of_tests(module: ModuleUses, func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A module-level function of a test module that is no test itself."""
    name = PurePath(module.path or "").name
    is_test_module = name.endswith(".py") and (name.startswith("test_") or name.endswith("_test.py"))
    return is_test_module and not func.name.startswith("test")


def _callers_reach(
    module: ModuleUses, func: ast.FunctionDef | ast.AsyncFunctionDef, seen: frozenset[int] = frozenset()
) -> frozenset[str] | None:
    """The platforms that reach some use of ``func`` in its module (None: it is never used
    there, and may be elsewhere; empty: it never runs, ``_never_run``).

    A use inside another private function of the module runs only where that one's own
    uses do (``_cupy_spsolve`` called from ``_solve_gpu``, called under ``case "gpu":``),
    followed up to ``_CALLER_DEPTH`` functions.
    """
    sites = module.uses_of(func.name)
    if not sites:
        return frozenset() if _never_run(module, func) else None
    out: frozenset[str] = frozenset()
    for site, above in sites:
        if eagerly_caught(module, above, site):
            # called on the host inside a `try` that handles the failure: it ends there
            continue
        allowed = module.guards.allowed(above, site)
        reach = ALL_PLATFORMS if allowed is None else allowed
        caller = _module_function(above)
        if (
            caller is not None
            and caller is not func
            and caller.name.startswith("_")
            and id(caller) not in seen
            and len(seen) < _CALLER_DEPTH
        ):
            up = _callers_reach(module, caller, seen | {id(func)})
            reach = reach if up is None else reach & up
        keyed = _dispatch_reach(module, site, above)
        if keyed is None:
            keyed = _registered_reach(module.guards, site, above)
        out |= reach if keyed is None else reach & keyed
    return out


def _never_run(module: ModuleUses, func: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """A private function that nothing can run: no decorator registers it, its module spells
    its name nowhere but in its ``def``, and no other file of the project spells it
    (``_flash_attention_fwd`` left over beside the kernel actually used)."""
    if not func.name.startswith("_") or func.name.startswith("__") or func.decorator_list:
        return False
    if any(line != func.lineno for line in module.lines_of_word(func.name)):
        return False
    module.reads_project = True
    return spelled_elsewhere(module.path, func.name) is False


def _registered_reach(g: Guards, site: ast.AST, above: Sequence[ast.AST]) -> frozenset[str] | None:
    """The platform a function is registered to lower a primitive on:
    ``mlir.register_lowering(prim, mlir.lower_fun(_tpu_rule), platform="tpu")``, or a
    project's own registry that names it (``prim.def_pallas_kernel("tpu", _rule)``,
    ``register(_rule, backend="gpu")``), also through ``functools.partial``. None: not such a use."""
    node: ast.AST = site
    for parent in reversed(above):
        if not (isinstance(parent, ast.Call) and any(a is node for a in parent.args)):
            return None
        callee = g.callee(parent)
        if callee in (uses.LOWER_FUN, passing.PARTIAL) and parent.args[0] is node:
            node = parent
            continue
        if callee == uses.REGISTER_LOWERING or callee is None or not callee.startswith("jax."):
            return _named_platform(parent, node)
        return None
    return None


def _named_platform(call: ast.Call, handed: ast.AST) -> frozenset[str] | None:
    """The platforms a registering call names beside the function it is handed: ``platform=``
    or ``backend=``, or a positional string naming a platform (None: it names none)."""
    named = [k.value for k in call.keywords if k.arg in ("platform", "backend")]
    named += [a for a in call.args if a is not handed]
    out = frozenset().union(
        *(platforms_of(n.value) for n in named if isinstance(n, ast.Constant) and isinstance(n.value, str))
    )
    return out or None


def _dispatch_reach(module: ModuleUses, site: ast.AST, above: Sequence[ast.AST]) -> frozenset[str] | None:
    """The platforms of a dispatch table's key: ``_SOLVERS = {"gpu": _solve_gpu, "cpu": ...}``
    at module level, which the module reads only by its backend (``_SOLVERS[jax.default_backend()]``,
    ``_SOLVERS.get(backend)``, also inside a function it is handed to). None: not such an entry."""
    table = above[-1] if above else None
    holder = above[-2] if len(above) > 1 else None
    if not (isinstance(table, ast.Dict) and isinstance(holder, ast.Assign) and len(above) == 3):
        return None
    key = next((k for k, v in zip(table.keys, table.values, strict=True) if v is site), None)
    target = holder.targets[0] if len(holder.targets) == 1 else None
    if not (isinstance(key, ast.Constant) and isinstance(key.value, str) and isinstance(target, ast.Name)):
        return None
    platforms = platforms_of(key.value)
    if not platforms or not _read_by_backend(module, target.id):
        return None
    return platforms


def _by_backend(g: Guards, name: str, node: ast.AST, chain: Sequence[ast.AST]) -> bool:
    """``name[backend]`` or ``name.get(backend, ...)`` at ``node`` (a load of ``name``)."""
    parent = chain[-1] if chain else None
    if isinstance(parent, ast.Subscript) and parent.value is node:
        return g.looks_up_by_backend(parent, name, chain)
    grand = chain[-2] if len(chain) > 1 else None
    return isinstance(grand, ast.Call) and grand.func is parent and g.looks_up_by_backend(grand, name, chain)


def _read_by_backend(module: ModuleUses, name: str) -> bool:
    """Whether every use of the module-level table ``name`` indexes it by the backend, directly
    or as the argument of a module function that does so with its parameter."""
    g = module.guards
    uses_ = module.uses_of(name)
    if not uses_:
        return False
    for node, chain in uses_:
        if _by_backend(g, name, node, chain):
            continue
        call = chain[-1] if chain else None
        passed = isinstance(call, ast.Call) and any(a is node for a in call.args)
        if not (passed and isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
            return False
        found = g.values.function(call.func, chain)
        if found is None:
            return False
        func, inside = found
        params = positional_params(func)
        position = next(i for i, a in enumerate(call.args) if a is node)
        if position >= len(params):
            return False
        param = params[position]
        loads = passing.local_loads(inside, param)
        if not loads or not all(_by_backend(g, param, n, c) for n, c in loads):
            return False
    return True


def _table_named(stmt: ast.AST) -> str | None:
    """The table a module-level statement fills: ``T = [...]`` or ``T.append(...)``."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        return stmt.targets[0].id
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        func = stmt.value.func
        grows = ("append", "extend", "insert", "update")
        if isinstance(func, ast.Attribute) and func.attr in grows and isinstance(func.value, ast.Name):
            return func.value.id
    return None


def _table_entry(module: ModuleUses, chain: Sequence[ast.AST], node: ast.AST, grown: bool) -> Entry | None:
    """The entry's known fields if ``node`` sits in a table entry (None: not in a table).

    The path from the assignment down must go through containers, comprehension
    elements and arguments of records built from a class of this module, and may end
    in a lambda's body. The fields are the record's string constants, named by its
    class's ``__init__`` parameters.
    """
    fields: dict[str, str] = {}
    inside = False
    for i in range(2, len(chain)):
        parent, child = chain[i], chain[i + 1] if i + 1 < len(chain) else node
        if grown and i == 2:  # the arguments of ``T.append(...)`` are entries
            inside = isinstance(parent, ast.Call) and child is not parent.func
            continue
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.Add) and not inside:
            continue  # ``EIG + [...]``: the tables joined hold the entries
        if (
            isinstance(parent, (*_CONTAINERS, ast.Starred, ast.keyword))
            or (isinstance(parent, _COMPREHENSIONS) and child is parent.elt)
            or (isinstance(parent, ast.DictComp) and child is parent.value)
        ):
            inside = True
        elif isinstance(parent, ast.Call) and child is not parent.func and inside:
            record = _record_fields(module, parent)
            if record is None:
                return None
            fields = record
        elif isinstance(parent, ast.Lambda) and child is parent.body and inside:
            break
        else:
            return None
    return Entry(fields) if inside else None


def _record_fields(module: ModuleUses, call: ast.Call) -> dict[str, str] | None:
    """String fields of ``Cls(...)`` for a class ``Cls`` defined in this module (None: not one)."""
    if not isinstance(call.func, ast.Name):
        return None
    name = call.func.id
    module.uses_of(name)  # parses the statements naming it, the class among them
    cls = next(
        (s for s in module.guards.tree.body if isinstance(s, ast.ClassDef) and s.name == name),
        None,
    )
    if cls is None:
        return None
    init = next(
        (
            s
            for s in cls.body
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)) and s.name == "__init__"
        ),
        None,
    )
    params = positional_params(init)[1:] if init is not None else []
    fields: dict[str, str] = {}
    for param, arg in zip(params, call.args, strict=False):
        if isinstance(arg, ast.Starred):
            break
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            fields[param] = arg.value
    for kw in call.keywords:
        if kw.arg is not None and isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, str):
            fields[kw.arg] = kw.value.value
    return fields


def _table_reach(module: ModuleUses, name: str, seen: frozenset[str], entry: Entry) -> frozenset[str] | None:
    """Platforms that reach a use of the table ``name`` that can call its entries (None: no such use).

    ``seen``: the tables already followed to this one (``ALL = LINALG + OTHERS`` leads from
    LINALG to ALL); a table built from itself (``CASES = CASES + [...]``) is followed once.
    """
    seen = seen | {name}
    guards = module.guards
    out: set[str] = set()
    found = False
    for site, above in module.uses_of(name):
        parent = above[-1]
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id in _READERS:
            continue
        if isinstance(parent, ast.Attribute) and parent.attr in _GROWERS:
            continue
        if isinstance(parent, ast.Compare):
            # `fn in TABLE`: a membership test
            continue
        statement = above[1] if len(above) > 1 else None
        if (
            isinstance(statement, ast.Assign)
            and len(seen) <= _TABLE_DEPTH
            and all(isinstance(n, (ast.BinOp, *_CONTAINERS)) for n in above[2:])
        ):
            # `ALL = CPU_ONLY + OTHERS` at module level: where ALL is used
            for target in statement.targets:
                more = (
                    _table_reach(module, target.id, seen, entry)
                    if isinstance(target, ast.Name) and target.id not in seen
                    else None
                )
                if more is not None:
                    found = True
                    out |= more
            continue
        decorated = next(
            (
                (i, n)
                for i, n in enumerate(above)
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
                and any(d is (above[i + 1] if i + 1 < len(above) else site) for d in n.decorator_list)
            ),
            None,
        )
        if decorated is not None and decorated[1].body:
            i, func = decorated
            # a parameterized test: its entry parameter is the one besides ``self``
            params = [a.arg for a in func.args.args if a.arg not in ("self", "cls")]
            if len(params) == 1:
                # the entry runs at the first statement that calls it or hands it on; the
                # skips before that gate it (with its fields known, those that test them)
                here = Entry(entry.fields, params[0])
                allowed = guards.allowed([*above[: i + 1]], _first_run(func, params[0]), here)
            else:
                allowed = guards.allowed([*above[: i + 1]], func.body[0])
        else:
            allowed = guards.allowed(above, site)
        found = True
        out |= ALL_PLATFORMS if allowed is None else allowed
    return frozenset(out) if found else None


def _first_run(func: ast.FunctionDef | ast.AsyncFunctionDef, param: str) -> ast.stmt:
    """The first statement of ``func`` that calls something on or with ``param`` (the entry runs there)."""

    def names_param(node: ast.AST) -> bool:
        return any(isinstance(n, ast.Name) and n.id == param for n in ast.walk(node))

    for stmt in func.body:
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call) and (
                names_param(node.func)
                or any(names_param(a) for a in [*node.args, *(k.value for k in node.keywords)])
            ):
                return stmt
    return func.body[0]
