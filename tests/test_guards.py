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


# A helper of a test module runs where the module calls it (modelled on jax-ml/jax
# tests/fused_attention_stablehlo_test.py: `sdpa_train` is called only from tests run on cuda).
TEST_HELPER = """\
import jax.numpy as jnp
from jax._src import test_util as jtu


def eig_values(x):
    return jnp.linalg.eig(x)[0]


class EigTest(jtu.JaxTestCase):
    @jtu.run_on_devices("cpu", "gpu")
    def test_values(self):
        eig_values(jnp.eye(3))
"""


@pytest.mark.parametrize(
    ("path", "codes"),
    [
        ("tests/test_eig.py", []),
        ("tests/eig_test.py", []),
        # a module others import: its functions run wherever importers call them
        ("tests/helpers.py", [("JT003", 6)]),
        ("mylib/linalg.py", [("JT003", 6)]),
    ],
)
def test_a_test_modules_helper_is_judged_where_the_module_calls_it(
    check: CheckFn, path: str, codes: list[tuple[str, int]]
) -> None:
    found = check(TEST_HELPER, ("tpu",), path).findings
    assert [(f.code, f.span.line) for f in found] == codes


def test_a_helper_also_called_unguarded_is_reported(check: CheckFn) -> None:
    source = TEST_HELPER + "\n\ndef test_plain():\n    eig_values(jnp.eye(3))\n"
    found = check(source, ("tpu",), "tests/test_eig.py").findings
    assert [(f.code, f.span.line) for f in found] == [("JT003", 6)]


# Catalyst's qjit lowers for the host CPU whatever JAX's backend (modelled on
# PennyLaneAI/catalyst frontend/test/pytest/test_jax_linalg.py); catalyst is not installed
# here, so the name is read from its import.
QJIT = """\
from jax import scipy as jsp
from catalyst import qjit


def test_schur(A):
    @qjit
    def f(X):
        return jsp.linalg.schur(X)

    @qjit(autograph=True)
    def g(X):
        return jsp.linalg.schur(X)

    h = qjit(lambda X: jsp.linalg.schur(X))
    return f(A), g(A), h(A), jsp.linalg.schur(A)
"""


def test_qjit_compiles_for_the_host_cpu(check: CheckFn) -> None:
    found = check(QJIT, ("tpu",), "test_linalg.py").findings
    assert [(f.code, f.span.line) for f in found] == [("JT003", 15)]


def test_a_homonym_of_qjit_pins_nothing(check: CheckFn) -> None:
    source = QJIT.replace("from catalyst import qjit", "from mylib import qjit")
    found = check(source, ("tpu",), "test_linalg.py").findings
    assert [f.span.line for f in found] == [8, 12, 14, 15]


# torch_xla's Pallas tests skip on its PJRT device type (modelled on pytorch/xla
# test/test_pallas.py); a homonym from another library is no backend test.
TORCH_XLA = """\
import unittest

import jax
import torch_xla.runtime as xr
from jax.experimental import pallas as pl


class PallasTest(unittest.TestCase):
    @unittest.skipIf(xr.device_type() != "TPU", "This test only works on TPU.")
    def test_on_tpu(self):
        return pl.pallas_call(kernel, out_shape=out)(x)

    def test_anywhere(self):
        return pl.pallas_call(kernel, out_shape=out)(x)
"""


@pytest.mark.parametrize(("module", "lines"), [("torch_xla.runtime", [14]), ("mylib.runtime", [11, 14])])
def test_torch_xla_device_type_is_the_backend(check: CheckFn, module: str, lines: list[int]) -> None:
    source = TORCH_XLA.replace("torch_xla.runtime", module)
    found = check(source, ("cpu",), "test_pallas.py").findings
    assert [f.span.line for f in found] == lines


