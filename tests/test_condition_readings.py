"""How one test expression is read (semantics/conditions.py): where it can be true, where false.

Each source marks the lines where a finding is expected with ``# found``; every other
reference to a catalogued API in it must stay silent. Read here:

- ``__name__`` compared with a string that can name neither ``__main__`` nor the file
  itself (``if __name__ == 'main':``, a typo for ``'__main__'``) is false everywhere, so
  its block never runs; a string that can be the module's dotted name, ``'__main__'``,
  a module that assigns ``__name__`` itself, and a source with no file stay open;
- a backend test stored in a name is read through up to four names, not five; a device
  stored in a name is a device (``dev.platform``);
- a string that is not a device's kind is no backend test, whatever it contains;
  ``"TPU" in kind`` (``"tpu"`` in a lower-cased kind, ``kind.startswith("TPU")``) is true
  on TPU alone, since every TPU's kind holds it; a longer text or the other case may
  miss a TPU;
- a backend compared with a value that cannot be read, or by identity, restricts nothing;
  a device kind is read through the function's own reassignments (``kind = kind.lower()``),
  and a device list through a name;
- jax's exact predicates (``jtu.is_device_cuda()``) are false everywhere else: a skip
  under one leaves the code after it for the other platforms only;
- a number returned by platform (``tpu_version() >= 5``) is true where the last return
  is reached;
- a backend test spelled through a name an older jax had (``jax.lib.xla_bridge``) is read
  as spelled;
- a test of constants (``if False:``, a name one assignment binds to a constant, compared
  with a constant by ``==``, ``!=``, ``in``, ``not in`` or ``is None``) has one value on every
  platform: the branch it rules out never runs; a name bound twice (a ``global`` or
  ``nonlocal`` in a function, a loop, ``+=``), a parameter, and an ordering stay open;
- an imported predicate is read only where nothing in the module rebinds its name, from
  its own statement and the module's other statements that are no def or class (a def
  being written elsewhere in that module does not hide it).

Modelled on real idioms: a script's demo block under ``if __name__ == 'main':``
(leighgable/reservoir ``reservoir.py``), a script's settings at its top choosing which
branches run (google-research/jax3d ``jax3d/projects/mobilenerf/stage1.py``: ``scene_type =
"synthetic"``, then ``if scene_type == "synthetic": ... elif ...``) and the usual ``if __name__ == "__main__":``
entry points; backend names kept in variables (``platform = jax.devices()[0].platform``,
google/flax ``tests/run_all_tests.sh``-driven tests such as ``flax/linen`` attention
tests), TPU generation helpers (AI-Hypercomputer/maxtext ``MaxText/max_utils.py``
``get_tpu_version``-style code), jax's own ``jtu.is_device_cuda()`` skips (jax-ml/jax
``tests/linalg_test.py``) and predicates imported from a project's utility module. The code is written for this suite. Real jedi in the test interpreter,
the real engine.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import CheckFn, found_lines, make_engine, marked_lines

MODULE_NAME = """\
import jax.numpy as jnp

if __name__ == 'main':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))

if 'main' == __name__:
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))

if __name__ != 'main':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found

if __name__ == '__main__':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found

if __name__ == 'reservoir':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found

if __name__ == 'models.reservoir':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found

if __name__ == 'models.reservoir_v2':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))

if __name__ is 'main' or __name__ < 'main':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found
"""


@pytest.mark.parametrize("target", ["tpu"])
def test_a_module_name_that_cannot_be_this_file_is_never_true(check: CheckFn, target: str) -> None:
    assert found_lines(check, MODULE_NAME, target, "/project/models/reservoir.py") == marked_lines(
        MODULE_NAME
    )


def test_a_package_is_named_by_its_folder(check: CheckFn) -> None:
    source = """\
import jax.numpy as jnp

if __name__ == 'models':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found

if __name__ == '__init__':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))
"""
    assert found_lines(check, source, "tpu", "/project/models/__init__.py") == marked_lines(source)


def test_a_module_name_stays_open_where_it_cannot_be_read(check: CheckFn) -> None:
    rebinds = """\
import jax.numpy as jnp

__name__ = 'main'

if __name__ == 'main':
    print(jnp.linalg.eigvals(jnp.ones((2, 2))))  # found
"""
    assert found_lines(check, rebinds, "tpu", "/project/reservoir.py") == marked_lines(rebinds)
    # no file: the module's own name is unknown
    no_file = MODULE_NAME.replace("'main'", "'elsewhere'")
    assert len(found_lines(check, no_file, "tpu")) == no_file.count("eigvals")


NAMES = """\
import jax
import jax.numpy as jnp


