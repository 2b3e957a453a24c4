"""Test classes whose base class, in another module of the project, skips in ``setUp``.

Modelled on jax-ml/jax's Pallas tests: ``tests/pallas/tpu_ops_test.py`` declares ``class
OpsTest(ptu.PallasTPUTest)`` after ``from jax._src.pallas import pallas_test_util as ptu``,
and ``pallas_test_util.PallasTPUTest.setUp`` skips off TPU unless ``self.INTERPRET``;
``tests/pallas/pallas_test.py``'s ``PallasControlFlowTest`` skips in interpret mode and has a
subclass ``PallasControlFlowInterpretTest`` with ``INTERPRET = True``, which runs every test
again. The harness here is written for this suite: real files in a project folder, real
jedi, the real engine. ``pl.pallas_call`` without ``interpret=`` fails to lower on cpu.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .conftest import CheckFn, found_lines, marked_lines

HARNESS = """\
import unittest

from jax._src import test_util as jtu


class PallasTest(unittest.TestCase):
    INTERPRET: bool = False

    def setUp(self):
        if not jtu.test_device_matches(["cpu"]) and self.INTERPRET:
            self.skipTest("Only run interpret tests on CPU.")
        if not self.INTERPRET and jtu.test_device_matches(["cpu"]):
            self.skipTest("On CPU the test works only in interpret mode")
        super().setUp()


class PallasTPUTest(PallasTest):
    def setUp(self):
        if not jtu.test_device_matches(["tpu"]) and not self.INTERPRET:
            self.skipTest("Test requires TPUs")
        super().setUp()


class PlainTest(unittest.TestCase):
    def setUp(self):
        super().setUp()


@jtu.run_on_devices("tpu")
class TPUOnlyTest(unittest.TestCase):
    pass
"""

HEAD = """\
import jax
from jax._src import test_util as jtu
from jax.experimental import pallas as pl

{imports}


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def shaped(x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)

"""

TESTS = """
class OpsTest({base}):
    def test_copy(self, x):
        return pl.pallas_call(kernel, out_shape=shaped(x))(x){mark}

    def test_copy_unless_interpreted(self, x):
        if jtu.test_device_matches(["cpu"]) and not self.INTERPRET:
            self.skipTest("compiled kernels need an accelerator")
        return pl.pallas_call(kernel, out_shape=shaped(x))(x){mark_body}
"""

INTERPRETED = """

class OpsInterpretTest(OpsTest):
    INTERPRET = True
"""

SKIPS_INTERPRETED = """

class ControlFlowTest({base}):
    def setUp(self):
        super().setUp()
        if self.INTERPRET:
            self.skipTest("Control flow not supported in interpret mode yet.")

    def test_loop(self, x):
        return pl.pallas_call(kernel, out_shape=shaped(x))(x)


class ControlFlowInterpretTest(ControlFlowTest):
    INTERPRET = True
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'kernels'\n")
    (tmp_path / "kernels").mkdir()
    (tmp_path / "kernels" / "__init__.py").write_text("")
    (tmp_path / "kernels" / "test_util.py").write_text(HARNESS)
    (tmp_path / "tests").mkdir()
    return tmp_path / "tests" / "ops_test.py"


@pytest.mark.parametrize(
    ("imports", "base", "rest", "found"),
    [
        # PallasTPUTest skips off TPU: compiled kernels never reach cpu
        ("from kernels import test_util as ptu", "ptu.PallasTPUTest", "", ()),
        ("from kernels.test_util import PallasTPUTest", "PallasTPUTest", "", ()),
        ("import kernels.test_util as ptu", "ptu.PallasTPUTest", "", ()),
        # PallasTest skips on CPU unless interpreted, and nothing here interprets
        ("from kernels import test_util as ptu", "ptu.PallasTest", "", ()),
        # an interpret subclass runs the tests on cpu again: its setUp lets cpu through, and
        # the kernels are called without interpret=True; the test that skips compiled
        # kernels on cpu sees INTERPRET = True there and runs too
        ("from kernels import test_util as ptu", "ptu.PallasTPUTest", INTERPRETED, ("call", "body")),
        # a base that skips nothing, and has no INTERPRET: the test's own skip is not decided
        ("from kernels import test_util as ptu", "ptu.PlainTest", "", ("call", "body")),
        # a base the project does not define: nothing read
        ("import unittest", "unittest.TestCase", "", ("call", "body")),
        # a base another module decorates to run on TPU only
        ("from kernels import test_util as ptu", "ptu.TPUOnlyTest", "", ()),
    ],
)
def test_a_setup_skip_in_a_base_class_of_another_module(
    check: CheckFn, tmp_path: Path, imports: str, base: str, rest: str, found: tuple[str, ...]
) -> None:
    test = _project(tmp_path)
    mark = "  # found" if "call" in found else ""
    mark_body = "  # found" if "body" in found else ""
    text = HEAD.format(imports=imports) + TESTS.format(base=base, mark=mark, mark_body=mark_body) + rest
    test.write_text(text)
    lines = found_lines(check, text, "cpu", str(test))
    assert lines == marked_lines(text) and len(lines) == len(found)
    assert found_lines(check, text, "tpu", str(test)) == []


