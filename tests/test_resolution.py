"""Every spelling of psend/precv is found through jedi; look-alikes are not."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from jaxtarget.environment import load_environment
from jaxtarget.rules.registry import WANTED
from jaxtarget.semantics.jedi_resolver import JediResolver
from jaxtarget.semantics.resolver import Spot, StaticResolver

from .conftest import CheckFn, token_at

SPELLINGS = {
    "lax-attr": ("from jax import lax\ny = lax.psend(x, 'i', p)\n", "psend"),
    "jax-lax-attr": ("import jax\ny = jax.lax.psend(x, 'i', p)\n", "psend"),
    "import-jax-lax": ("import jax.lax\ny = jax.lax.precv(t, s, 'i', p)\n", "precv"),
    "import-as": ("import jax.lax as L\ny = L.psend(x, 'i', p)\n", "psend"),
    "from-as": ("from jax import lax as jl\ny = jl.precv(t, s, 'i', p)\n", "precv"),
    "from-name-as": ("from jax.lax import psend as ps\ny = ps(x, 'i', p)\n", "ps"),
    "from-name": ("from jax.lax import precv\ny = precv(t, s, 'i', p)\n", "precv"),
    "star": ("from jax.lax import *\ny = psend(x, 'i', p)\n", "psend"),
    "alias-assign": ("from jax import lax\nsend = lax.psend\ny = send(x, 'i', p)\n", "psend"),
    "partial": (
        "import functools\nfrom jax import lax\nf = functools.partial(lax.psend, axis_name='i')\nf(x, perm=p)\n",
        "psend",
    ),
    "function-local-import": (
        "def f(x):\n    from jax import lax\n    return lax.psend(x, 'i', p)\n",
        "psend",
    ),
    "pbroadcast": ("from jax import lax\ny = lax.pbroadcast(x, 'i', 0)\n", "pbroadcast"),
}

LOOKALIKES = {
    "own-def": "def psend(x, a, p):\n    return x\ny = psend(1, 'i', [])\n",
    "method": "class C:\n    def psend(self, x):\n        return x\n    def go(self):\n        return self.psend(1)\n",
    "shadowed-module": "class SomethingElse:\n    def psend(self, *a):\n        pass\nlax = SomethingElse()\nlax.psend(1, 'i', [])\n",
    "string": "s = 'lax.psend(x, \"i\", p)'\n",
    "comment": "# from jax import lax; lax.psend(x)\nx = 1\n",
    "docstring": 'def f():\n    """Calls jax.lax.psend(x) under the hood."""\n',
    "parameter-shadow": "from jax import lax\ndef f(lax):\n    return lax.psend(1)\n",
    "other-module": "import numpy as lax\nlax.psend\n",
    "local-rebind": "from jax import lax\ndef f():\n    lax = object()\n    return lax.psend(1)\n",
}


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_every_spelling_is_resolved(check: CheckFn, name: str) -> None:
    source, token = SPELLINGS[name]
    analysis = check(source)
    codes = [f.code for f in analysis.findings]
    assert "JT001" in codes, (name, analysis.findings)
    f = next(f for f in analysis.findings if f.code == "JT001")
    assert token_at(source, f.span.line, f.span.col, f.span.end_col) == token
    assert f.resolved_by == "jedi"


@pytest.mark.parametrize("name", sorted(LOOKALIKES))
def test_lookalikes_are_not_reported(check: CheckFn, name: str) -> None:
    analysis = check(LOOKALIKES[name])
    assert analysis.findings == [], analysis.findings


@pytest.mark.parametrize("name", sorted(SPELLINGS))
def test_binding_resolution_agrees_with_full_file_jedi(check: CheckFn, name: str) -> None:
    """The cached per-binding answers equal jedi's goto on the real file."""
    source, _ = SPELLINGS[name]
    analysis = check(source)
    resolver = load_environment(None).resolver
    assert isinstance(resolver, JediResolver)
    spots = [Spot(r.span.line, r.span.col, None) for r in analysis.references]
    assert spots
    assert resolver.resolve_in_file(source, None, spots, WANTED.all) == [
        r.qualname for r in analysis.references
    ]


@pytest.mark.parametrize("name", sorted(LOOKALIKES))
def test_lookalikes_full_file_jedi_agrees(name: str) -> None:
    source = LOOKALIKES[name]
    resolver = load_environment(None).resolver
    assert isinstance(resolver, JediResolver)
    spots = [
        Spot(i + 1, line.index("psend"), None)
        for i, line in enumerate(source.splitlines())
        if "psend" in line
    ]
    assert all(r is None for r in resolver.resolve_in_file(source, None, spots, WANTED.all))


def test_ambiguous_binding_goes_to_jedi_flow_analysis(check: CheckFn) -> None:
    source = textwrap.dedent(
        """\
        try:
            from jax import lax
        except ImportError:
            lax = None
        y = lax.psend(x, "i", p)
        """
    )
    findings = check(source).findings
    assert [f.code for f in findings if f.code == "JT001"] == ["JT001"]


