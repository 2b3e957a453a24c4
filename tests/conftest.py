from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import venv
from collections.abc import Callable
from pathlib import Path

import pytest

from jaxtarget.config import Layer, resolve
from jaxtarget.engine import Analysis, Engine
from jaxtarget.environment import load_environment

ROOT = Path(__file__).resolve().parents[1]

# this run's own resolved-name store (semantics/name_store.py), inherited by the servers and
# CLIs the tests start: no test reads answers another run, or the user's editor, left behind
os.environ["JAXTARGET_CACHE_HOME"] = tempfile.mkdtemp(prefix="jaxtarget-test-cache-")

CheckFn = Callable[..., Analysis]

#: the jax releases scripts/test.sh installs, each in .jax-venvs/jax-<version> on the Python
#: whose `pip install jax` would not give it (0.10.2 is what it gives Python 3.11)
JAX_VENVS = {"0.7.0": "3.11", "0.8.2": "3.12", "0.9.1": "3.12", "0.10.2": "3.11", "0.12.0.1": "3.13"}
#: the releases the catalog must be verified against: a missing one fails under CI (CI=true)
REQUIRED_JAX = {("0.7.0", "3.11"), ("0.10.2", "3.11"), ("0.12.0.1", "3.13")}


def jax_venv(version: str) -> str:
    """The interpreter of scripts/test.sh's venv for this jax release; missing: a skip, or under CI a failure."""
    python = ROOT / ".jax-venvs" / f"jax-{version}" / "bin" / "python"
    if not python.exists():
        if os.environ.get("CI"):
            pytest.fail(f"{python} is missing: scripts/test.sh installs it")
        pytest.skip(f"jax {version} venv not installed (scripts/test.sh installs it)")
    return str(python)


def make_engine(targets: tuple[str, ...] = ("cpu",), python: str | None = None, **layer: object) -> Engine:
    settings = resolve(Layer(target_backends=targets, **layer))  # type: ignore[arg-type]
    return Engine(settings, load_environment(python))


def found_lines(check: CheckFn, source: str, target: str, path: str | None = None) -> list[int]:
    """The lines of the findings ``check`` gives for ``source`` on one target."""
    return [f.span.line for f in check(source, (target,), path).findings]


def marked_lines(source: str, target: str = "") -> list[int]:
    """The lines of ``source`` marked ``# found``, and with a target those marked ``# found on <target>``."""
    ends = ("# found", f"# found on {target}") if target else ("# found",)
    return [n for n, line in enumerate(source.splitlines(), 1) if line.endswith(ends)]


@pytest.fixture(scope="session")
def check() -> CheckFn:
    engines: dict[tuple[object, ...], Engine] = {}

    def run(
        source: str,
        targets: tuple[str, ...] = ("cpu",),
        path: str | None = None,
        python: str | None = None,
    ) -> Analysis:
        key = (targets, python)
        if key not in engines:
            engines[key] = make_engine(targets, python)
        return engines[key].check(source, path)

    return run


@pytest.fixture(scope="session")
def python_without_jax(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real virtual environment with no jax in it."""
    where = tmp_path_factory.mktemp("nojax") / "venv"
    venv.create(where, with_pip=False, system_site_packages=False)
    exe = where / "bin" / "python"
    out = subprocess.run([str(exe), "-c", "import jax"], capture_output=True)
    assert out.returncode != 0, "the jax-free venv can import jax"
    return str(exe)


def run_cli(
    *args: str, cwd: Path | None = None, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    env = {**{k: v for k, v in os.environ.items() if k != "VIRTUAL_ENV"}, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "jaxtarget", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=timeout,
    )


def token_at(source: str, span_line: int, col: int, end_col: int) -> str:
    return source.splitlines()[span_line - 1][col:end_col]


#: what a catalog probe program finds in scope, as a module's own imports and names
PROBE_PREAMBLE = """\
import jax
import jax.numpy as jnp
from jax import lax
from jax.sharding import NamedSharding
from jax.sharding import PartitionSpec as P

shard_map = jax.shard_map
mesh = jax.make_mesh((2,), ("i",))
N = 2
"""


def probe_program(code: str, value: str | None = None) -> str:
    """A catalog probe program as a module that calls what it builds."""
    bound = "" if value is None else f"VALUE = {value!r}\n"
    return PROBE_PREAMBLE + bound + code + "\nout = f(*args)\n"
