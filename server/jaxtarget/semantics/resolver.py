"""What the engine asks a resolver, and the resolver that reads imports alone.

The engine hands over *bindings* (the import statement that binds a name, plus
the dotted expression that uses it); a resolver answers which of the wanted
public names that is. ``StaticResolver`` answers from the import statements
alone, for interpreters without jax; ``JediResolver`` (jedi_resolver.py) asks
jedi in the user's environment.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol


@dataclass(frozen=True)
class Binding:
    """How a name used in the code is bound by an import.

    ``module`` is the imported module (``jax.lax`` for ``import jax.lax as L``
    or ``from jax import lax`` gives module ``jax`` and ``name`` ``lax``).
    """

    kind: str  # "import" | "import-as" | "from" | "star"
    module: str
    name: str | None
    asname: str | None
    level: int = 0

    def statement(self) -> str:
        dots = "." * self.level
        if self.kind == "import":
            return f"import {self.module}"
        if self.kind == "import-as":
            return f"import {self.module} as {self.asname}"
        if self.kind == "star":
            return f"from {dots}{self.module} import *"
        alias = f" as {self.asname}" if self.asname and self.asname != self.name else ""
        return f"from {dots}{self.module} import {self.name}{alias}"

    def qualify(self, dotted: str) -> str | None:
        """The public dotted name the expression spells, read from the import alone."""
        if self.level:
            return None
        root, _, rest = dotted.partition(".")
        if self.kind == "import":
            return dotted
        if self.kind == "import-as":
            base = self.module
        elif self.kind == "star":
            base = f"{self.module}.{root}"
        else:
            base = f"{self.module}.{self.name}"
        return f"{base}.{rest}" if rest else base


@dataclass(frozen=True)
class Query:
    """One resolution question: what does ``dotted`` mean under ``binding``?"""

    binding: Binding
    dotted: str


@dataclass(frozen=True)
class Spot:
    """A name whose binding the scope rules could not pin down, at a place in the file.

    ``guess`` is what the import statements alone say it is (None: nothing wanted).
    """

    line: int
    col: int
    guess: str | None


class Resolver(Protocol):
    """Answers which wanted public name (if any) a use of a name refers to."""

    #: True when answers come from the installed JAX, not from the text alone
    @property
    def exact(self) -> bool: ...

    #: why answers are inexact ("" when exact)
    @property
    def reason(self) -> str: ...

    def resolve(
        self, queries: Sequence[Query], wanted: frozenset[str], lacking: frozenset[str] = frozenset()
    ) -> list[str | None]:
        """The wanted name each query spells (None: none of them).

        ``lacking``: wanted names some JAX release does not have (added later, or removed);
        where the installed JAX has nothing at all under a use, such a name is read from its
        import statement, so that a use of it can be reported as absent from that JAX.
        """
        ...

    def resolve_in_file(
        self,
        source: str,
        path: str | None,
        spots: Sequence[Spot],
        wanted: frozenset[str],
        lacking: frozenset[str] = frozenset(),
    ) -> list[str | None]: ...

    def describe(self, qualname: str) -> tuple[str, str]:
        """Signature and docstring of a public name ("" where unknown)."""
        ...


class StaticResolver:
    """Import-aware resolution from the module text alone (no jax available)."""

    exact = False

    def __init__(self, reason: str) -> None:
        self.reason = reason

    def resolve(
        self, queries: Sequence[Query], wanted: frozenset[str], lacking: frozenset[str] = frozenset()
    ) -> list[str | None]:
        names = (q.binding.qualify(q.dotted) for q in queries)
        return [name if name in wanted else None for name in names]

    def resolve_in_file(
        self,
        source: str,
        path: str | None,
        spots: Sequence[Spot],
        wanted: frozenset[str],
        lacking: frozenset[str] = frozenset(),
    ) -> list[str | None]:
        return [s.guess if s.guess in wanted else None for s in spots]

    def describe(self, qualname: str) -> tuple[str, str]:
        return "", ""
