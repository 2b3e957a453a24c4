"""Where the skip fix puts ``import jax`` and ``import pytest``: where isort would (fixes/imports.py).

The real engine on a tpu target checks a test module; its skip-test fix is applied as an
editor would, and the whole fixed text compared.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxtarget.engine import Engine
from jaxtarget.fixes.layout import apply_edits

from .conftest import make_engine

SKIP = (
    '@pytest.mark.skipif(not jax.default_backend() in ("cpu", "gpu", "cuda", "rocm"), '
    'reason="jnp.linalg.eig requires one of: cpu, cuda, rocm")\n'
)
TEST = "def test_eig():\n    jnp.linalg.eig(jnp.eye(2))\n"


@pytest.fixture(scope="module")
def engine() -> Engine:
    return make_engine(("tpu",))


def _skipped(engine: Engine, source: str, path: str) -> str:
    analysis = engine.check(source, path)
    (finding,) = analysis.findings
    (fix,) = [f for f in analysis.fixes(finding) if f.kind == "skip-test"]
    return apply_edits(source, fix.edits)


@pytest.mark.parametrize(
    ("head", "fixed"),
    [
        # into the third-party section, after the docstring
        (
            '"""Tests of eig."""\nimport jax.numpy as jnp\n',
            '"""Tests of eig."""\nimport jax\nimport jax.numpy as jnp\nimport pytest\n',
        ),
        # a third-party section of its own after the standard library's; jax imported later
        (
            'import os\n\nos.environ["XLA_FLAGS"] = ""\n\nimport jax.numpy as jnp\n',
            'import os\n\nimport jax\nimport pytest\n\nos.environ["XLA_FLAGS"] = ""\n\nimport jax.numpy as jnp\n',
        ),
        # a third-party section of its own before the relative imports, which come first
        (
            "from . import conftest\nfrom .helpers import square\n\nconftest.setup()\n\nimport jax.numpy as jnp\n",
            "import jax\nimport pytest\n\nfrom . import conftest\nfrom .helpers import square\n\n"
            "conftest.setup()\n\nimport jax.numpy as jnp\n",
        ),
        # `__future__` first, then the rest
        (
            "from __future__ import annotations\n\nimport jax.numpy as jnp\n",
            "from __future__ import annotations\n\nimport jax\nimport jax.numpy as jnp\nimport pytest\n",
        ),
        (
            'from __future__ import annotations\n\nimport os.path\n\nos.environ["XLA_FLAGS"] = ""\n\n'
            "import jax.numpy as jnp\n",
            "from __future__ import annotations\n\nimport os.path\n\nimport jax\nimport pytest\n\n"
            'os.environ["XLA_FLAGS"] = ""\n\nimport jax.numpy as jnp\n',
        ),
        # after the last standard-library import, a from-import over several lines
        (
            'import sys\nfrom os import (\n    environ,\n    path,\n)\n\nenviron["XLA_FLAGS"] = ""\n\n'
            "import jax.numpy as jnp\n",
            "import sys\nfrom os import (\n    environ,\n    path,\n)\n\nimport jax\nimport pytest\n\n"
            'environ["XLA_FLAGS"] = ""\n\nimport jax.numpy as jnp\n',
        ),
        # pytest sorts after every import of the section
        (
            "import jax.numpy as jnp\nimport numpy as np\n",
            "import jax\nimport jax.numpy as jnp\nimport numpy as np\nimport pytest\n",
        ),
    ],
    ids=["docstring", "after-stdlib", "before-local", "future", "future-stdlib", "after-from", "last"],
)
def test_the_skip_fixs_imports_go_where_isort_puts_them(engine: Engine, head: str, fixed: str) -> None:
    assert _skipped(engine, f"{head}\n\n{TEST}", "tests/test_eig.py") == f"{fixed}\n\n{SKIP}{TEST}"


def test_a_module_beside_the_projects_pyproject_is_first_party(engine: Engine, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'mylib'\n")
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("")
    (tmp_path / "tests").mkdir()
    path = tmp_path / "tests" / "test_eig.py"
    head = "import mylib\n\nmylib.setup()\n\nimport jax.numpy as jnp\n"
    path.write_text(f"{head}\n\n{TEST}")
    # mylib is the project's own: pytest and jax go in a section before it
    fixed = "import jax\nimport pytest\n\nimport mylib\n\nmylib.setup()\n\nimport jax.numpy as jnp\n"
    assert _skipped(engine, f"{head}\n\n{TEST}", str(path)) == f"{fixed}\n\n{SKIP}{TEST}"
