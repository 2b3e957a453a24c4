"""What the readings of a use in its module's context need of the module and of the use.

``Module`` (module.py) provides both: the module's guards, its loads of a name, its
words; and a reference's node, ancestors and the facts those readings refine.
"""

from __future__ import annotations

import ast
from typing import Protocol

from .conditions import Allowed
from .guards import Guards


class ModuleUses(Protocol):
    """What the table reading needs of a module's facts."""

    #: set when a reading looked at the project's other files
    reads_project: bool

    @property
    def guards(self) -> Guards: ...

    @property
    def path(self) -> str | None: ...

    def may_pin(self) -> bool: ...

    def uses_of(self, name: str) -> list[tuple[ast.Name, list[ast.AST]]]: ...

    def attribute_uses_of(self, name: str) -> list[tuple[ast.Attribute, list[ast.AST]]]: ...

    def lines_of_word(self, word: str) -> list[int]: ...


class Use(Protocol):
    """The parts of a reference this reading refines."""

    @property
    def node(self) -> ast.AST: ...

    @property
    def ancestors(self) -> list[ast.AST]: ...

    allowed: Allowed
    pinned: frozenset[str] | None
    inspected: bool
