"""A conftest.py pin is the test session's, not the library's.

Modelled on m0spak/tbats-jax (a root conftest.py that runs
`os.environ.setdefault("JAX_PLATFORMS", "cpu")`, beside the `tbats_jax` package users
import): the library's functions run on whatever backend their importers have. Real files,
the real engine and the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jaxtarget.config import Layer, resolve
from jaxtarget.engine import Engine
from jaxtarget.environment import load_environment

from .conftest import run_cli

LIBRARY = "import jax.numpy as jnp\n\n\ndef spectral_radius(d):\n    return jnp.max(jnp.abs(jnp.linalg.eigvals(d)))\n"
TEST = "import jax.numpy as jnp\n\n\ndef test_radius():\n    assert jnp.linalg.eigvals(jnp.eye(2)).shape == (2,)\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "conftest.py").write_text('import os\n\nos.environ.setdefault("JAX_PLATFORMS", "cpu")\n')
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("")
    (tmp_path / "mylib" / "admissibility.py").write_text(LIBRARY)
    (tmp_path / "test_radius.py").write_text(TEST)
    (tmp_path / "mylib" / "radius_test.py").write_text(TEST)
    return tmp_path


@pytest.mark.parametrize(
    ("path", "codes"),
    [
        ("mylib/admissibility.py", ["JT003"]),  # imported by users outside pytest
        ("test_radius.py", []),  # collected: runs under the pin
        ("mylib/radius_test.py", []),
    ],
)
def test_the_pin_applies_to_test_modules_only(project: Path, path: str, codes: list[str]) -> None:
    engine = Engine(resolve(Layer(target_backends=("tpu",))), load_environment(None))
    source = (project / path).read_text()
    assert [f.code for f in engine.check(source, str(project / path)).findings] == codes


def test_the_cli_keeps_test_and_library_modules_of_one_folder_apart(project: Path) -> None:
    """One folder holds both (the result cache keys the pin per file kind)."""
    out = run_cli("check", "--target", "tpu", "--format", "json", "mylib", cwd=project)
    found = sorted((Path(f["filename"]).name, f["code"]) for f in json.loads(out.stdout))
    assert found == [("admissibility.py", "JT003")], out.stdout + out.stderr
