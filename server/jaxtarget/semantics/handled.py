"""Which failures a use's surroundings handle: ``try``/``except`` around it.

- ``caught``: inside a ``try`` whose handler catches a trace-time error (and does not
  re-raise), also a lambda jitted into a local variable only called inside one;
- ``compiled_caught``: compiled right there (``jax.jit(api)(...)``) inside a ``try`` that
  catches the lowering error;
- ``absence_caught``: inside a ``try`` that catches what using an API the installed jax
  lacks raises (``TypeError`` for a keyword, ``AttributeError`` for a name): a version fallback.
"""

from __future__ import annotations

import ast
import itertools
from collections.abc import Sequence

from .conditions import ABSENCE_CATCHERS, LOWERING_CATCHERS, TRACE_CATCHERS, catches
from .guards import Guards
from .uses import JIT, assigned_name, local_loads


def caught(ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    """Inside a ``try`` body whose handler catches what a trace-time check raises (and does not re-raise).

    Also a lambda jitted into a local variable that is only called inside such a ``try``.
    """
    if _in_catching_try([*ancestors, node]):
        return True
    for k in range(len(ancestors) - 1, 0, -1):
        if isinstance(ancestors[k], ast.Lambda):
            call, holder = ancestors[k - 1], ancestors[k - 2] if k >= 2 else None
            if not (isinstance(call, ast.Call) and call.args and call.args[0] is ancestors[k]):
                return False
            variable = assigned_name(holder, call)
            loads = local_loads(ancestors[: k - 1], variable) if variable else None
            return bool(loads) and all(
                isinstance(above[-1], ast.Call)
                and above[-1].func is load
                and _in_catching_try([*above, load])
                for load, above in loads or []
            )
    return False


def absence_caught(ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    """Inside a ``try`` body whose handler catches a missing keyword or name (and does not re-raise)."""
    return _in_catching_try([*ancestors, node], ABSENCE_CATCHERS)


def _in_catching_try(chain: Sequence[ast.AST], kinds: frozenset[str] = TRACE_CATCHERS) -> bool:
    for parent, child in itertools.pairwise(chain):
        # ast.Try, and ast.TryStar on Python 3.11+
        if type(parent).__name__ in ("Try", "TryStar") and any(
            c is child for c in getattr(parent, "body", ())
        ):
            handlers: list[ast.ExceptHandler] = getattr(parent, "handlers", [])
            for handler in handlers:
                if catches(handler.type, kinds) and not (
                    handler.body and isinstance(handler.body[-1], ast.Raise) and handler.body[-1].exc is None
                ):
                    return True
    return False


def compiled_caught(g: Guards, ancestors: Sequence[ast.AST], node: ast.AST) -> bool:
    """``jax.jit(api)(...)`` or ``jax.jit(api).lower(...)`` inside a ``try`` that catches the lowering error.

    The call compiles right there, so a failed lowering is raised inside the ``try`` (a
    plain call may be traced by an outer ``jit`` and lowered after the ``try`` is left).
    """
    if len(ancestors) < 2:
        return False
    jit, outer = ancestors[-1], ancestors[-2]
    if not (isinstance(jit, ast.Call) and jit.args and jit.args[0] is node and g.callee(jit) == JIT):
        return False
    now = (isinstance(outer, ast.Call) and outer.func is jit) or (
        isinstance(outer, ast.Attribute) and outer.value is jit and outer.attr == "lower"
    )
    return now and _in_catching_try([*ancestors, node], LOWERING_CATCHERS)
