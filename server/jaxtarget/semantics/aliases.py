"""Uses whose root is a variable holding a module or function: ``lax = jax.lax``, ``self.la = jnp.linalg``.

The one assignment that binds the root (values.py) gives the dotted expression it
holds; the load is then resolved as that expression, through the same scope rules
and resolver as any other.
"""

from __future__ import annotations

import ast

from .resolver import Binding, Query
from .scopes import Candidate, ScopeIndex, binding_for, dotted_spelling
from .values import Values


def _self_attribute(cand: Candidate, values: Values) -> tuple[ast.expr, list[ast.AST]] | None:
    """``self.attr`` in a method: the one value the class assigns to that attribute (the
    function itself for ``attr = staticmethod(f)``)."""
    attr = cand.dotted.split(".")[1] if cand.dotted.count(".") >= 1 else None
    cls_at = next(
        (i for i in range(len(cand.ancestors) - 1, -1, -1) if isinstance(cand.ancestors[i], ast.ClassDef)),
        None,
    )
    if attr is None or cls_at is None:
        return None
    cls = cand.ancestors[cls_at]
    assert isinstance(cls, ast.ClassDef)
    found: list[ast.expr] = []
    for node in ast.walk(cls):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            t = node.targets[0]
            if (
                isinstance(t, ast.Attribute)
                and t.attr == attr
                and isinstance(t.value, ast.Name)
                and t.value.id == "self"
            ) or (isinstance(t, ast.Name) and t.id == attr and any(s is node for s in cls.body)):
                found.append(static_target(node.value) or node.value)
    return (found[0], list(cand.ancestors[: cls_at + 1])) if len(found) == 1 else None


def static_target(value: ast.AST) -> ast.expr | None:
    """The function ``staticmethod(f)`` wraps: ``self.eig`` is then ``f`` itself."""
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and value.func.id == "staticmethod"
        and len(value.args) == 1
        and not value.keywords
    ):
        return value.args[0]
    return None


def path_to(scope: ast.AST, target: ast.AST) -> list[ast.AST]:
    """The nodes from ``scope`` down to ``target``'s parent (just ``scope`` if not found)."""
    stack: list[tuple[ast.AST, list[ast.AST]]] = [(scope, [])]
    while stack:
        node, above = stack.pop()
        if node is target:
            return above
        here = [*above, node]
        stack.extend((child, here) for child in ast.iter_child_nodes(node))
    return [scope]


def through_alias(
    cand: Candidate, values: Values, index: ScopeIndex, tree: ast.Module, depth: int = 0
) -> Query | None:
    """The query for a load whose root is a variable holding a module or function (one assignment)."""
    root: ast.expr = cand.node
    while isinstance(root, ast.Attribute):
        root = root.value
    if not isinstance(root, ast.Name) or depth > 3:
        return None
    rest = cand.dotted.split(".")[1:]
    found = values.value_of(root, [*cand.ancestors, cand.node])
    if found is None and root.id == "self" and rest:
        found = _self_attribute(cand, values)
        rest = rest[1:]
    if found is None:
        return None
    value, chain = found
    if not isinstance(chain[-1], ast.Module):
        # the value's own ancestors in its function, so that its names are looked up there
        chain = [*chain[:-1], *path_to(chain[-1], value)]
    spelling = dotted_spelling(value)
    if spelling is None or not isinstance(value, (ast.Name, ast.Attribute)):
        return None
    head, spelled = spelling
    alias = Candidate(
        value, head, ".".join([spelled, *rest]), chain, cand.line, cand.byte_col, cand.end_byte_col
    )
    binding = binding_for(alias, index, tree)
    if isinstance(binding, Binding):
        # a relative import is answered only where it names a module of the project
        return Query(binding, alias.dotted)
    if binding is None:
        return through_alias(alias, values, index, tree, depth + 1)
    return None
