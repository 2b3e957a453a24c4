"""A table entry whose fields are known: the tests a parameterized test makes on it are decided."""

from __future__ import annotations

import ast
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    """A table entry's string fields, and the test parameter that holds the entry."""

    fields: dict[str, str]
    param: str = ""

    def decides(self, left: ast.expr, op: ast.cmpop, right: ast.expr) -> bool | None:
        """The value of ``left <op> right`` if it tests a known field against constants."""
        value = self._field(left)
        if value is not None:
            if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(right, ast.Constant):
                return (value == right.value) == isinstance(op, ast.Eq)
            elts = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else []
            options = {e.value for e in elts if isinstance(e, ast.Constant) and isinstance(e.value, str)}
            if elts and len(options) == len(elts) and isinstance(op, (ast.In, ast.NotIn)):
                return (value in options) == isinstance(op, ast.In)
            return None
        value = self._field(right)
        is_text = isinstance(left, ast.Constant) and isinstance(left.value, str)
        if value is not None and is_text and isinstance(op, (ast.In, ast.NotIn)):
            return (str(getattr(left, "value", "")) in value) == isinstance(op, ast.In)
        if value is not None and isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(left, ast.Constant):
            return (value == left.value) == isinstance(op, ast.Eq)
        return None

    def _field(self, node: ast.expr) -> str | None:
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == self.param
        ):
            return self.fields.get(node.attr)
        return None
