"""Which conftest.py statements pin the test session's platform, read again when the file changes.

Besides the platform options, the default device set to one named by platform
(``jax.config.update("jax_default_device", jax.devices("cpu")[0])``) runs every
uncommitted computation there, the way ``with jax.default_device(...)`` does.

Real files on disk, the real engine on a tpu target (semantics/pins.py).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from jaxtarget.config import Layer, resolve
from jaxtarget.engine import Engine
from jaxtarget.environment import load_environment
from jaxtarget.semantics.source import ChunkCache

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
        # the default device named by platform (ThomasMullen/diffilqrax tests/test_lqr.py)
        ('import jax\n\njax.config.update("jax_default_device", jax.devices("cpu")[0])\n', []),
        ('import jax\n\njax.config.update("jax_default_device", jax.local_devices(backend="cpu")[0])\n', []),
        ('import jax\n\njax.config.update("jax_default_device", "cpu")\n', []),
        # a device picked by position, or of the default backend: no platform named
        ('import jax\n\njax.config.update("jax_default_device", jax.devices()[0])\n', ["JT003"]),
        ('import jax\n\njax.config.update("jax_default_device", jax.devices("tpu")[0])\n', ["JT003"]),
        ('import jax\n\njax.config.update("jax_enable_x64", jax.devices("cpu")[0])\n', ["JT003"]),
        ('import os\n\nos.environ.setdefault("jax_default_device", "cpu")\n', ["JT003"]),
        # the platform in a name the module binds once (Mauropieroni/fastPTA fastPTA/utils.py)
        (
            'import jax\n\nwhich_device = "cpu"\njax.config.update("jax_default_device", jax.devices(which_device)[0])\n',
            [],
        ),
        ('import os\n\nPLATFORM: str = "cpu"\nos.environ["JAX_PLATFORMS"] = PLATFORM\n', []),
        # bound twice, or by a function through `global`, or not a string: no platform known
        (
            'import jax\n\nwhich_device = "cpu"\nwhich_device = "tpu"\n'
            'jax.config.update("jax_default_device", jax.devices(which_device)[0])\n',
            ["JT003"],
        ),
        (
            'import jax\n\nwhich_device = "cpu"\ndef use_gpu():\n    global which_device\n    which_device = "gpu"\n'
            'jax.config.update("jax_default_device", jax.devices(which_device)[0])\n',
            ["JT003"],
        ),
        (
            'import jax\n\nwhich_device = 0\njax.config.update("jax_default_device", jax.devices(which_device)[0])\n',
            ["JT003"],
        ),
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


def test_a_platform_in_a_name_far_from_the_setting_is_read_in_a_sparse_view_too() -> None:
    engine = Engine(resolve(Layer(target_backends=("tpu",))), load_environment(None))
    filler = "".join(f"\n\ndef helper_{i}(x):\n    return x + {i}\n" for i in range(40))
    pinned = (
        'import jax\nimport jax.numpy as jnp\n\nwhich_device = "cpu"\n'
        + filler
        + '\n\njax.config.update("jax_default_device", jax.devices(which_device)[0])\n'
        + TEST.split("\n", 1)[1]
    )
    for source, codes in ((pinned, []), (pinned.replace('"cpu"', '"tpu"'), ["JT003"])):
        for sparse in (False, True):
            found = engine.check(source, "/project/tests/test_fisher.py", sparse=sparse, cache=ChunkCache())
            assert [f.code for f in found.findings] == codes


def test_a_module_that_sets_the_default_device_pins_its_own_calls() -> None:
    engine = Engine(resolve(Layer(target_backends=("tpu",))), load_environment(None))
    filler = "".join(f"\n\ndef helper_{i}(x):\n    return x + {i}\n" for i in range(40))
    pinned = (
        "import jax\nimport jax.numpy as jnp\n\n"
        'jax.config.update("jax_default_device", jax.devices("cpu")[0])\n' + filler + TEST.split("\n", 1)[1]
    )
    for sparse in (False, True):
        assert (
            engine.check(pinned, "/project/tests/test_lqr.py", sparse=sparse, cache=ChunkCache()).findings
            == []
        )
        unpinned = pinned.replace('"cpu"', '"tpu"')
        found = engine.check(
            unpinned, "/project/tests/test_lqr.py", sparse=sparse, cache=ChunkCache()
        ).findings
        assert [f.code for f in found] == ["JT003"]
