"""Which names a module uses without binding them, read from Python's own symbol tables."""

from __future__ import annotations

import builtins
import symtable

_BUILTINS = frozenset(dir(builtins)) | {"__file__", "__name__", "__doc__", "__builtins__", "__spec__"}


def unbound_names(source: str) -> set[str]:
    """Global names the module reads that nothing in it binds (builtins excepted)."""
    top = symtable.symtable(source, "<module>", "exec")
    bound = {
        s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported() or s.is_namespace()
    }
    used: set[str] = set()
    stack = [top]
    while stack:
        table = stack.pop()
        for s in table.get_symbols():
            if not s.is_referenced():
                continue
            if table is top or (s.is_global() and not s.is_declared_global()) or s.is_declared_global():
                used.add(s.get_name())
        stack.extend(table.get_children())
    return used - bound - _BUILTINS