@pytest.mark.parametrize(("base", "found"), [("ptu.PallasTest", False), ("ptu.PlainTest", True)])
def test_every_class_that_runs_a_test_is_read(check: CheckFn, tmp_path: Path, base: str, found: bool) -> None:
    """``ControlFlowTest`` skips on cpu through its base unless interpreted, and skips itself
    when interpreted; its interpret subclass runs the test again: neither reaches cpu. Over
    a base that skips nothing, the compiled class reaches cpu."""
    test = _project(tmp_path)
    text = HEAD.format(imports="from kernels import test_util as ptu") + SKIPS_INTERPRETED.format(base=base)
    test.write_text(text)
    lines = found_lines(check, text, "cpu", str(test))
    assert lines == ([text.splitlines().index("    def test_loop(self, x):") + 2] if found else [])


GRANDCHILD = """

class OpsTest(ptu.PallasTPUTest):
    def test_copy(self, x):
        out = pl.pallas_call(kernel, out_shape=shaped(x))(x){mark}
        return out


class MiddleTest(OpsTest):
    pass


class OpsInterpretTest(MiddleTest):
    INTERPRET = {interpret}
"""


@pytest.mark.parametrize("interpret", [True, False])
def test_a_subclass_of_a_subclass_runs_the_tests_too(check: CheckFn, tmp_path: Path, interpret: bool) -> None:
    """The interpret class derives from the tested class through another class of the module
    (``OpsInterpretTest(MiddleTest)``, ``MiddleTest(OpsTest)``): its ``INTERPRET = True``
    lets cpu past the harness's skips, and the compiled kernel fails there. With
    ``INTERPRET = False`` every class skips off TPU."""
    test = _project(tmp_path)
    mark = "  # found" if interpret else ""
    text = HEAD.format(imports="from kernels import test_util as ptu") + GRANDCHILD.format(
        mark=mark, interpret=interpret
    )
    test.write_text(text)
    lines = found_lines(check, text, "cpu", str(test))
    assert lines == marked_lines(text) and len(lines) == int(interpret)


ATTRIBUTES = """\
import os
import unittest

import jax
from jax._src import test_util as jtu


class CudnnAttention:
    is_causal: bool = False

    def attend(self, q, k, v):
        assert self.is_causal
        return jax.nn.dot_product_attention(q, k, v, is_causal=True, implementation="cudnn")  # found


class CompiledTest(unittest.TestCase):
    INTERPRET = False

    def test_attend(self, q, k, v):
        if not self.INTERPRET:
            self.skipTest("interpret mode only")
        return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")


class ConfiguredTest(unittest.TestCase):
    INTERPRET = False

    def setUp(self):
        self.INTERPRET = jtu.test_device_matches(["cpu"]) or self.INTERPRET

    def test_attend(self, q, k, v):
        if not self.INTERPRET:
            self.skipTest("interpret mode only")
        return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # found


class EnvironmentTest(unittest.TestCase):
    INTERPRET = os.environ.get("INTERPRET") == "1"

    def test_attend(self, q, k, v):
        if not self.INTERPRET:
            self.skipTest("interpret mode only")
        return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # found
"""


def test_class_attributes_are_known_only_in_tests_that_never_set_them(check: CheckFn) -> None:
    """A layer's ``is_causal: bool = False`` (praxis ``gpu_fast_attention.py``) is a default the
    instance may override: not read. A test class's ``INTERPRET = False`` is what its tests
    see, unless a method assigns ``self.INTERPRET``; one the environment sets is not known."""
    assert found_lines(check, ATTRIBUTES, "cpu") == marked_lines(ATTRIBUTES)