def four(x):
    a = jax.default_backend() == "tpu"
    b = a
    c = b
    d = c
    if d:
        return x
    return jnp.linalg.eigvals(x)


def five(x):
    a = jax.default_backend() == "tpu"
    b = a
    c = b
    d = c
    e = d
    if e:
        return x
    return jnp.linalg.eigvals(x)  # found


def by_device(x):
    dev = jax.devices()[0]
    if dev.platform == "tpu":
        return x
    return jnp.linalg.eigvals(x)
"""


def test_a_backend_test_is_read_through_four_names_not_five(check: CheckFn) -> None:
    assert found_lines(check, NAMES, "tpu") == marked_lines(NAMES)


NOT_BACKEND = """\
import os

import jax
import jax.numpy as jnp


def attend(q, k, v):
    model = os.environ.get("MODEL", "")
    if "tpu" in model:
        return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # found
    kind = jax.devices()[0].device_kind
    if "TPU" in kind:
        return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # found on tpu
    return q


def solve(x):
    if jax.default_backend() == os.environ["PLATFORM"]:
        return x
    return jnp.linalg.eigvals(x)  # found on tpu


def identity(x):
    # `is` compares objects, not names: nothing is known
    if jax.default_backend() is "tpu":
        return x
    return jnp.linalg.eigvals(x)  # found on tpu


def by_kind_rebound(q, k, v):
    kind = jax.devices()[0].device_kind
    n = 0
    print(kind)
    kind = kind.lower()
    if "tpu" in kind:
        return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # found on tpu
    return q


def by_device_list(x):
    devices = jax.devices()
    if any(d.platform == "tpu" for d in devices):
        return x
    return jnp.linalg.eigvals(x)
"""


@pytest.mark.parametrize("target", ["cpu", "tpu"])
def test_only_a_backend_or_a_device_kind_restricts(check: CheckFn, target: str) -> None:
    assert found_lines(check, NOT_BACKEND, target) == marked_lines(NOT_BACKEND, target)


EXACT = """\
import unittest

import jax
import jaxlib.gpu_solver
from jax._src import test_util as jtu
from jax._src.lib import gpu_solver


class SchurTest(unittest.TestCase):
    def test_schur(self):
        if jtu.is_device_PLATFORM():
            self.skipTest("no schur here")
        jax.scipy.linalg.schur(jax.numpy.eye(3))  # found

    def test_schur_without_magma(self):
        if gpu_solver.has_magma():
            self.skipTest("another test covers MAGMA")
        # no MAGMA can be a GPU without it: not exact
        jax.scipy.linalg.schur(jax.numpy.eye(3))  # found on every target

    def test_schur_without_jaxlibs_magma(self):
        if jaxlib.gpu_solver.has_magma():
            self.skipTest("another test covers MAGMA")
        jax.scipy.linalg.schur(jax.numpy.eye(3))  # found on every target
"""


@pytest.mark.parametrize(("platform", "other"), [("cuda", "rocm"), ("rocm", "cuda"), ("tpu", "cuda")])
def test_an_exact_predicate_is_false_on_every_other_platform(
    check: CheckFn, platform: str, other: str
) -> None:
    source = EXACT.replace("PLATFORM", platform)
    everywhere = [n for n in marked_lines(source, "every target") if n not in marked_lines(source)]
    assert found_lines(check, source, other) == marked_lines(source, "every target")
    assert found_lines(check, source, platform) == everywhere != []


MAGMA_WITHOUT_JAX = """\
import unittest

import jax
from jax._src.lib import gpu_solver


class SchurTest(unittest.TestCase):
    def test_schur_without_magma(self):
        if gpu_solver.has_magma():
            self.skipTest("another test covers MAGMA")
        jax.scipy.linalg.schur(jax.numpy.eye(3))  # found
"""


def test_without_jax_jaxs_own_magma_probe_is_inexact_too(python_without_jax: str) -> None:
    # read from the import statement: `jax._src.lib.gpu_solver.has_magma`, which jedi, where
    # jax is installed, follows to jaxlib's; no MAGMA can be a GPU without it
    for target in ("cuda", "rocm", "tpu"):
        findings = make_engine((target,), python_without_jax).check(MAGMA_WITHOUT_JAX, None).findings
        assert [(f.span.line, f.resolved_by) for f in findings] == [
            (n, "imports") for n in marked_lines(MAGMA_WITHOUT_JAX)
        ], target


VERSION = """\
import jax
import jax.numpy as jnp


def tpu_version():
    kind = jax.devices()[0].device_kind
    if "TPU" not in kind:
        return -1
    return int(kind[-1])


def spectrum(x):
    if tpu_version() >= 5:
        return jnp.linalg.eigvals(x)  # found on tpu
    return x


