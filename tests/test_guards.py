"""Guards that live outside the function: the guard-functions setting, conftest.py and module pins.

Real jedi in the test interpreter, real files on disk and the real CLI.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jaxtarget.config import Layer, resolve
from jaxtarget.engine import Engine
from jaxtarget.environment import load_environment
from jaxtarget.semantics.source import ChunkCache

from .conftest import CheckFn, run_cli

PROBED = """\
import jax.numpy as jnp
from mylib.utils import has_magma


def solve(x):
    if has_magma():
        return jnp.linalg.eig(x)
    return x
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("")
    (tmp_path / "mylib" / "utils.py").write_text("def has_magma():\n    return True\n")
    (tmp_path / "probed.py").write_text(PROBED)
    return tmp_path


def _codes(out: str) -> list[tuple[str, int]]:
    return [(i["code"], i["location"]["row"]) for i in json.loads(out)]


@pytest.mark.parametrize(
    ("entry", "tpu", "cuda"),
    [
        (None, [("JT003", 7)], []),
        ("mylib.utils.has_magma", [], []),
        ("mylib.utils.has_magma:tpu", [("JT003", 7)], []),
        ("mylib.utils.other", [("JT003", 7)], []),
    ],
)
def test_guard_functions_setting(
    project: Path, entry: str | None, tpu: list[object], cuda: list[object]
) -> None:
    extra = f'guard-functions = ["{entry}"]\n' if entry else ""
    (project / "pyproject.toml").write_text(f'[tool.jaxtarget]\ntargets = ["tpu"]\n{extra}')
    out = run_cli("check", "probed.py", "--format", "json", cwd=project)
    assert _codes(out.stdout) == tpu, out.stdout + out.stderr
    out = run_cli("check", "probed.py", "--format", "json", "--target", "cuda", cwd=project)
    assert _codes(out.stdout) == cuda, out.stdout + out.stderr


@pytest.mark.parametrize(
    ("value", "message"),
    [
        ('["mylib.utils.has_magma:bogus"]', "unknown backend 'bogus'"),
        ('["has_magma"]', "expected a dotted function name"),
        ("[1]", "expected a list of strings"),
    ],
)
def test_bad_guard_functions_are_one_clear_error(project: Path, value: str, message: str) -> None:
    (project / "pyproject.toml").write_text(f"[tool.jaxtarget]\nguard-functions = {value}\n")
    out = run_cli("check", "probed.py", cwd=project)
    assert out.returncode == 2
    assert "Traceback" not in out.stderr
    assert message in out.stderr and "guard-functions" in out.stderr, out.stderr


TEST_FILE = """\
import jax.numpy as jnp


def test_eig():
    jnp.linalg.eig(jnp.eye(2))
"""


@pytest.mark.parametrize(
    ("conftest", "found_on_tpu"),
    [
        ('import jax\njax.config.update("jax_platform_name", "cpu")\n', False),
        ('from jax import config\nconfig.update("jax_platforms", "cpu")\n', False),
        ('import os\nos.environ["JAX_PLATFORMS"] = "cpu"\n', False),
        ('import jax\njax.config.update("jax_platforms", "tpu,cpu")\n', True),
        ('import jax\njax.config.update("jax_enable_x64", True)\n', True),
        (None, True),
    ],
)
def test_conftest_pin_applies_to_the_tests_below_it(
    tmp_path: Path, conftest: str | None, found_on_tpu: bool
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    tests = tmp_path / "tests" / "unit"
    tests.mkdir(parents=True)
    if conftest is not None:
        (tmp_path / "tests" / "conftest.py").write_text(conftest)
    (tests / "test_eig.py").write_text(TEST_FILE)
    engine = Engine(resolve(Layer(target_backends=("tpu",))), load_environment(None))
    findings = engine.check(TEST_FILE, str(tests / "test_eig.py")).findings
    assert bool(findings) == found_on_tpu
    sparse = engine.check(TEST_FILE, str(tests / "test_eig.py"), sparse=True, cache=ChunkCache()).findings
    assert [f.span for f in sparse] == [f.span for f in findings]


def test_a_conftest_above_the_project_root_does_not_apply(tmp_path: Path) -> None:
    (tmp_path / "conftest.py").write_text('import jax\njax.config.update("jax_platform_name", "cpu")\n')
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (project / "test_eig.py").write_text(TEST_FILE)
    engine = Engine(resolve(Layer(target_backends=("tpu",))), load_environment(None))
    assert [f.code for f in engine.check(TEST_FILE, str(project / "test_eig.py")).findings] == ["JT003"]


@pytest.mark.parametrize(
    ("pin", "codes"),
    [
        ('jax.config.update("jax_platform_name", "cpu")\n', []),
        ('jax.config.update("jax_platform_name", "tpu")\n', ["JT003"]),
        ("", ["JT003"]),
    ],
)
def test_module_level_pin(check: CheckFn, pin: str, codes: list[str]) -> None:
    source = f"import jax\nimport jax.numpy as jnp\n{pin}\n\ndef f(x):\n    return jnp.linalg.eig(x)\n"
    assert [f.code for f in check(source, ("tpu",)).findings] == codes
