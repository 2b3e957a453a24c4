from __future__ import annotations

import os
import subprocess
import sys
import venv
from collections.abc import Callable
from pathlib import Path

import pytest

from jaxtarget.config import Layer, resolve
from jaxtarget.engine import Analysis, Engine
from jaxtarget.environment import load_environment

ROOT = Path(__file__).resolve().parents[1]

CheckFn = Callable[..., Analysis]


def make_engine(targets: tuple[str, ...] = ("cpu",), python: str | None = None, **layer: object) -> Engine:
    settings = resolve(Layer(target_backends=targets, **layer))  # type: ignore[arg-type]
    return Engine(settings, load_environment(python))


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