def older(q, k, v):
    # -1 off TPU is <= 4: true everywhere, and on a TPU too
    if tpu_version() <= 4:
        return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # found
    return q
"""


@pytest.mark.parametrize("target", ["cpu", "tpu"])
def test_a_number_returned_by_platform_is_compared_where_each_return_is_reached(
    check: CheckFn, target: str
) -> None:
    # only a TPU reaches the last return, and only there can the version be >= 5
    assert found_lines(check, VERSION, target) == marked_lines(VERSION, target)


IMPORTED = """\
import jax.numpy as jnp
import helpers
import mylib.utils
import mylib.utils as mu
from mylib.utils import on_tpu


def by_name(x):
    if on_tpu():
        return x
    return jnp.linalg.eigvals(x)


def by_module(x):
    if helpers.on_tpu():
        return x
    return jnp.linalg.eigvals(x)


def by_alias(x):
    if mu.on_tpu():
        return x
    return jnp.linalg.eigvals(x)


def by_dotted_path(x):
    if mylib.utils.on_tpu():
        return x
    return jnp.linalg.eigvals(x)


def by_missing_module(x):
    if mylib.other.on_tpu():
        return x
    return jnp.linalg.eigvals(x)  # found


def by_package(x):
    if mylib.on_tpu():
        return x
    return jnp.linalg.eigvals(x)  # found
"""


def test_an_imported_predicate_is_read_unless_the_module_rebinds_it(check: CheckFn, tmp_path: Path) -> None:
    predicate = "import jax\n\n\ndef on_tpu():\n    return jax.default_backend() == 'tpu'\n"
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("")
    (tmp_path / "mylib" / "utils.py").write_text(predicate)
    (tmp_path / "helpers.py").write_text(predicate)
    path = str(tmp_path / "app.py")
    # `mylib.other` is no module of the project, and the package defines no `on_tpu`
    assert found_lines(check, IMPORTED, "tpu", path) == marked_lines(IMPORTED)
    rebound = IMPORTED + "\n\non_tpu = lambda: False\nhelpers = None\nmu = None\nmylib = None\n"
    calls = [n for n, line in enumerate(IMPORTED.splitlines(), 1) if "eigvals" in line]
    assert found_lines(check, rebound, "tpu", path) == calls


UTILS = """\
import jax

_TPU = "tpu"


class Timer:
    def __enter__(self):
        return self


def on_tpu():
    return jax.default_backend() == _TPU


def describe(results)
    return {k: v for k, v in results.items()}
"""

APP = """\
import jax.numpy as jnp
from mylib import utils
from mylib.utils import on_tpu


def spectra(xs):
    if on_tpu():
        return xs
    return [jnp.linalg.eigvals(x) for x in xs]


def spectrum(x):
    return x if utils.on_tpu() else jnp.linalg.eigvals(x)
"""


def test_an_imported_predicate_is_read_from_its_own_statements(check: CheckFn, tmp_path: Path) -> None:
    """The predicate is read with the module's own statements (the constant it compares
    with), not its other defs and classes: one being written (the module does not parse as
    it is) leaves the predicate read. The file is read again once it changes."""
    (tmp_path / "mylib").mkdir()
    (tmp_path / "mylib" / "__init__.py").write_text("")
    utils = tmp_path / "mylib" / "utils.py"
    utils.write_text(UTILS)
    path = str(tmp_path / "app.py")
    assert found_lines(check, APP, "tpu", path) == []
    utils.write_text(UTILS.replace('_TPU = "tpu"', '_TPU = "cuda"'))
    assert found_lines(check, APP, "tpu", path) == [9, 13]


# modelled on modichirag/GSM-VI gsmvi/bam.py (`get_sqrt`: a host callback on gpu, jax's
# `sqrtm` on cpu, a bare `raise` elsewhere), written for a jax that had
# `jax.lib.xla_bridge.get_backend` (gone from jax 0.8; the suite's jax lacks it)
OLDER_BACKEND = """\
import jax
from jax.lib import xla_bridge
from jax.scipy.linalg import sqrtm

from mylib import xla_bridge as own_bridge


def get_sqrt(m):
    if xla_bridge.get_backend().platform == "gpu":
        shape = jax.ShapeDtypeStruct(m.shape, m.dtype)
        return jax.pure_callback(host_sqrtm, shape, m)
    elif xla_bridge.get_backend().platform == "cpu":
        return sqrtm(m)
    else:
        raise ValueError("gpu or cpu only")


def off_cpu(m):
    if xla_bridge.get_backend().platform != "cpu":
        return sqrtm(m)  # found
    return m


def project_bridge(m):
    if own_bridge.get_backend().platform != "cpu":
        return m
    return sqrtm(m)  # found
