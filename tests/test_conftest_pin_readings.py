"""Which conftest.py statements pin the test session's platform, read again when the file changes.

Real files on disk, the real engine on a tpu target (semantics/pins.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jaxtarget.config import Layer, resolve
from jaxtarget.engine import Engine
from jaxtarget.environment import load_environment

TEST = "import jax.numpy as jnp\n\n\ndef test_eig():\n    jnp.linalg.eig(jnp.eye(2))\n"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_eig.py").write_text(TEST)
    return tmp_path


def _codes(engine: Engine, project: Path) -> list[str]:
    return [f.code for f in engine.check(TEST, str(project / "tests" / "test_eig.py")).findings]


@pytest.mark.parametrize(
    ("conftest", "codes"),
    [
        ('import os\n\nos.environ["JAX_PLATFORMS"] = "cpu"\n', []),
        ('import os\n\nos.environ.setdefault("JAX_PLATFORM_NAME", "cpu")\n', []),
        # a variable of the project's own, not one jax reads
        ('import os\n\nos.environ["MY_PLATFORM"] = "cpu"\n', ["JT003"]),
        ('import os\n\nos.environ.setdefault("MY_PLATFORM", "cpu")\n', ["JT003"]),
        # removing the variable, with a default for the read: no pin
        ('import os\n\nos.environ.pop("JAX_PLATFORMS", "cpu")\n', ["JT003"]),
        # an empty value leaves the choice to jax
        ('import os\n\nos.environ["JAX_PLATFORMS"] = ""\n', ["JT003"]),
    ],
)
def test_only_jaxs_platform_options_pin_the_session(project: Path, conftest: str, codes: list[str]) -> None:
    (project / "tests" / "conftest.py").write_text(conftest)
    engine = Engine(resolve(Layer(target_backends=("tpu",))), load_environment(None))
    assert _codes(engine, project) == codes


def test_an_edited_conftest_is_read_again(project: Path) -> None:
    engine = Engine(resolve(Layer(target_backends=("tpu",))), load_environment(None))
    conftest = project / "tests" / "conftest.py"
    conftest.write_text('import os\n\nos.environ["JAX_PLATFORMS"] = "cpu"\n')
    os.utime(conftest, (1_000_000, 1_000_000))
    assert _codes(engine, project) == []
    conftest.write_text('import os\n\nos.environ["JAX_PLATFORMS"] = "tpu"\n')
    os.utime(conftest, (2_000_000, 2_000_000))
    assert _codes(engine, project) == ["JT003"]
