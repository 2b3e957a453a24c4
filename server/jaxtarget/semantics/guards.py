"""Which backends can reach a piece of code, given the guards around it.

Rule-agnostic: a guard restricts the set of platforms on which the guarded
code runs. Read here: ``if`` tests, conditional expressions, ``and``/``or``
chains, early exits (``return``, ``raise``, ``pytest.skip``, ``self.skipTest``)
including ``if/elif/else`` chains, ``assert``, skip decorators (unittest,
pytest, jax's ``jtu.run_on_devices``/``skip_on_devices``), skips in ``setUp``
and ``setUpClass``, a module-level ``pytestmark``, and test-base methods that run a
function they are handed only on some platforms (``CompatTestBase.run_one_test``).

A backend test is recognised by what it computes, through the resolver: JAX's
backend queries (``jax.default_backend()``, the ``.platform`` of a device from
``jax.devices()``, jax's test-util predicates), also when stored in a variable
or module constant or returned by a small predicate function of any name
(values.py). ``sys.platform`` and other ``.platform`` attributes are not
backend tests. Sets are exact: ``ALL`` means "no restriction known".
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Mapping, Sequence

from ..platforms import ALL_PLATFORMS, platforms_of
from .entry import Entry
from .values import Values

ALL = ALL_PLATFORMS
NONE: frozenset[str] = frozenset()

#: JAX's backend queries and test vocabulary; the semantic layer resolves loads of these names.
DEFAULT_BACKEND = "jax.default_backend"
_JTU = "jax._src.test_util"
#: calls whose value is the name of the backend
BACKEND_CALLS = frozenset({DEFAULT_BACKEND, f"{_JTU}.device_under_test"})
#: calls whose result's ``.platform`` is the backend's name
BACKEND_OBJECTS = frozenset(
    {"jax.extend.backend.get_backend", "jax.lib.xla_bridge.get_backend", "jax._src.xla_bridge.get_backend"}
)
#: calls returning a list of devices (their ``.platform`` is the backend's name)
DEVICE_LISTS = frozenset({"jax.devices", "jax.local_devices"})
#: predicate -> (platforms where it can be true, whether it is false everywhere else)
PREDICATES: dict[str, tuple[frozenset[str], bool]] = {
    f"{_JTU}.is_device_cuda": (frozenset({"cuda"}), True),
    f"{_JTU}.is_device_rocm": (frozenset({"rocm"}), True),
    f"{_JTU}.is_device_tpu": (frozenset({"tpu"}), True),
    f"{_JTU}.is_device_tpu_at_least": (frozenset({"tpu"}), False),
    f"{_JTU}.is_cuda_compute_capability_at_least": (frozenset({"cuda"}), False),
    f"{_JTU}.is_cuda_compute_capability_equal": (frozenset({"cuda"}), False),
    f"{_JTU}.is_cuda_version_at_least": (frozenset({"cuda"}), False),
    # capability probes that can only be true on a GPU
    "jaxlib.gpu_solver.has_magma": (frozenset({"cuda", "rocm"}), False),
    "jax._src.lib.gpu_solver.has_magma": (frozenset({"cuda", "rocm"}), False),
}
#: calls that raise unless JAX runs on one of these platforms (capability checks)
RAISERS: dict[str, frozenset[str]] = {
    "jax._src.cudnn.fused_attention_stablehlo.check_cudnn_version": frozenset({"cuda"}),
}
#: methods of test base classes that run a function argument only on some platforms (None: only
#: on the platform its test data names, which the calling code does not spell)
RUNNERS: dict[str, frozenset[str] | None] = {
    # skipTest unless the backend is the `platform` recorded in the serialized test data
    "jax._src.internal_test_util.export_back_compat_test_util.CompatTestBase.run_one_test": None,
}
#: the classes those methods belong to: a test class names one as its base
RUNNER_CLASSES = frozenset(q.rsplit(".", 1)[0] for q in RUNNERS)
DEVICE_MATCHES = f"{_JTU}.test_device_matches"
RUN_ON_DEVICES = f"{_JTU}.run_on_devices"
SKIP_ON_DEVICES = f"{_JTU}.skip_on_devices"
GUARD_NAMES: frozenset[str] = frozenset(
    {
        *BACKEND_CALLS,
        *BACKEND_OBJECTS,
        *DEVICE_LISTS,
        *PREDICATES,
        *RAISERS,
        *RUNNER_CLASSES,
        DEVICE_MATCHES,
        RUN_ON_DEVICES,
        SKIP_ON_DEVICES,
    }
)

_EXIT_CALLS = frozenset({"skip", "exit", "fail", "skipTest"})
_SKIP_IF = frozenset({"skipif", "skipIf"})
_SKIP_ALWAYS = frozenset({"skip"})
_SETUP_METHODS = ("setUp", "setUpClass")

#: Words whose lines must be parsed so that guards can be read.
SETUP_WORDS: tuple[str, ...] = (
    "import",
    "pytestmark",
    "setUpModule",
    *sorted({q.rsplit(".", 1)[-1] for q in (*GUARD_NAMES, *RUNNERS)} | {"platform"}),
)

Allowed = frozenset[str] | None
Sets = tuple[frozenset[str], frozenset[str]]
#: id(node) -> the public name a load resolved to
Resolved = Mapping[int, str]


def terminal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def restrict(allowed: Allowed, more: Allowed) -> Allowed:
    if more is None or more == ALL:
        return allowed
    return more if allowed is None else allowed & more


def as_allowed(platforms: frozenset[str]) -> Allowed:
    return None if platforms >= ALL else platforms


def _string_set(node: ast.AST | None) -> frozenset[str] | None:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return platforms_of(node.value)
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        out: set[str] = set()
        for elt in node.elts:
            found = _string_set(elt)
            if found is None or isinstance(elt, (ast.Tuple, ast.List, ast.Set)):
                return None
            out |= found
        return frozenset(out)
    return None


class Guards:
    """Reads the guards of one module (its parsed statements and resolved names)."""

    def __init__(
        self, tree: ast.Module, resolved: Resolved, predicates: Mapping[str, frozenset[str]] | None = None
    ) -> None:
        self.tree = tree
        self.resolved = resolved
        #: the user's predicates (``guard-functions``): true only on these platforms
        self.predicates = predicates or {}
        self.values = Values(tree)
        #: conditions known true/false on the path to the code being judged (ast.dump -> truth)
        self._assumed: dict[str, bool] = {}
        self._entry: Entry | None = None
        self._setup: frozenset[str] | None = None
        #: id(top-level statement) -> platforms that reach it past the module's earlier statements
        self._module_prefix: dict[int, frozenset[str]] | None = None

    # ------------------------------------------------------------ what expressions mean

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
                            return self.callee(gen.iter) in DEVICE_LISTS
            value = self.values.value_of(node, chain)
            return value is not None and self._is_device(value[0], value[1], depth + 1)
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
        if self._assumed and isinstance(
            test, (ast.Name, ast.Attribute, ast.Compare, ast.Call, ast.Subscript)
        ):
            known = self._assumed.get(ast.dump(test))
            if known is not None:
                return (ALL, NONE) if known else (NONE, ALL)
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
        return ALL, ALL

    def _compare(self, left: ast.expr, op: ast.cmpop, right: ast.expr, chain: Sequence[ast.AST]) -> Sets:
        if self._entry is not None:
            known = self._entry.decides(left, op, right)
            if known is not None:
                return (ALL, NONE) if known else (NONE, ALL)
        if self.is_backend(right, chain) and isinstance(op, (ast.Eq, ast.NotEq)):
            left, right = right, left
        if not self.is_backend(left, chain):
            return ALL, ALL
        values = _string_set(right)
        if values is None and isinstance(right, ast.Name):
            found = self.values.value_of(right, chain)
            values = _string_set(found[0]) if found is not None else None
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
            values = _string_set(test.args[0])
            return (values, ALL - values) if values is not None else (ALL, ALL)
        if isinstance(test.func, ast.Name) and test.func.id in ("any", "all") and len(test.args) == 1:
            arg = test.args[0]
            if isinstance(arg, (ast.GeneratorExp, ast.ListComp)):
                # every device of a process has the same platform
                return self.sets(arg.elt, [*chain, arg], depth)
        if isinstance(test.func, ast.Name) and not test.args and depth < 4:
            body = self.values.returned_by(test.func, chain)
            if body is not None:
                return self.sets(body[0], body[1], depth + 1)
        return ALL, ALL

    def _method(self, call: ast.Call, chain: Sequence[ast.AST]) -> str | None:
        """The public name of ``self.m(...)``: ``m`` inherited from a base class the resolver named."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        for k in range(len(chain) - 1, 0, -1):
            method, cls = chain[k], chain[k - 1]
            if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and isinstance(cls, ast.ClassDef):
                args = method.args.posonlyargs + method.args.args
                if not args or args[0].arg != func.value.id:
                    return None
                if any(getattr(s, "name", None) == func.attr for s in cls.body):
                    return None  # the class's own method
                for base in cls.bases:
                    name = self.resolved.get(id(base))
                    if name is not None:
                        return f"{name}.{func.attr}"
                return None
        return None

    def handed_to(self, call: ast.Call, arg: ast.AST, chain: Sequence[ast.AST]) -> frozenset[str]:
        """Platforms on which ``call`` runs the function it is handed as ``arg``."""
        if not any(a is arg for a in call.args) and not any(k.value is arg for k in call.keywords):
            return ALL
        name = self._method(call, chain)
        if name not in RUNNERS:
            return ALL
        # a platform the code does not spell: no target is known to reach it
        return RUNNERS[name] or NONE

    def _handed_in(self, stmt: ast.stmt, func: str, chain: Sequence[ast.AST]) -> frozenset[str]:
        """Platforms on which the calls in ``stmt`` that are handed the function ``func`` run it."""
        out = ALL
        for node in ast.walk(stmt):
            if isinstance(node, ast.Call):
                for arg in (*node.args, *(k.value for k in node.keywords)):
                    if isinstance(arg, ast.Name) and arg.id == func:
                        out &= self.handed_to(node, arg, chain)
        return out

    # ------------------------------------------------------------ statements

    def _exits(self, stmt: ast.stmt) -> bool:
        if isinstance(stmt, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
            return True
        return (
            isinstance(stmt, ast.Expr)
            and isinstance(stmt.value, ast.Call)
            and terminal(stmt.value.func) in _EXIT_CALLS
        )

    def passes(self, stmt: ast.stmt, chain: Sequence[ast.AST]) -> frozenset[str]:
        """Platforms on which execution can continue after ``stmt``."""
        if self._exits(stmt):
            return NONE
        if isinstance(stmt, ast.If):
            true, false = self.sets(stmt.test, chain)
            here = [*chain, stmt]
            return (true & self.falls_through(stmt.body, here)) | (
                false & self.falls_through(stmt.orelse, here)
            )
        if isinstance(stmt, ast.Assert):
            return self.sets(stmt.test, chain)[0]
        if isinstance(stmt, ast.Expr) and self.callee(stmt.value) in RAISERS:
            return RAISERS[self.callee(stmt.value) or ""]
        if type(stmt).__name__ in ("Try", "TryStar"):
            # past the try: where the body completed, or a handler did
            here = [*chain, stmt]
            body = self.falls_through(getattr(stmt, "body", []), here)
            body &= self.falls_through(getattr(stmt, "orelse", []), here)
            for handler in getattr(stmt, "handlers", []):
                body |= self.falls_through(handler.body, here)
            return body & self.falls_through(getattr(stmt, "finalbody", []), here)
        return ALL

    def falls_through(self, block: Sequence[ast.stmt], chain: Sequence[ast.AST]) -> frozenset[str]:
        """Platforms on which execution can run past the end of ``block``."""
        out = ALL
        for stmt in block:
            out &= self.passes(stmt, chain)
            if not out:
                break
        return out

    def _before(self, block: Sequence[ast.stmt], upto: ast.stmt, chain: Sequence[ast.AST]) -> frozenset[str]:
        """Platforms that still reach ``upto`` after the statements before it in ``block``."""
        if block is self.tree.body and not self._assumed:
            if self._module_prefix is None:
                self._module_prefix = {}
                reach = ALL
                for stmt in block:
                    self._module_prefix[id(stmt)] = reach
                    if reach:
                        reach &= self.passes(stmt, [self.tree])
            return self._module_prefix.get(id(upto), ALL)
        out = ALL
        for stmt in block:
            if stmt is upto:
                break
            out &= self.passes(stmt, chain)
        return out

    def decorators(self, decorators: Sequence[ast.expr], chain: Sequence[ast.AST]) -> frozenset[str]:
        out = ALL
        for dec in decorators:
            name = self.callee(dec)
            if isinstance(dec, ast.Call) and name in (RUN_ON_DEVICES, SKIP_ON_DEVICES):
                named = _string_set(ast.Tuple(elts=list(dec.args)))
                if named is not None:
                    out &= named if name == RUN_ON_DEVICES else ALL - named
                continue
            if terminal(dec.func if isinstance(dec, ast.Call) else dec) in _SKIP_ALWAYS and (
                not isinstance(dec, ast.Call) or not dec.args or isinstance(dec.args[0], ast.Constant)
            ):
                # an unconditional skip (the argument, if any, is the reason)
                out = NONE
                continue
            if not isinstance(dec, ast.Call) or not dec.args:
                continue
            word = terminal(dec.func)
            true, false = self.sets(dec.args[0], chain)
            if word in _SKIP_IF:
                out &= false
            elif word == "skipUnless":
                out &= true
        return out

    def _class_setup(self, cls: ast.ClassDef, chain: Sequence[ast.AST], depth: int = 0) -> frozenset[str]:
        """Platforms that get past the skips in a test class's ``setUp``/``setUpClass`` (and its bases')."""
        out = ALL
        here = [*chain, cls]
        for stmt in cls.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name in _SETUP_METHODS:
                out &= self.decorators(stmt.decorator_list, here) & self.falls_through(
                    stmt.body, [*here, stmt]
                )
        if depth < 3:
            for base in cls.bases:
                found = self.values.class_named(base) if isinstance(base, ast.Name) else None
                if found is not None and found is not cls:
                    out &= self._class_setup(found, [self.tree], depth + 1) & self.decorators(
                        found.decorator_list, [self.tree]
                    )
        return out

    def _module_setup(self) -> frozenset[str]:
        if self._setup is None:
            self._setup = self._read_module_setup()
        return self._setup

    def _read_module_setup(self) -> frozenset[str]:
        out = ALL
        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)) and stmt.name == "setUpModule":
                out &= self.falls_through(stmt.body, [self.tree, stmt])
            elif isinstance(stmt, ast.Assign) and any(
                isinstance(t, ast.Name) and t.id == "pytestmark" for t in stmt.targets
            ):
                marks = stmt.value.elts if isinstance(stmt.value, (ast.List, ast.Tuple)) else [stmt.value]
                out &= self.decorators(marks, [self.tree])
        return out

    def _assume(self, test: ast.expr, truth: bool, chain: Sequence[ast.AST]) -> None:
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            self._assume(test.operand, not truth, chain)
        elif isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) == truth:
            for value in test.values:
                self._assume(value, truth, chain)
        elif isinstance(test, (ast.Name, ast.Attribute, ast.Compare, ast.Call, ast.Subscript)) and (
            # only conditions that are not backend tests: those are read as guards
            self.sets(test, chain) == (ALL, ALL)
        ):
            self._assumed[ast.dump(test)] = truth

    def _path_conditions(self, chain: Sequence[ast.AST]) -> None:
        """Record what the branches on the way to the code assume (``if pivoting:``, ``else:``)."""
        self._assumed = {}
        for i, (parent, child) in enumerate(itertools.pairwise(chain)):
            above = chain[: i + 1]
            if isinstance(parent, (ast.If, ast.While)) and any(c is child for c in parent.body):
                self._assume(parent.test, True, above)
            elif isinstance(parent, ast.If) and any(c is child for c in parent.orelse):
                self._assume(parent.test, False, above)
            elif isinstance(parent, ast.IfExp) and child is not parent.test:
                self._assume(parent.test, child is parent.body, above)

    def allowed(self, ancestors: Sequence[ast.AST], node: ast.AST, entry: Entry | None = None) -> Allowed:
        """Which platforms can reach ``node``, given the guards around it (None: any).

        ``entry``: the table entry a parameterized test runs with, whose fields decide
        the tests on that parameter (``harness.group_name == "eig"``).
        """
        self._entry = entry if entry is not None and entry.param else None
        self._path_conditions([*ancestors, node])
        try:
            return self._allowed(ancestors, node)
        finally:
            self._assumed = {}
            self._entry = None

    def _allowed(self, ancestors: Sequence[ast.AST], node: ast.AST) -> Allowed:
        out = self._module_setup()
        chain = [*ancestors, node]
        for i, (parent, child) in enumerate(itertools.pairwise(chain)):
            above = chain[: i + 1]
            if isinstance(parent, ast.If):
                true, false = self.sets(parent.test, above)
                if any(c is child for c in parent.body):
                    out &= true
                elif any(c is child for c in parent.orelse):
                    out &= false
            elif isinstance(parent, ast.IfExp) and child is not parent.test:
                true, false = self.sets(parent.test, above)
                out &= true if child is parent.body else false
            elif isinstance(parent, ast.BoolOp):
                for value in parent.values:
                    if value is child:
                        break
                    true, false = self.sets(value, above)
                    out &= true if isinstance(parent.op, ast.And) else false
            elif isinstance(parent, ast.While) and any(c is child for c in parent.body):
                out &= self.sets(parent.test, above)[0]
            elif isinstance(parent, ast.Call) and isinstance(child, ast.Lambda):
                out &= self.handed_to(parent, child, above)
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
                c is child for c in parent.body
            ):
                out &= self.decorators(parent.decorator_list, above)
                if (
                    isinstance(parent, ast.ClassDef)
                    and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and child.name not in _SETUP_METHODS
                ):
                    out &= self._class_setup(parent, above)
            block = _block_of(parent, child)
            if block is not None and isinstance(child, ast.stmt):
                nested = isinstance(child, _NESTED) and any(isinstance(a, _NESTED) for a in above)
                upto = _first_use(block, child) if nested else child
                where = [*above, parent] if above[-1] is not parent else above
                out &= self._before(block, upto, where)
                if upto is not child and isinstance(child, _NESTED):
                    out &= self._handed_in(upto, child.name, where)
            if not out:
                break
        return as_allowed(out)

    def expects_error(self, ancestors: Sequence[ast.AST]) -> bool:
        """Inside ``with self.assertRaises(...)`` / ``pytest.raises(...)``: the code is meant to fail."""
        for node in ancestors:
            if isinstance(node, (ast.With, ast.AsyncWith)):
                for item in node.items:
                    ctx = item.context_expr
                    if isinstance(ctx, ast.Call) and terminal(ctx.func) in (
                        "assertRaises",
                        "assertRaisesRegex",
                        "raises",
                    ):
                        return True
        return False


_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef)


def _first_use(block: Sequence[ast.stmt], func: ast.stmt) -> ast.stmt:
    """The first statement after a nested ``def`` in its block that names it (the def itself if none).

    A nested function's body runs where it is called or handed on, so the skips
    between its definition and that statement guard it too.
    """
    name = getattr(func, "name", "")
    after = False
    for stmt in block:
        if stmt is func:
            after = True
        elif after and any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(stmt)):
            return stmt
    return func


def _block_of(parent: ast.AST, child: ast.AST) -> list[ast.stmt] | None:
    for name in ("body", "orelse", "finalbody"):
        block = getattr(parent, name, None)
        if isinstance(block, list) and any(c is child for c in block):
            return block
    return None