"""


def test_a_backend_test_of_an_older_jax_is_read_as_spelled(check: CheckFn) -> None:
    """A name of the guards' vocabulary the installed jax lacks is read as its jax import
    spells it; a project module of the same name is no backend test."""
    assert found_lines(check, OLDER_BACKEND, "tpu") == marked_lines(OLDER_BACKEND)


# every TPU's device kind holds "TPU" ("TPU v4", "TPU v5 lite", "TPU7x") and no other
# platform's does: `"TPU" in kind` is false off TPU and `"TPU" not in kind` false on it;
# modelled on the tuned-block lookups of Pallas attention kernels (`if "TPU" not in
# jax.devices()[0].device_kind: return DEFAULT_Q_BLOCK, DEFAULT_KV_BLOCK`)
KIND_TEXTS = """\
import jax
import jax.numpy as jnp


def fallback(x):
    if "TPU" not in jax.devices()[0].device_kind:
        return jnp.linalg.eig(x)
    return x


def lowered(x):
    kind = jax.devices()[0].device_kind.lower()
    if "tpu" not in kind:
        return jnp.linalg.eig(x)
    return x


def upper(x):
    if "TPU" not in jax.devices()[0].device_kind.upper().strip():
        return jnp.linalg.eig(x)
    return x


def wrong_case(x):
    # "tpu" is in no raw kind, a TPU's included
    if "tpu" not in jax.devices()[0].device_kind:
        return jnp.linalg.eig(x)  # found on tpu
    return x


def longer(x):
    # "TPU v4" is not in a TPU v5's kind
    if "TPU v4" not in jax.devices()[0].device_kind:
        return jnp.linalg.eig(x)  # found on tpu
    return x


def starts(x):
    if not jax.devices()[0].device_kind.startswith("TPU"):
        return jnp.linalg.eig(x)
    return x


def equal(x):
    if jax.devices()[0].device_kind != "TPU":
        return jnp.linalg.eig(x)  # found on tpu
    return x


def tpu_only(q, k, v):
    if "TPU" in jax.devices()[0].device_kind:
        return q
    return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # found on cpu
"""


@pytest.mark.parametrize("target", ["cpu", "tpu"])
def test_tpu_in_a_device_kind_is_true_on_tpu_alone(check: CheckFn, target: str) -> None:
    assert found_lines(check, KIND_TEXTS, target) == marked_lines(KIND_TEXTS, target)


CONSTANT = """\
import jax.numpy as jnp

DEBUG = False
SCENE = "synthetic"
SCENES = ("synthetic", "real360")
MODE = "fast"
CACHE = None

if False:
    jnp.linalg.eigvals(jnp.ones((2, 2)))

if DEBUG:
    jnp.linalg.eigvals(jnp.ones((2, 2)))

if not DEBUG:
    jnp.linalg.eigvals(jnp.ones((2, 2)))  # found

if SCENE == "synthetic":
    jnp.linalg.eigvals(jnp.ones((2, 2)))  # found
elif SCENE == "forwardfacing" or SCENE == "real360":

    def principal_axes(t):
        return jnp.linalg.eig(t.T @ t)

    principal_axes(jnp.ones((2, 2)))

if SCENE in SCENES:
    jnp.linalg.eigvals(jnp.ones((2, 2)))  # found
if "llff" in SCENES:
    jnp.linalg.eigvals(jnp.ones((2, 2)))

if CACHE is None:
    jnp.linalg.eigvals(jnp.ones((2, 2)))  # found
else:
    jnp.linalg.eigvals(jnp.ones((2, 2)))

if MODE == "slow":
    jnp.linalg.eigvals(jnp.ones((2, 2)))  # found


def set_mode(mode):
    global MODE
    MODE = mode


def run(kind="synthetic"):
    if kind != "synthetic":
        jnp.linalg.eigvals(jnp.ones((2, 2)))  # found
    size = 3
    if size > 2:
        jnp.linalg.eigvals(jnp.ones((2, 2)))  # found
    if size == 2:
        jnp.linalg.eigvals(jnp.ones((2, 2)))
    label = "a"
    for label in ("a", "b"):
        if label == "b":
            jnp.linalg.eigvals(jnp.ones((2, 2)))  # found
    n = 0
    n += 1
    if n == 0:
        jnp.linalg.eigvals(jnp.ones((2, 2)))  # found


def search(xs):
    found = False

    def visit(x):
        nonlocal found
        found = True

    for x in xs:
        visit(x)
    if found:
        jnp.linalg.eigvals(jnp.ones((2, 2)))  # found
"""


def test_a_test_of_constants_rules_out_the_branches_that_never_run(check: CheckFn) -> None:
    assert found_lines(check, CONSTANT, "tpu") == marked_lines(CONSTANT)
