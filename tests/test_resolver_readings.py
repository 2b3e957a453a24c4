"""What a binding's import statement says, and the resolver that reads imports alone (semantics/resolver.py).

Read here:

- the import statement jedi is asked about is the one the module wrote: ``import jax``,
  ``from jax import numpy as jnp`` (its alias kept) and ``from jax.numpy.linalg import *``.
  An API that no jax release lacks (``jnp.linalg.eig``) is found only if jedi resolves
  it there; the names some release lacks are read from the import statement as well;
- without jax in the interpreter, the hover of a use has no signature or docstring to
  show: the public name stands for its signature; a name bound by an import under a
  switch and by an assignment otherwise is read from the import statements where they
  agree, and only for the names the rules want.

Modelled on the ``from jax import numpy as jnp`` spelling of google/flax and
AI-Hypercomputer/maxtext, and a checker run in an editor whose interpreter lacks jax.
The code is written for this suite. Real jedi in the test interpreter (or none), the
real engine.
"""

from __future__ import annotations

import pytest

from jaxtarget.lsp.hover import hover_markdown

from .conftest import CheckFn, make_engine

#: how eig is reached, and the import statement that binds it
SPELLINGS = {
    "import": "import jax\n\n\ndef f(a):\n    return jax.numpy.linalg.eig(a)\n",
    "from-as": "from jax import numpy as jnp\n\n\ndef f(a):\n    return jnp.linalg.eig(a)\n",
    "star": "from jax.numpy.linalg import *\n\n\ndef f(a):\n    return eig(a)\n",
}


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_jedi_is_asked_about_the_import_the_module_wrote(check: CheckFn, name: str) -> None:
    findings = check(SPELLINGS[name], ("tpu",)).findings
    assert [(f.code, f.span.line, f.resolved_by) for f in findings] == [("JT003", 5, "jedi")]


def test_without_jax_a_hover_shows_the_public_name(python_without_jax: str) -> None:
    engine = make_engine(("cpu",), python_without_jax)
    source = "from jax import lax\n\n\ndef send(x, p):\n    return lax.psend(x, 'i', p)\n"
    analysis = engine.check(source, None)
    (ref,) = analysis.module.references if analysis.module is not None else []
    hover = hover_markdown(engine, ref, analysis, None)
    assert hover.startswith("**✗ Fails on cpu** (targets cpu)"), hover
    assert "```python\njax.lax.psend\n```" in hover, hover


# a module that imports jax only when a switch is set, and binds the name to something
# else otherwise (the backend-switching idiom of libraries that run on NumPy or JAX):
# without jax, the import statements alone say what `lax.psend` is where they agree, and
# a name no rule wants (`ppermute`) stays unresolved
SWITCHED = """\
import os

if os.environ.get("USE_JAX"):
    from jax import lax
else:
    lax = None


def send(x):
    return lax.psend(x, "i", [(0, 1)])


def other(x):
    return lax.ppermute(x, "i", [(0, 1)])
"""


def test_without_jax_an_ambiguous_name_is_read_from_its_imports(python_without_jax: str) -> None:
    findings = make_engine(("cpu",), python_without_jax).check(SWITCHED, None).findings
    assert [(f.code, f.span.line, f.resolved_by) for f in findings] == [
        ("JT001", 10, "imports"),
        ("JT002", 10, "imports"),
    ]