def test_definition_comes_from_installed_jax() -> None:
    """jedi's definition of each API is the function the installed jax really exports."""
    import importlib
    import inspect

    import jax

    site = Path(jax.__file__).resolve().parents[1]
    resolver = load_environment(None).resolver
    assert isinstance(resolver, JediResolver)
    defs = resolver.definitions(WANTED.all)
    for public in ("jax.lax.psend", "jax.numpy.linalg.eig", "jax.default_backend"):
        module, _, name = public.rpartition(".")
        obj = inspect.unwrap(getattr(importlib.import_module(module), name))
        source = Path(obj.__code__.co_filename).resolve().relative_to(site).with_suffix("")
        real = ".".join((*source.parts, obj.__name__))
        assert defs.get(real) == public, (public, real, sorted(k for k, v in defs.items() if v == public))


def test_without_jax_falls_back_to_imports(check: CheckFn, python_without_jax: str) -> None:
    env = load_environment(python_without_jax)
    assert isinstance(env.resolver, StaticResolver)
    source, _ = SPELLINGS["import-as"]
    analysis = check(source, python=python_without_jax)
    assert [f.code for f in analysis.findings] == ["JT001", "JT002"]
    f = analysis.findings[0]
    assert f.resolved_by == "imports"
    assert "jax is not installed" in f.message
    assert check(LOOKALIKES["own-def"], python=python_without_jax).findings == []


@pytest.mark.parametrize("name", ["lax-attr", "jax-lax-attr", "from-name-as", "star", "partial"])
def test_static_fallback_finds_common_spellings(check: CheckFn, python_without_jax: str, name: str) -> None:
    source, token = SPELLINGS[name]
    findings = check(source, python=python_without_jax).findings
    assert (
        findings
        and token_at(source, findings[0].span.line, findings[0].span.col, findings[0].span.end_col) == token
    )


# A package that picks its array library by configuration and re-exports it (modelled on
# benvial/nannos nannos/__init__.py, `backend = numpy` from jax, numpy or torch, and
# nannos/layers.py `bk.linalg.eig(A)`): jedi finds numpy's eig as well as jax's there.
CHOSEN = """\
import os

if os.environ.get("MYPKG_BACKEND") == "jax":
    from jax import numpy as backend
else:
    import numpy as backend
"""


@pytest.mark.parametrize(
    ("init", "codes"),
    [
        (CHOSEN, []),  # numpy's or jax's, by configuration: not visibly the JAX API
        ("from jax import numpy as backend\n", ["JT003"]),  # jax's alone
        ("if True:\n    from jax import numpy as backend\nelse:\n    backend = None\n", ["JT003"]),
    ],
)
def test_a_library_chosen_by_configuration_is_not_visibly_jax(
    check: CheckFn, tmp_path: Path, init: str, codes: list[str]
) -> None:
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text(init)
    layers = tmp_path / "mypkg" / "layers.py"
    source = "from . import backend as bk\n\n\ndef eig_func(a):\n    return bk.linalg.eig(a)\n"
    layers.write_text(source)
    assert [f.code for f in check(source, ("tpu",), str(layers)).findings] == codes


FALLBACKS = {
    # the import the environment has wins; the handler's is its fallback
    "try-import-numpy": (
        "try:\n    import jax.numpy as np\nexcept ImportError:\n    import numpy as np\n",
        ["JT003"],
    ),
    "try-none": ("try:\n    import jax.numpy as np\nexcept ModuleNotFoundError:\n    np = None\n", ["JT003"]),
    "try-tuple": (
        "try:\n    import jax.numpy as np\nexcept (ImportError, OSError):\n    import numpy as np\n",
        ["JT003"],
    ),
    # not an import failure the handler catches: either may be bound
    "try-value-error": ("try:\n    import jax.numpy as np\nexcept ValueError:\n    import numpy as np\n", []),
    # chosen at run time: either
    "if-env": (
        "import os\nif os.environ.get('X'):\n    import jax.numpy as np\nelse:\n    import numpy as np\n",
        [],
    ),
    # numpy first, jax as the fallback: numpy where it is installed
    "numpy-first": ("try:\n    import numpy as np\nexcept ImportError:\n    import jax.numpy as np\n", []),
}


@pytest.mark.parametrize("name", sorted(FALLBACKS))
def test_an_import_fallback_is_read_as_the_environment_runs_it(check: CheckFn, name: str) -> None:
    """Modelled on libraries that prefer jax and fall back (e.g. `try: import jax.numpy as
    jnp` / `except ImportError: ...` in optional-backend modules)."""
    imports, codes = FALLBACKS[name]
    source = imports + "\n\ndef values(a):\n    return np.linalg.eig(a)\n"
    assert [f.code for f in check(source, ("tpu",)).findings] == codes