# The devices of an array are where its computations run (modelled on sgl-project/sglang-jax
# python/sgl_jax/srt/multimodal/layers/image_hash.py).
ARRAY_DEVICES = """\
import jax.numpy as jnp


def roots_on_host(p):
    devices = p.devices()
    if not any(d.platform == "cpu" for d in devices):
        raise ValueError("p must be on the CPU")
    return jnp.roots(p)


def roots_anywhere(p, devices):
    if not any(d.platform == "cpu" for d in devices.values()):
        raise ValueError("p must be on the CPU")
    return jnp.roots(p)
"""


def test_an_arrays_own_devices_are_a_backend_test(check: CheckFn) -> None:
    found = check(ARRAY_DEVICES, ("tpu",)).findings
    # `devices.values()` is no array's device list: only the second function is reported
    assert [(f.code, f.span.line) for f in found] == [("JT003", 14)]


def test_a_parameter_handed_on_is_no_visible_argument(check: CheckFn) -> None:
    """`subset_by_index=subset_by_index` may be None (modelled on jax/_src/numpy/linalg.py)."""
    source = (
        "from jax import lax\n\n\n"
        "def svd(a, subset_by_index=None):\n"
        "    return lax.linalg.svd(a, subset_by_index=subset_by_index)\n\n\n"
        "def top(a):\n"
        "    return lax.linalg.svd(a, subset_by_index=(0, 1))\n"
    )
    found = check(source, ("cpu",)).findings
    assert [(f.code, f.span.line) for f in found] == [("JT003", 9)]


@pytest.mark.parametrize(
    ("body", "lines"),
    [
        # compiled inside the try, whose handler sees the lowering error
        ("try:\n        jax.jit(jnp.linalg.eig)(a)\n    except NotImplementedError:\n        pass", []),
        ("try:\n        jax.jit(jnp.linalg.eig).lower(a)\n    except Exception:\n        pass", []),
        (
            "try:\n        jax.jit(jnp.linalg.eig).lower(a)\n    except (ValueError, RuntimeError):\n        pass",
            [],
        ),
        # a handler that does not catch it, or re-raises; a jitted function kept for later
        ("try:\n        jax.jit(jnp.linalg.eig)(a)\n    except ValueError:\n        pass", [7]),
        ("try:\n        jax.jit(jnp.linalg.eig)(a)\n    except NotImplementedError:\n        raise", [7]),
        ("try:\n        f = jax.jit(jnp.linalg.eig)\n    except NotImplementedError:\n        pass", [7]),
        ("try:\n        jax.jit(jnp.linalg.eig).trace(a)\n    except NotImplementedError:\n        pass", []),
        ("jax.jit(jnp.linalg.eig)(a)", [6]),
        # traced only, or traced and then lowered
        ("jax.jit(jnp.linalg.eig).trace(a)", []),
        ("jax.jit(jnp.linalg.eig).trace(a).lower()", [6]),
    ],
)
def test_a_lowering_compiled_inside_a_try(check: CheckFn, body: str, lines: list[int]) -> None:
    source = f"import jax\nimport jax.numpy as jnp\n\n\ndef probe(a):\n    {body}\n"
    found = check(source, ("tpu",)).findings
    assert [f.span.line for f in found] == lines, source


# ---------------------------------------------------------------- predicates from other project modules
# modelled on jax's tests importing their device checks from a shared module
# (jax-ml/jax tests/pallas/*: `from jax._src import test_util as jtu`) and on projects with
# a tests/utils.py of backend helpers (google/maxtext MaxText/tests, keras-team/keras testing)

SENDER = """\
from jax import lax
{imports}


def send(x):
    if {call}:
        return lax.psend(x, "i", [(0, 1)])
    return x
"""

PREDICATES = {
    "gpu": 'import jax\n\n\ndef on_gpu():\n    return jax.devices()[0].platform in ("gpu", "cuda", "rocm")\n',
    "tpu": 'from jax import default_backend\n\n\ndef on_gpu():\n    return default_backend() == "tpu"\n',
    "env": 'import os\n\n\ndef on_gpu():\n    return os.environ.get("USE_GPU") == "1"\n',
}


