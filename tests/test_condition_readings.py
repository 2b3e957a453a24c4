"""How one test expression is read (semantics/conditions.py): where it can be true, where false.

Each source marks the lines where a finding is expected with ``# found``; every other
reference to a catalogued API in it must stay silent. Read here:

- ``__name__`` compared with a string that can name neither ``__main__`` nor the file
  itself (``if __name__ == 'main':``, a typo for ``'__main__'``) is false everywhere, so
  its block never runs; a string that can be the module's dotted name, ``'__main__'``,
  a module that assigns ``__name__`` itself, and a source with no file stay open.

Modelled on real idioms: a script's demo block under ``if __name__ == 'main':``
(leighgable/reservoir ``reservoir.py``) and the usual ``if __name__ == "__main__":``
entry points. The code is written for this suite. Real jedi in the test interpreter,
the real engine.
"""

from __future__ import annotations

import pytest

from .conftest import CheckFn


def _found(check: CheckFn, source: str, target: str, path: str | None = None) -> list[int]:
    return [f.span.line for f in check(source, (target,), path).findings]


def _marked(source: str) -> list[int]:
    return [n for n, line in enumerate(source.splitlines(), 1) if line.endswith("# found")]


MODULE_NAME = """\
import jax.numpy as jnp

if __name__ == 'main':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))

if 'main' == __name__:
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))

if __name__ != 'main':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found

if __name__ == '__main__':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found

if __name__ == 'reservoir':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found

if __name__ == 'models.reservoir':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found

if __name__ == 'models.reservoir_v2':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))

if __name__ is 'main' or __name__ < 'main':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found
"""


@pytest.mark.parametrize("target", ["tpu"])
def test_a_module_name_that_cannot_be_this_file_is_never_true(check: CheckFn, target: str) -> None:
    assert _found(check, MODULE_NAME, target, "/project/models/reservoir.py") == _marked(MODULE_NAME)


def test_a_package_is_named_by_its_folder(check: CheckFn) -> None:
    source = """\
import jax.numpy as jnp

if __name__ == 'models':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found

if __name__ == '__init__':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))
"""
    assert _found(check, source, "tpu", "/project/models/__init__.py") == _marked(source)


def test_a_module_name_stays_open_where_it_cannot_be_read(check: CheckFn) -> None:
    rebinds = """\
import jax.numpy as jnp

__name__ = 'main'

if __name__ == 'main':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found
"""
    assert _found(check, rebinds, "tpu", "/project/reservoir.py") == _marked(rebinds)
    # no file: the module's own name is unknown
    no_file = MODULE_NAME.replace("'main'", "'elsewhere'")
    assert len(_found(check, no_file, "tpu")) == no_file.count("eigvals")
