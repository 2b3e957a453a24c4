"""What a test expression says about the backend: where it can be true, where false.

Rule-agnostic and read through the resolver: JAX's backend queries
(``jax.default_backend()``, the ``.platform`` of a device from ``jax.devices()``,
jax's test-util predicates), also when stored in a variable or module constant,
returned by a small predicate function of any name (values.py), or computed by a
capability probe of an API (a function that compiles the API inside a ``try`` and
returns whether it worked). ``sys.platform`` and other ``.platform`` attributes are
not backend tests. Sets are exact: ``ALL`` means "no restriction known".
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from functools import cached_property
from pathlib import PurePath

from ..platforms import ALL_PLATFORMS, platforms_of
from .entry import Entry
from .predicates import Comparison, project_predicate
from .statements import DEFS as DEFS
from .statements import (
    NUMBER_OPS,
    clears_flag,
    constant_compare,
    last_return_after_falsy_exits,
    literal_number,
    returns_constant,
    value_before,
)
from .values import Values, body_statements
from .vocabulary import (
    BACKEND_CALLS,
    BACKEND_OBJECTS,
    DEVICE_LISTS,
    DEVICE_MATCHES,
    LOWERING_CATCHERS,
    PREDICATES,
    catches,
)

ALL = ALL_PLATFORMS
NONE: frozenset[str] = frozenset()

Allowed = frozenset[str] | None
Sets = tuple[frozenset[str], frozenset[str]]
#: id(node) -> the public name a load resolved to
Resolved = Mapping[int, str]


def as_allowed(platforms: frozenset[str]) -> Allowed:
    return None if platforms >= ALL else platforms


def string_set(node: ast.AST | None) -> frozenset[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return platforms_of(node.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        out: set[str] = set()
        for elt in node.elts:
            found = string_set(elt)
            if found is None or isinstance(elt, (ast.Tuple, ast.List, ast.Set)):
                return None
            out |= found
        return frozenset(out)
    return None


class Conditions:
    """Reads the backend tests of one module (its parsed statements and resolved names)."""

    def __init__(
        self,
        tree: ast.Module,
        resolved: Resolved,
        predicates: Mapping[str, frozenset[str]] | None = None,
        capabilities: Mapping[str, frozenset[str]] | None = None,
        path: str | None = None,
    ) -> None:
        self.tree = tree
        #: the module's file, whose project's other modules may define its predicates
        self.path = path
        self.resolved = resolved
        #: the user's predicates (``guard-functions``): true only on these platforms
        self.predicates = predicates or {}
        #: where each API the rules know lowers (public name -> platforms), for capability probes
        self.capabilities = capabilities or {}
        self.values = Values(tree)
        #: conditions known true/false on the path to the code being judged (ast.dump -> truth)
        self._assumed: dict[str, bool] = {}
        #: boolean class attributes of the test class being judged, read through ``self``
        #: (``INTERPRET = False``, inherited and not set otherwise by a subclass)
        self.class_flags: dict[str, bool] = {}
        self._entry: Entry | None = None

    def callee(self, node: ast.AST) -> str | None:
        return self.resolved.get(id(node.func)) if isinstance(node, ast.Call) else None

    def _is_device(self, node: ast.AST, chain: Sequence[ast.AST], depth: int) -> bool:
        if isinstance(node, ast.Subscript):
            return self.callee(node.value) in DEVICE_LISTS
        if isinstance(node, ast.Name) and depth < 4:
            for comp in reversed(chain):
                if isinstance(comp, (ast.GeneratorExp, ast.ListComp, ast.SetComp, ast.DictComp)):
                    for gen in comp.generators:
                        if isinstance(gen.target, ast.Name) and gen.target.id == node.id:
                            return self._is_device_list(gen.iter, chain, depth)
            value = self.values.value_of(node, chain)
            return value is not None and self._is_device(value[0], value[1], depth + 1)
        return False

    def _is_device_list(self, node: ast.AST, chain: Sequence[ast.AST], depth: int) -> bool:
        """``jax.devices()``, or an array's own ``x.devices()`` (where its computations run)."""
        if isinstance(node, ast.Call):
            if self.callee(node) in DEVICE_LISTS:
                return True
            func = node.func
            # a method of a value, not a module's function resolved to something else
            return (
                isinstance(func, ast.Attribute)
                and func.attr == "devices"
                and not node.args
                and not node.keywords
                and id(func) not in self.resolved
            )
        if isinstance(node, ast.Name) and depth < 4:
            value = self.values.value_of(node, chain)
            return value is not None and self._is_device_list(value[0], value[1], depth + 1)
        return False

    def is_backend(self, node: ast.AST, chain: Sequence[ast.AST], depth: int = 0) -> bool:
        """Whether ``node`` evaluates to the name of the backend JAX runs on."""
        if isinstance(node, ast.Call):
            return self.callee(node) in BACKEND_CALLS
        if isinstance(node, ast.Attribute) and node.attr == "platform":
            return self.callee(node.value) in BACKEND_OBJECTS or self._is_device(node.value, chain, depth)
        if isinstance(node, ast.Name) and depth < 4:
            value = self.values.value_of(node, chain)
            return value is not None and self.is_backend(value[0], value[1], depth + 1)
        return False

    def sets(self, test: ast.AST, chain: Sequence[ast.AST], depth: int = 0) -> Sets:
        """Platforms on which ``test`` can be true, and those on which it can be false."""
        if (
            self.class_flags
            and isinstance(test, ast.Attribute)
            and isinstance(test.value, ast.Name)
            and test.value.id == "self"
            and test.attr in self.class_flags
        ):
            return (ALL, NONE) if self.class_flags[test.attr] else (NONE, ALL)
        if self._assumed and isinstance(
            test, (ast.Name, ast.Attribute, ast.Compare, ast.Call, ast.Subscript)
        ):
            known = self._assumed.get(ast.dump(test))
            if known is not None:
                return (ALL, NONE) if known else (NONE, ALL)
        if isinstance(test, ast.Constant):
            # `if False:`, or a name one assignment binds to a constant (`DEBUG = False`)
            return (ALL, NONE) if test.value else (NONE, ALL)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            true, false = self.sets(test.operand, chain, depth)
            return false, true
        if isinstance(test, ast.BoolOp):
            parts = [self.sets(v, chain, depth) for v in test.values]
            trues = [t for t, _ in parts]
            falses = [f for _, f in parts]
            if isinstance(test.op, ast.And):
                return frozenset.intersection(*trues), frozenset.union(*falses)
            return frozenset.union(*trues), frozenset.intersection(*falses)
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            return self._compare(test.left, test.ops[0], test.comparators[0], chain)
        if isinstance(test, ast.Call):
            return self._call_sets(test, chain, depth)
        if isinstance(test, ast.Name) and depth < 4:
            value = self.values.value_of(test, chain)
            if value is not None:
                return self.sets(value[0], value[1], depth + 1)
            forced = self._forced_false(test, chain, depth)
            if forced is not None:
                return forced, ALL
        return ALL, ALL

    def _forced_false(self, flag: ast.Name, chain: Sequence[ast.AST], depth: int) -> frozenset[str] | None:
        """``if <backend test>: flag = False`` earlier in the function: where ``flag`` can still be true.

        ``use_cuda`` is a parameter, then ``if jax.devices()[0].platform != "gpu": use_cuda = False``:
        past that statement it can be true only where the test can be false. None when the
        function binds the name anywhere else before the test.
        """
        at = next((i for i in range(len(chain) - 1, -1, -1) if isinstance(chain[i], DEFS)), None)
        if at is None:
            return None
        func = chain[at]
        assert isinstance(func, DEFS)
        before = [stmt for stmt in func.body if stmt.lineno < flag.lineno]
        clears = [stmt for stmt in before if clears_flag(stmt, flag.id)]
        if not clears:
            return None
        found: frozenset[str] | None = None
        for stmt in before:
            if any(stmt is c for c in clears):
                assert isinstance(stmt, ast.If)
                true, false = self.sets(stmt.test, [*chain[: at + 1]], depth + 1)
                found = false if (true, false) != (ALL, ALL) else None
            elif any(
                isinstance(n, ast.Name) and n.id == flag.id and isinstance(n.ctx, (ast.Store, ast.Del))
                for n in ast.walk(stmt)
            ):
                return None
        return found

    def device_platform(self, expr: ast.AST | None) -> frozenset[str] | None:
        """The platform of a device named by platform, such as ``jax.devices("cpu")[0]`` (None: not one)."""
        if isinstance(expr, ast.Subscript) and isinstance(expr.value, ast.Call):
            call = expr.value
            if self.callee(call) in DEVICE_LISTS:
                named = [k.value for k in call.keywords if k.arg == "backend"]
                arg = call.args[0] if call.args else (named[0] if named else None)
                if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                    return platforms_of(arg.value) or None
        return None

    def _is_default_device(self, expr: ast.AST) -> bool:
        """``jax.devices()[0]``: a device of the backend JAX runs on."""
        return (
            isinstance(expr, ast.Subscript)
            and isinstance(expr.value, ast.Call)
            and self.callee(expr.value) in DEVICE_LISTS
            and not expr.value.args
            and not expr.value.keywords
        )

    def looks_up_by_backend(self, expr: ast.AST, name: str, chain: Sequence[ast.AST]) -> bool:
        """Whether ``expr`` is ``name[backend]`` or ``name.get(backend, ...)``."""
        if isinstance(expr, ast.Subscript):
            table = expr.value
            return isinstance(table, ast.Name) and table.id == name and self.is_backend(expr.slice, chain)
        return (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and expr.func.attr == "get"
            and isinstance(expr.func.value, ast.Name)
            and expr.func.value.id == name
            and bool(expr.args)
            and self.is_backend(expr.args[0], chain)
        )

    def device_kind_case(self, node: ast.AST, chain: Sequence[ast.AST], depth: int = 0) -> str | None:
        """Whether ``node`` is a device's kind (``jax.devices()[0].device_kind``, such as
        ``"TPU v5 lite"``), and in which case: ``"same"``, ``"lower"`` or ``"upper"`` (None:
        not a device's kind)."""
        if isinstance(node, ast.Attribute) and node.attr == "device_kind":
            return "same" if self._is_device(node.value, chain, depth) else None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in ("lower", "upper", "strip")
            and not node.args
        ):
            inner = self.device_kind_case(node.func.value, chain, depth)
            return inner if inner is None or node.func.attr == "strip" else node.func.attr
        if isinstance(node, ast.Name) and depth < 4:
            value = self.values.value_of(node, chain) or value_before(node, chain)
            return self.device_kind_case(value[0], value[1], depth + 1) if value is not None else None
        return None

    def _kind_compare(
        self, left: ast.expr, op: ast.cmpop, right: ast.expr, chain: Sequence[ast.AST]
    ) -> Sets | None:
        """``"TPU" in kind``, ``"tpu" not in kind.lower()``, ``kind == "TPU v4"``: a kind naming
        a TPU is a TPU's (only TPUs' kinds start with "TPU"; a GPU's names its model). Every
        TPU's kind holds "TPU", so ``"TPU" in kind`` (``"tpu"`` in a lower-cased one) is
        false on the other platforms too; a longer text (``"TPU v4"``) may miss some TPUs."""
        if isinstance(op, (ast.In, ast.NotIn)):
            text, kind = left, right
        elif isinstance(op, (ast.Eq, ast.NotEq)):
            text, kind = (right, left) if isinstance(right, ast.Constant) else (left, right)
        else:
            return None
        if not (isinstance(text, ast.Constant) and isinstance(text.value, str)):
            return None
        if "tpu" not in text.value.lower():
            return None
        case = self.device_kind_case(kind, chain)
        if case is None:
            return None
        tpu = frozenset({"tpu"})
        exact = isinstance(op, (ast.In, ast.NotIn)) and text.value == ("tpu" if case == "lower" else "TPU")
        true, false = (tpu, ALL - tpu if exact else ALL)
        return (true, false) if isinstance(op, (ast.In, ast.Eq)) else (false, true)

    def _number_compare(
        self, left: ast.expr, op: ast.cmpop, right: ast.expr, chain: Sequence[ast.AST]
    ) -> Sets | None:
        """``tpu_version() >= 5``, ``version > 0`` with ``version = tpu_version()``: where the
        comparison can be true and false, from what the function returns on each platform."""
        bound = literal_number(right)
        compare = NUMBER_OPS.get(type(op))
        if bound is None or compare is None:
            return None
        call: ast.AST = left
        if isinstance(left, ast.Name):
            value = self.values.value_of(left, chain)
            if value is None:
                return None
            call, chain = value
        if not (isinstance(call, ast.Call) and not call.args and not call.keywords):
            return None
        returns = self._returns_by_platform(call.func, chain) if isinstance(call.func, ast.Name) else None
        if returns is None:
            return self._imported(call.func, chain, (type(op), bound))
        true: frozenset[str] = NONE
        false: frozenset[str] = NONE
        for where, number in returns:
            if number is None or compare(number, bound):
                true |= where
            if number is None or not compare(number, bound):
                false |= where
        return true, false

    def _returns_by_platform(
        self, func: ast.Name, chain: Sequence[ast.AST]
    ) -> list[tuple[frozenset[str], float | None]] | None:
        """What a function returns (a number, or None when unknown) and the platforms that reach
        each return, for a body of early returns under backend tests then a last return
        (``if "TPU" not in kind: return -1``; ``return int(kind[-1])``). None: another shape."""
        found = self.values.function(func, chain)
        if found is None:
            return None
        func_def, inside = found
        reach = ALL
        out: list[tuple[frozenset[str], float | None]] = []
        for stmt in body_statements(func_def):
            if isinstance(stmt, ast.Return):
                out.append((reach, literal_number(stmt.value)))
                return out
            last = stmt.body[-1] if isinstance(stmt, ast.If) and not stmt.orelse else None
            if isinstance(stmt, ast.If) and isinstance(last, ast.Return):
                if any(isinstance(n, ast.Return) for s in stmt.body[:-1] for n in ast.walk(s)):
                    return None
                true, false = self.sets(stmt.test, inside, 1)
                out.append((reach & true, literal_number(last.value)))
                reach &= false
            elif any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) for n in ast.walk(stmt)):
                return None
        return None  # falls off the end: returns None, no number

    def _module_name_compare(self, left: ast.expr, op: ast.cmpop, right: ast.expr) -> Sets | None:
        """``__name__ == "main"``: false everywhere when the string names neither ``__main__`` nor this file.

        A module's ``__name__`` is ``"__main__"`` when run as a script, else its dotted
        name, which ends with the file's stem (the folder's name for ``__init__.py``).
        Unknown without the file's path, or where the module assigns ``__name__`` itself.
        """
        if not isinstance(op, (ast.Eq, ast.NotEq)) or self.path is None:
            return None
        if isinstance(right, ast.Name) and right.id == "__name__":
            left, right = right, left
        if not (isinstance(left, ast.Name) and left.id == "__name__"):
            return None
        if not (isinstance(right, ast.Constant) and isinstance(right.value, str)):
            return None
        file = PurePath(self.path)
        stem = file.parent.name if file.stem == "__init__" else file.stem
        text = right.value
        if text == "__main__" or text == stem or text.endswith("." + stem) or self._rebinds_name:
            return None
        return (NONE, ALL) if isinstance(op, ast.Eq) else (ALL, NONE)

    @cached_property
    def _rebinds_name(self) -> bool:
        """Whether the module assigns ``__name__`` anywhere."""
        return any(
            isinstance(n, ast.Name) and n.id == "__name__" and not isinstance(n.ctx, ast.Load)
            for n in ast.walk(self.tree)
        )

    def _compare(self, left: ast.expr, op: ast.cmpop, right: ast.expr, chain: Sequence[ast.AST]) -> Sets:
        if self._entry is not None:
            known = self._entry.decides(left, op, right)
            if known is not None:
                return (ALL, NONE) if known else (NONE, ALL)
        script = self._module_name_compare(left, op, right)
        if script is not None:
            return script
        constant = constant_compare(self.values, left, op, right, chain)
        if constant is not None:
            return (ALL, NONE) if constant else (NONE, ALL)
        kind = self._kind_compare(left, op, right, chain)
        if kind is not None:
            return kind
        number = self._number_compare(left, op, right, chain)
        if number is not None:
            return number
        if isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            # jax.devices()[0] == jax.devices("cpu")[0]
            for a, b in ((left, right), (right, left)):
                named = self.device_platform(b) if self._is_default_device(a) else None
                if named is not None:
                    return (named, ALL - named) if isinstance(op, (ast.Eq, ast.Is)) else (ALL - named, named)
        if self.is_backend(right, chain) and isinstance(op, (ast.Eq, ast.NotEq)):
            left, right = right, left
        if not self.is_backend(left, chain):
            return ALL, ALL
        values = string_set(right)
        if values is None and isinstance(right, ast.Name):
            found = self.values.value_of(right, chain)
            values = string_set(found[0]) if found is not None else None
        if values is None:
            return ALL, ALL
        if isinstance(op, (ast.Eq, ast.In)):
            return values, ALL - values
        if isinstance(op, (ast.NotEq, ast.NotIn)):
            return ALL - values, values
        return ALL, ALL

    def _call_sets(self, test: ast.Call, chain: Sequence[ast.AST], depth: int) -> Sets:
        name = self.callee(test)
        if name is not None and name in self.predicates:
            return self.predicates[name], ALL
        if name in PREDICATES:
            where, exact = PREDICATES[name]
            exact = exact and not test.args and not test.keywords
            return where, ALL - where if exact else ALL
        if name == DEVICE_MATCHES and test.args:
            values = string_set(test.args[0])
            return (values, ALL - values) if values is not None else (ALL, ALL)
        func = test.func
        if isinstance(func, ast.Attribute) and func.attr == "startswith" and len(test.args) == 1:
            starts = self._kind_compare(test.args[0], ast.In(), func.value, chain)  # kind.startswith("TPU")
            if starts is not None:
                return starts
        if isinstance(test.func, ast.Name) and test.func.id in ("any", "all") and len(test.args) == 1:
            arg = test.args[0]
            if isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
                # every device of a process has the same platform
                return self.sets(arg.elt, [*chain, arg], depth)
        if isinstance(test.func, ast.Name) and depth < 4:
            # a function of this module; what it is called with is read as unknown, so only
            # a backend test in its body decides (``return use_bias and _is_gpu_available()``)
            body = self.values.returned_by(test.func, chain)
            if body is not None:
                return self.sets(body[0], body[1], depth + 1)
            probed = self._probed(test.func, chain)
            if probed is not None:
                return probed, ALL
            found = self.values.function(test.func, chain)
            last = last_return_after_falsy_exits(found[0]) if found is not None else None
            if found is not None and last is not None:
                return self.sets(last, found[1], depth + 1)[0], ALL
            imported = self._imported(test.func, chain) if not test.args else None
            if imported is not None:
                return imported
        if isinstance(test.func, ast.Attribute) and not test.args and not test.keywords and name is None:
            imported = self._imported(test.func, chain)  # utils.has_gpu()
            if imported is not None:
                return imported
        return ALL, ALL

    def _imported(
        self, func: ast.expr, chain: Sequence[ast.AST], comparison: Comparison = None
    ) -> Sets | None:
        """A predicate imported from another module of the project (``from .utils import has_gpu``,
        or its module: ``from mylib import utils``, ``utils.has_gpu()``); with ``comparison``,
        a function whose result is compared with a number (``get_tpu_version() >= 5``).

        Only where one top-level import binds the name and nothing else in the module or
        the functions around the call does.
        """
        root = func
        while isinstance(root, ast.Attribute):
            root = root.value
        if self.path is None or not isinstance(root, ast.Name) or self.values.bound_locally(root.id, chain):
            return None
        return project_predicate(self.path, self.tree, func, comparison)

    def _probed(self, func: ast.expr, chain: Sequence[ast.AST]) -> frozenset[str] | None:
        """Where a capability probe of an API can return True (None: ``func`` is not one).

        A probe ends in ``try: <use the API>; return True`` whose every handler catches
        the lowering error (``NotImplementedError`` or wider) and returns False: it can be
        true only where the API lowers.
        """
        found = self.values.function(func, chain)
        if found is None:
            return None
        body = body_statements(found[0])
        last = body[-1] if body else None
        if not isinstance(last, ast.Try) or not last.handlers or not returns_constant(last.body[-1], True):
            return None
        if not all(
            catches(h.type, LOWERING_CATCHERS) and returns_constant(h.body[-1], False) for h in last.handlers
        ):
            return None
        if last.orelse or any(isinstance(n, ast.Return) for s in body[:-1] for n in ast.walk(s)):
            return None
        probed = {self.resolved.get(id(n)) for s in last.body for n in ast.walk(s)}
        where = [self.capabilities[q] for q in probed if q is not None and q in self.capabilities]
        return frozenset.intersection(*where) if where else None
