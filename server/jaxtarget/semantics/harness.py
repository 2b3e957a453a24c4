"""Test classes: the skips their set-up runs, and the classes that run their tests.

A test method runs where its class's ``setUp``/``setUpClass`` (and its bases', also those
another module of the project defines: jax's Pallas tests derive from
``pallas_test_util.PallasTPUTest``, whose ``setUp`` skips off TPU) lets it through, and in
every class that runs it: the class itself and each subclass, which may change a boolean
attribute its tests read through ``self`` (``class PallasInterpretTest(PallasTest):
INTERPRET = True`` runs every inherited test again in interpret mode).

Read here through the guards of the module that defines each class (``Reader``, which
``guards.Guards`` is): what its decorators and statements let through.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

from .conditions import ALL
from .predicates import ProjectModule, project_class
from .values import Values
from .vocabulary import SETUP_METHODS

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
#: how many bases up a set-up is read
_SETUP_DEPTH = 3
#: how many classes the flags of one class are read from
_FLAG_CLASSES = 12
#: how many classes of the module a subclass is traced up through
_DERIVE_DEPTH = 8


class Reader(Protocol):
    """What the test classes of a module are read through: that module's guards."""

    tree: ast.Module
    path: str | None
    values: Values
    #: the boolean attributes of the test class being read, known through ``self``
    class_flags: dict[str, bool]

    @property
    def harness(self) -> TestClasses: ...

    def decorators(self, decorators: Sequence[ast.expr], chain: Sequence[ast.AST]) -> frozenset[str]: ...

    def falls_through(self, block: Sequence[ast.stmt], chain: Sequence[ast.AST]) -> frozenset[str]: ...


class TestClasses:
    """The test classes of one module, read through its guards (``reader``); a base class
    another project module defines is read through that module's guards, made by ``make``."""

    def __init__(self, reader: Reader, make: Callable[[ProjectModule], Reader]) -> None:
        self.reader = reader
        self._make = make
        #: the guards of other project modules whose classes this module's classes derive from
        self._base_modules: dict[Path, tuple[ast.Module, Reader]] = {}

    def _module_reader(self, module: ProjectModule) -> Reader:
        held = self._base_modules.get(module.path)
        if held is None or held[0] is not module.tree:
            held = self._base_modules[module.path] = (module.tree, self._make(module))
        return held[1]

    def setup(self, cls: ast.ClassDef, chain: Sequence[ast.AST], depth: int = 0) -> frozenset[str]:
        """Platforms that get past the skips in a test class's ``setUp``/``setUpClass`` and its
        bases' (with the decorators of its bases)."""
        r = self.reader
        out = ALL
        here = [*chain, cls]
        for stmt in cls.body:
            if isinstance(stmt, _FUNCTIONS) and stmt.name in SETUP_METHODS:
                out &= r.decorators(stmt.decorator_list, here) & r.falls_through(stmt.body, [*here, stmt])
        if depth < _SETUP_DEPTH:
            for base_reader, base in self.bases(cls):
                if base_reader is r:
                    out &= self.setup(base, [r.tree], depth + 1)
                else:
                    # the base's set-up reads the flags of the class being judged
                    base_reader.class_flags = r.class_flags
                    try:
                        out &= base_reader.harness.setup(base, [base_reader.tree], depth + 1)
                    finally:
                        base_reader.class_flags = {}
                out &= base_reader.decorators(base.decorator_list, [base_reader.tree])
        return out

    def bases(self, cls: ast.ClassDef) -> list[tuple[Reader, ast.ClassDef]]:
        """The classes ``cls`` derives from that this module or another project module defines,
        each with the guards of its module."""
        r = self.reader
        out: list[tuple[Reader, ast.ClassDef]] = []
        for base in cls.bases:
            found = r.values.class_named(base) if isinstance(base, ast.Name) else None
            if found is not None:
                if found is not cls:
                    out.append((r, found))
                continue
            other = project_class(r.path, r.tree, base)
            if other is not None:
                out.append((self._module_reader(other[0]), other[1]))
        return out

    def flags(self, cls: ast.ClassDef) -> dict[str, bool]:
        """The boolean attributes a class has, itself or through its bases (the nearest
        ``INTERPRET = False`` wins), also those of bases another project module defines;
        not those a method assigns through ``self``."""
        flags: dict[str, bool] = {}
        assigned: set[str] = set()
        seen: set[int] = set()
        todo: list[tuple[Reader, ast.ClassDef]] = [(self.reader, cls)]
        while todo and len(seen) < _FLAG_CLASSES:
            reader, here = todo.pop(0)
            if id(here) in seen:
                continue
            seen.add(id(here))
            for name, value in _bool_attributes(here).items():
                flags.setdefault(name, value)
            assigned |= _self_assigned(here)
            todo.extend(reader.harness.bases(here))
        return {name: value for name, value in flags.items() if name not in assigned}

    def variants(self, cls: ast.ClassDef) -> list[dict[str, bool]]:
        """The boolean attributes of each class of this module that runs ``cls``'s tests: the
        class itself and each subclass."""
        variants = [self.flags(cls)]
        for other in self.reader.tree.body:
            if isinstance(other, ast.ClassDef) and other is not cls and self.derives(other, cls):
                flags = self.flags(other)
                if flags not in variants:
                    variants.append(flags)
        return variants

    def derives(self, cls: ast.ClassDef, base: ast.ClassDef, depth: int = 0) -> bool:
        """Whether ``cls`` derives from ``base`` through classes of this module."""
        for b in cls.bases:
            found = self.reader.values.class_named(b) if isinstance(b, ast.Name) else None
            if found is base or (
                found is not None
                and found is not cls
                and depth < _DERIVE_DEPTH
                and self.derives(found, base, depth + 1)
            ):
                return True
        return False

    def running(self, ancestors: Sequence[ast.AST], node: ast.AST) -> list[dict[str, bool]]:
        """For code in a method of a test class whose boolean attributes its setUp or its
        tests read through ``self`` (``INTERPRET``), those attributes in each class that runs
        it (empty: none is read so)."""
        chain = [*ancestors, node]
        for parent, child in itertools.pairwise(chain):
            if isinstance(parent, ast.ClassDef) and isinstance(child, _FUNCTIONS):
                if not child.name.startswith("test"):
                    # other classes take their attributes when an instance is made
                    # (`is_causal: bool = False` of a layer): only a test runner makes
                    # a test class's instances as they are
                    return []
                variants = self.variants(parent)
                return variants if any(variants) else []
        return []


def _bool_attributes(cls: ast.ClassDef) -> dict[str, bool]:
    """``NAME = True`` / ``NAME: bool = False`` in a class body (a name bound otherwise: left out)."""
    out: dict[str, bool] = {}
    for stmt in cls.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            target, value = stmt.target.id, stmt.value
        else:
            continue
        if isinstance(value, ast.Constant) and isinstance(value.value, bool):
            out[target] = value.value
        else:
            out.pop(target, None)
    return out


def _self_assigned(cls: ast.ClassDef) -> set[str]:
    """The attributes a class's methods assign through ``self`` (``self.INTERPRET = ...``)."""
    return {
        target.attr
        for stmt in cls.body
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
        for node in ast.walk(stmt)
        if isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign))
        for target in (node.targets if isinstance(node, ast.Assign) else [node.target])
        if isinstance(target, ast.Attribute)
        and isinstance(target.value, ast.Name)
        and target.value.id == "self"
    }
