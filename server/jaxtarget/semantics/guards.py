"""Which backends can reach a piece of code, given the guards around it.

Rule-agnostic: a guard restricts the set of platforms on which the guarded
code runs. Read here: ``if`` tests, conditional expressions, ``and``/``or``
chains, early exits (``return``, ``raise``, ``pytest.skip``, ``self.skipTest``)
including ``if/elif/else`` chains, ``assert``, skip decorators (unittest,
pytest, jax's ``jtu.run_on_devices``/``skip_on_devices``), skips in ``setUp``
and ``setUpClass`` (read through harness.py, which knows the test classes), a module-level
``pytestmark``, and test-base methods that run a function they are handed only on some
platforms (``CompatTestBase.run_one_test``).

What a test expression says about the backend is read in conditions.py.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Sequence

from ..platforms import platforms_of
from .conditions import ALL, DEFS, NONE, Allowed, Conditions, Sets, as_allowed, string_set
from .entry import Entry
from .harness import TestClasses
from .predicates import ProjectModule
from .values import body_statements, positional_params
from .vocabulary import (
    EXIT_CALLS,
    RAISERS,
    RUN_ON_DEVICES,
    RUNNERS,
    SETUP_METHODS,
    SKIP_ALWAYS,
    SKIP_IF,
    SKIP_ON_DEVICES,
    terminal,
)


class Guards(Conditions):
    """Reads the guards of one module: which platforms reach a statement."""

    #: platforms that get past the module's setup (``setUpModule``, ``pytestmark``), once read
    _setup: frozenset[str] | None = None
    #: id(top-level statement) -> platforms that reach it past the module's earlier statements
    _module_prefix: dict[int, frozenset[str]] | None = None
    #: helpers being read (a helper calling itself is not followed)
    _open: frozenset[int] = frozenset()
    #: the module's test classes, once asked about
    _harness: TestClasses | None = None

    @property
    def harness(self) -> TestClasses:
        if self._harness is None:
            self._harness = TestClasses(self, _module_guards)
        return self._harness

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
            and terminal(stmt.value.func) in EXIT_CALLS
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
        if isinstance(stmt, ast.Match):
            return self._match_passes(stmt, chain)
        if isinstance(stmt, ast.Assert):
            return self.sets(stmt.test, chain)[0]
        if isinstance(stmt, ast.Expr) and self.callee(stmt.value) in RAISERS:
            return RAISERS[self.callee(stmt.value) or ""]
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            helper = self._helper_passes(stmt.value, chain)
            if helper is not None:
                return helper
        if type(stmt).__name__ in ("Try", "TryStar"):
            # past the try: where the body completed, or a handler did
            here = [*chain, stmt]
            body = self.falls_through(getattr(stmt, "body", []), here)
            body &= self.falls_through(getattr(stmt, "orelse", []), here)
            for handler in getattr(stmt, "handlers", []):
                body |= self.falls_through(handler.body, here)
            return body & self.falls_through(getattr(stmt, "finalbody", []), here)
        return ALL

    def _pattern_sets(self, subject: ast.expr, pattern: ast.pattern, chain: Sequence[ast.AST]) -> Sets:
        """Where ``pattern`` can match ``subject``, and where it can fail to (``case "gpu":``)."""
        if isinstance(pattern, ast.MatchValue):
            return self.sets(ast.Compare(left=subject, ops=[ast.Eq()], comparators=[pattern.value]), chain)
        if isinstance(pattern, ast.MatchOr):
            parts = [self._pattern_sets(subject, p, chain) for p in pattern.patterns]
            return frozenset.union(*(t for t, _ in parts)), frozenset.intersection(*(f for _, f in parts))
        if isinstance(pattern, ast.MatchAs) and pattern.pattern is None:
            return ALL, NONE  # `case _:` and a bare capture match anything
        return ALL, ALL

    def _case_sets(self, match: ast.Match, case: ast.match_case, chain: Sequence[ast.AST]) -> Sets:
        true, false = self._pattern_sets(match.subject, case.pattern, chain)
        if case.guard is not None:
            if_true, if_false = self.sets(case.guard, chain)
            true, false = true & if_true, false | if_false
        return true, false

    def case_reach(self, match: ast.Match, case: ast.match_case, chain: Sequence[ast.AST]) -> frozenset[str]:
        """Platforms on which ``case`` runs: where it matches and no case before it did."""
        out = ALL
        for other in match.cases:
            true, false = self._case_sets(match, other, chain)
            if other is case:
                return out & true
            out &= false
        return out

    def _match_passes(self, match: ast.Match, chain: Sequence[ast.AST]) -> frozenset[str]:
        """Platforms on which execution continues after a ``match``: a case that falls
        through, or no case matching."""
        out, left = NONE, ALL
        for case in match.cases:
            true, false = self._case_sets(match, case, chain)
            out |= left & true & self.falls_through(case.body, [*chain, match, case])
            left &= false
        return out | left

    def _helper_passes(self, call: ast.Call, chain: Sequence[ast.AST]) -> frozenset[str] | None:
        """Platforms on which a call of this module's helper comes back (None: not such a helper).

        ``_skip_if_unsupported(self)``: a function without ``return`` whose body may skip.
        """
        found = self.values.function(call.func, chain)
        if found is None or id(found[0]) in self._open:
            return None
        func, where = found
        if any(isinstance(n, (ast.Return, ast.Yield, ast.YieldFrom)) for n in ast.walk(func)):
            return None
        self._open = self._open | {id(func)}
        try:
            return self.falls_through(func.body, where)
        finally:
            self._open = self._open - {id(func)}

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
                named = string_set(ast.Tuple(elts=list(dec.args)))
                if named is not None:
                    out &= named if name == RUN_ON_DEVICES else ALL - named
                continue
            if terminal(dec.func if isinstance(dec, ast.Call) else dec) in SKIP_ALWAYS and (
                not isinstance(dec, ast.Call) or not dec.args or isinstance(dec.args[0], ast.Constant)
            ):
                # an unconditional skip (the argument, if any, is the reason)
                out = NONE
                continue
            if not isinstance(dec, ast.Call) or not dec.args:
                continue
            word = terminal(dec.func)
            true, false = self.sets(dec.args[0], chain)
            if word in SKIP_IF:
                out &= false
            elif word == "skipUnless":
                out &= true
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
            elif isinstance(stmt, (ast.Assign, ast.Expr)) and isinstance(stmt.value, ast.Call):
                registry = self._registry_keys(stmt.value)
                if registry is not None:
                    out &= registry
        return out

    def _registry_keys(self, call: ast.Call) -> frozenset[str] | None:
        """Where a module-level registry call comes back: ``solve = register({"cpu": a, "gpu": b})``
        whose function looks its table up by the backend and raises when the backend is not a
        key (``t = table.get(jax.default_backend())``, ``if not t: raise``; or ``table[backend]``).
        The module fails to import elsewhere. None: not such a call."""
        found = self.values.function(call.func, [self.tree])
        if found is None:
            return None
        func, inside = found
        params = positional_params(func)
        for position, arg in enumerate(call.args[: len(params)]):
            table = arg
            if isinstance(arg, ast.Name):
                value = self.values.value_of(arg, [self.tree])
                table = value[0] if value is not None else arg
            if not isinstance(table, ast.Dict) or not table.keys:
                continue
            keys = [k.value for k in table.keys if isinstance(k, ast.Constant) and isinstance(k.value, str)]
            if len(keys) != len(table.keys):
                continue
            if self._looked_up_or_raises(body_statements(func), params[position], inside):
                return frozenset().union(*(platforms_of(k) for k in keys))
        return None

    def _looked_up_or_raises(self, body: Sequence[ast.stmt], name: str, inside: Sequence[ast.AST]) -> bool:
        """``x = name[backend]``; or ``x = name.get(backend)``, then ``if not x: raise`` or
        ``if x is None: raise``."""
        for i, stmt in enumerate(body):
            if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
                continue
            if not isinstance(stmt.targets[0], ast.Name):
                continue
            value, target = stmt.value, stmt.targets[0].id
            if not self.looks_up_by_backend(value, name, inside):
                continue
            if isinstance(value, ast.Subscript):
                return True
            got = isinstance(value, ast.Call) and len(value.args) == 1
            nxt = body[i + 1] if i + 1 < len(body) else None
            if got and isinstance(nxt, ast.If) and nxt.body and isinstance(nxt.body[-1], ast.Raise):
                test = nxt.test
                missing = (
                    isinstance(test, ast.UnaryOp)
                    and isinstance(test.op, ast.Not)
                    and isinstance(test.operand, ast.Name)
                    and test.operand.id == target
                ) or (
                    isinstance(test, ast.Compare)
                    and isinstance(test.left, ast.Name)
                    and test.left.id == target
                    and isinstance(test.ops[0], ast.Is)
                    and isinstance(test.comparators[0], ast.Constant)
                    and test.comparators[0].value is None
                )
                if missing:
                    return True
        return False

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
            # a test that runs in several classes: where any of them reaches it
            out: frozenset[str] = NONE
            for flags in self.harness.running(ancestors, node) or [{}]:
                self.class_flags = flags
                got = self._allowed(ancestors, node)
                if got is None:
                    return None
                out |= got
            return as_allowed(out)
        finally:
            self._assumed = {}
            self.class_flags = {}
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
            elif isinstance(parent, ast.match_case) and i > 0 and isinstance(chain[i - 1], ast.Match):
                match = chain[i - 1]
                assert isinstance(match, ast.Match)
                out &= self.case_reach(match, parent, chain[:i])
            elif isinstance(parent, ast.Call) and isinstance(child, ast.Lambda):
                out &= self.handed_to(parent, child, above)
            elif isinstance(parent, ast.keyword) and isinstance(child, ast.Lambda):
                # handed by keyword (``run_one_test(func=lambda x: ...)``): the call is one level up
                call = chain[i - 1]
                if isinstance(call, ast.Call):
                    out &= self.handed_to(call, child, above)
            if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and any(
                c is child for c in parent.body
            ):
                out &= self.decorators(parent.decorator_list, above)
                if (
                    isinstance(parent, ast.ClassDef)
                    and isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
                    and child.name not in SETUP_METHODS
                ):
                    out &= self.harness.setup(parent, above)
            block = _block_of(parent, child)
            if block is not None and isinstance(child, ast.stmt):
                nested = isinstance(child, DEFS) and any(isinstance(a, DEFS) for a in above)
                upto = _first_use(block, child) if nested else child
                where = [*above, parent] if above[-1] is not parent else above
                out &= self._before(block, upto, where)
                if upto is not child and isinstance(child, DEFS):
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


def _module_guards(module: ProjectModule) -> Guards:
    """The guards of another module of the project (where a base class is defined)."""
    return Guards(module.tree, module.resolved, path=str(module.path))
