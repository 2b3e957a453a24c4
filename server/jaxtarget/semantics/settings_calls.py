"""Where a call that sets an argument for other code is visibly in force at a use.

Some arguments can be given by the context instead of at the call: Pallas reads
``interpret=`` from ``pltpu.force_tpu_interpret_mode()`` (a context manager, for the
calls traced under it) and from ``pltpu.set_tpu_interpret_mode()`` (for every later
call in the process). A setter is in force at a use inside a ``with setter(...):``
block, and everywhere in a module that calls it at import time, on the platforms
where that statement runs (``if jax.default_backend() == "cpu":`` around it). Setters
are recognised by what their loads resolve to, never by their spelling; a setter
called with ``None`` sets nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from ..platforms import ALL_PLATFORMS
from .conditions import NONE
from .module import Module, Reference
from .scopes import import_aliases


def _sets_something(call: ast.Call) -> bool:
    """Not called with ``None`` (``force_tpu_interpret_mode(None)``, ``params=None``)."""
    given = [*call.args[:1], *(k.value for k in call.keywords if k.arg == "params")]
    return not any(isinstance(v, ast.Constant) and v.value is None for v in given)


def _at_import(above: Sequence[ast.AST]) -> bool:
    """Whether a statement under ``above`` runs when the module is imported (no def or class)."""
    return not any(
        isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)) for n in above
    )


def set_where(module: Module, ref: Reference, setters: frozenset[str]) -> frozenset[str]:
    """The platforms on which one of ``setters`` (public names) is in force at ``ref``."""
    out = NONE
    enclosing = {id(n) for n in ref.ancestors}
    words = {q.rsplit(".", 1)[-1] for q in setters}
    # and the names imports give them (`import force_tpu_interpret_mode as forced`)
    named = {ln for w in words for ln in module.lines_of_word(w)}
    spelled = sorted(named.intersection(module.lines_of_word("import")))
    module.view.ensure(spelled)
    words |= import_aliases(module.view.module(), spelled, frozenset(words))
    for word in sorted(words):
        loads = [*module.uses_of(word), *module.attribute_uses_of(word)]
        for node, above in loads:
            call = above[-1] if above else None
            if not isinstance(call, ast.Call) or call.func is not node or not _sets_something(call):
                continue
            if module.resolved.get(id(node)) not in setters:
                continue
            holder = above[-3] if len(above) >= 3 else None
            if isinstance(holder, (ast.With, ast.AsyncWith)) and id(holder) in enclosing:
                return ALL_PLATFORMS
            statement = above[-2] if len(above) >= 2 else None
            if isinstance(statement, ast.Expr) and _at_import(above):
                allowed = module.guards.allowed(above[:-2], statement)
                out |= ALL_PLATFORMS if allowed is None else allowed
    return out