@pytest.fixture
def layout(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'mylib'\n")
    for folder in ("mylib", "mylib/sub", "tests"):
        (tmp_path / folder).mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("")
    (tmp_path / "mylib" / "sub" / "__init__.py").write_text("")
    return tmp_path


@pytest.mark.parametrize(
    ("where", "module", "imports", "importer"),
    [
        ("mylib/checks.py", "mylib.checks", "from mylib.checks import on_gpu", "mylib/sub/ops.py"),
        ("mylib/checks.py", "mylib.checks", "from ..checks import on_gpu", "mylib/sub/ops.py"),
        ("mylib/sub/checks.py", "mylib.sub.checks", "from .checks import on_gpu", "mylib/sub/ops.py"),
        # tests/ without __init__.py: pytest puts tests/ itself on sys.path
        ("tests/utils.py", "utils", "from utils import on_gpu", "tests/test_ops.py"),
        ("tests/utils.py", "utils", "from utils import on_gpu as gpu_here", "tests/test_ops.py"),
    ],
)
@pytest.mark.parametrize(("kind", "cpu_codes"), [("gpu", []), ("tpu", []), ("env", ["JT001", "JT002"])])
def test_a_predicate_imported_from_the_project_is_read_where_it_is_defined(
    check: CheckFn,
    layout: Path,
    where: str,
    module: str,
    imports: str,
    importer: str,
    kind: str,
    cpu_codes: list[str],
) -> None:
    (layout / where).write_text(PREDICATES[kind])
    call = "gpu_here()" if " as gpu_here" in imports else "on_gpu()"
    source = SENDER.format(imports=imports, call=call)
    path = layout / importer
    path.write_text(source)
    # cpu: the gpu test and the tpu test are both false there; an environment flag could be true
    assert [f.code for f in check(source, ("cpu",), str(path)).findings] == cpu_codes
    # tpu: only the tpu test lets psend run there
    tpu = [f.code for f in check(source, ("tpu",), str(path)).findings]
    assert tpu == ([] if kind == "gpu" else ["JT001", "JT002"]), tpu


@pytest.mark.parametrize(
    "source",
    [
        # the module is not where the import looks (no such module in the project)
        SENDER.format(imports="from mylib.elsewhere import on_gpu", call="on_gpu()"),
        # the name is bound again after the import
        SENDER.format(imports="from mylib.checks import on_gpu\n\non_gpu = lambda: True", call="on_gpu()"),
        # the function rebinds it locally
        SENDER.format(imports="from mylib.checks import on_gpu", call="on_gpu()").replace(
            "def send(x):\n", "def send(x, on_gpu=lambda: True):\n"
        ),
        # another function of that module, which is no backend test
        SENDER.format(imports="from mylib.checks import anything", call="anything()"),
    ],
    ids=["missing-module", "rebound", "parameter", "other-function"],
)
def test_an_imported_name_that_is_not_the_projects_predicate_guards_nothing(
    check: CheckFn, layout: Path, source: str
) -> None:
    (layout / "mylib" / "checks.py").write_text(PREDICATES["gpu"] + "\n\ndef anything():\n    return True\n")
    path = layout / "mylib" / "sub" / "ops.py"
    path.write_text(source)
    assert [f.code for f in check(source, ("cpu",), str(path)).findings] == ["JT001", "JT002"]


def test_an_edit_to_the_predicates_module_is_seen(check: CheckFn, layout: Path) -> None:
    checks = layout / "mylib" / "checks.py"
    checks.write_text(PREDICATES["gpu"])
    source = SENDER.format(imports="from mylib.checks import on_gpu", call="on_gpu()")
    path = layout / "mylib" / "sub" / "ops.py"
    path.write_text(source)
    assert check(source, ("cpu",), str(path)).findings == []
    checks.write_text(PREDICATES["env"] + "\n# a longer file\n")
    assert [f.code for f in check(source, ("cpu",), str(path)).findings] == ["JT001", "JT002"]


# Ahead-of-time compilation for a TPU topology with no TPU attached (modelled on
# ayaka14732/pallas-tpu-tutorial research_notes/show_llo.py and AI-Hypercomputer/maxtext
# train_compile.py): the process runs on cpu, the jitted function is lowered for the devices
# of its shardings.
AOT = """\
import os

os.environ["JAX_PLATFORMS"] = "cpu"

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import mesh_utils, topologies
from jax.experimental import pallas as pl
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

topology = topologies.get_topology_desc("v5e-4", platform="tpu")
target = jax.sharding.SingleDeviceSharding(topology.devices[0])


def copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def kernel(x):
    return pl.pallas_call(copy, out_shape=x)(x)


jax.jit(kernel, in_shardings=target, out_shardings=target).lower(x_spec).compile()


def eig_step(a):
    return jnp.linalg.eig(a)[0]


topo = topologies.get_topology_desc(platform="tpu", topology_name="v4:2x2x1")
devices = mesh_utils.create_device_mesh((2, 2), devices=topo.devices)
mesh = Mesh(devices, ("data", "model"))
sharded = NamedSharding(mesh, P("data"))
jax.jit(eig_step, in_shardings=(sharded,), out_shardings=sharded).lower(x_spec).compile()


def on_the_host(x):
    return pl.pallas_call(copy, out_shape=x)(x)


here = jax.sharding.SingleDeviceSharding(jax.devices()[0])
jax.jit(on_the_host, in_shardings=here).lower(x_spec)


def on_attached_tpus(x):
    return pl.pallas_call(copy, out_shape=x)(x)


grid = Mesh(np.array(jax.devices("tpu")).reshape(2, 2), ("a", "b"))
jax.jit(on_attached_tpus, out_shardings=NamedSharding(grid, P())).lower(x_spec)
"""


@pytest.mark.parametrize("target", ["cpu", "tpu"])
def test_a_function_compiled_for_a_tpu_topology_runs_on_tpu(check: CheckFn, target: str) -> None:
    """The Pallas kernel lowered for a TPU topology's device (21) and for attached TPUs by
    a mesh (47) lowers there, whatever the targets and the process's JAX_PLATFORMS=cpu;
    eig lowered for the topology's mesh (28) fails there on either target; the one placed
    on the default device (39) runs on the process's cpu."""
    found = check(AOT, (target,)).findings
    assert [(f.span.line, f.message) for f in found] == [
        (28, "`jnp.linalg.eig` only lowers on cpu, cuda, rocm; target 'tpu' would fail to lower"),
        (
            39,
            "`pallas_call` without interpret=True only lowers on cuda, tpu; target 'cpu' would fail to lower",
        ),
    ]


def test_a_topology_of_another_library_pins_nothing(check: CheckFn) -> None:
    """A `get_topology_desc` from elsewhere says nothing of jax's devices: the kernel (21)
    runs on the process's cpu, and so does eig (28), which lowers there; the mesh of
    `jax.devices("tpu")` (47) still pins."""
    source = AOT.replace(
        "from jax.experimental import mesh_utils, topologies", "from mylib import mesh_utils, topologies"
    )
    found = check(source, ("tpu",)).findings
    assert [f.span.line for f in found] == [21, 39]


# A TPU told by its device kind, and by the generation a helper derives from it (modelled on
# google/jaxite jaxite_cggi/jax_helpers.py get_tpu_version and polymul_kernel.py, and on
# Pallas TPU kernels that check `jax.devices()[0].device_kind`).
KINDS = """\
import jax
from jax.experimental import pallas as pl


def tpu_generation():
    kind = jax.devices()[0].device_kind
    if "TPU" not in kind:
        return -1
    if kind.endswith(" lite"):
        kind = kind[: -len(" lite")]
    return int(kind[-1])


def by_kind(k, x):
    if "TPU" in jax.devices()[0].device_kind:
        return pl.pallas_call(k, out_shape=x)(x)
    return x


def by_lowered_kind(k, x):
    kind = jax.local_devices()[0].device_kind.lower()
    if "tpu v5" not in kind:
        return x
    return pl.pallas_call(k, out_shape=x)(x)


def by_prefix(k, x):
    if jax.devices()[0].device_kind.startswith("TPU"):
        return pl.pallas_call(k, out_shape=x)(x)
    return x


def by_generation(k, x):
    generation = tpu_generation()
    if x.shape[0] % 128 == 0 and generation >= 5:
        return pl.pallas_call(k, out_shape=x)(x)
    return x


def by_generation_inline(k, x):
    if tpu_generation() > 0:
        return pl.pallas_call(k, out_shape=x)(x)
    return x


def off_tpu_generation(k, x):
    if tpu_generation() < 0:
        return pl.pallas_call(k, out_shape=x)(x)
    return x


def by_gpu_kind(k, x):
    if "H100" in jax.devices()[0].device_kind:
        return pl.pallas_call(k, out_shape=x)(x)
    return x


def _on_tpu_only(k, x):
    return pl.pallas_call(k, out_shape=x)(x)


def dispatch(k, x):
    if tpu_generation() >= 4:
        return _on_tpu_only(k, x)
    return x


def _called_anywhere(k, x):
    return pl.pallas_call(k, out_shape=x)(x)


def run(k, x):
    if "TPU" in jax.devices()[0].device_kind:
        x = _called_anywhere(k, x)
    return _called_anywhere(k, x)
"""


def test_a_tpu_told_by_its_device_kind_or_generation(check: CheckFn) -> None:
    """A kind naming a TPU, and a helper's generation number that is -1 off TPU, gate to
    tpu (a Pallas call there lowers on tpu only): nothing on cpu; the branch taken off TPU
    (48), a GPU model's kind (54), and a private helper some caller runs ungated (69) are
    reported; one run only under a TPU gate (59) is not."""
    found = check(KINDS, ("cpu",), "kernels.py").findings
    assert [f.span.line for f in found] == [48, 54, 69]


HELPERS = """\
import jax


def get_tpu_version() -> int:
    \"\"\"The TPU generation, -1 off TPU.\"\"\"
    kind = jax.devices()[0].device_kind
    if "TPU" not in kind:
        return -1
    return int(kind[-1])
"""


@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("from mylib import helpers", "helpers.get_tpu_version()"),
        ("import mylib.helpers as helpers", "helpers.get_tpu_version()"),
        ("import mylib.helpers", "mylib.helpers.get_tpu_version()"),
        ("import mylib\nimport mylib.helpers", "mylib.helpers.get_tpu_version()"),
        ("from mylib.helpers import get_tpu_version", "get_tpu_version()"),
        ("from .helpers import get_tpu_version", "get_tpu_version()"),
    ],
)
def test_a_generation_from_another_module_of_the_project(
    check: CheckFn, tmp_path: Path, imports: str, call: str
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("")
    (tmp_path / "mylib" / "helpers.py").write_text(HELPERS)
    source = (
        f"from jax.experimental import pallas as pl\n{imports}\n\n\ndef f(k, x):\n"
        f"    version = {call}\n    if version >= 5:\n        return pl.pallas_call(k, out_shape=x)(x)\n"
        "    return pl.pallas_call(k, out_shape=x, interpret=version < 0)(x)\n"
    )
    kernel = tmp_path / "mylib" / "kernel.py"
    kernel.write_text(source)
    assert [f.span.line for f in check(source, ("cpu",), str(kernel)).findings] == []
    # the same helper returning 0 off TPU: `>= 5` still gates, `> -1` no longer does
    (tmp_path / "mylib" / "helpers.py").write_text(HELPERS.replace("return -1", "return 0"))
    lower = source.replace("version >= 5", "version > -1")
    compiled = [
        n
        for n, line in enumerate(lower.splitlines(), 1)
        if "interpret=" not in line and "pallas_call" in line
    ]
    assert [f.span.line for f in check(lower, ("cpu",), str(kernel)).findings] == compiled
