"""Test classes whose base class, in another module of the project, skips in ``setUp``.

Modelled on jax-ml/jax's Pallas tests: ``tests/pallas/tpu_ops_test.py`` declares ``class
OpsTest(ptu.PallasTPUTest)`` after ``from jax._src.pallas import pallas_test_util as ptu``,
and ``pallas_test_util.PallasTPUTest.setUp`` skips off TPU unless ``self.INTERPRET``;
``tests/pallas/pallas_test.py``'s ``PallasControlFlowTest`` skips in interpret mode and has a
subclass ``PallasControlFlowInterpretTest`` with ``INTERPRET = True``, which runs every test
again. The harness here is written for this suite: real files in a project folder, real
jedi, the real engine. ``pl.pallas_call`` without ``interpret=`` fails to lower on cpu, and
each case's tests are also run by pytest on CPU with the installed jax, to check that the
tests holding a finding fail there with that error and the others pass or skip.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
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
    INTERPRET = False

    def setUp(self):
        super().setUp()


@unittest.skipUnless(jtu.test_device_matches(["tpu"]), "TPU only")
class TPUOnlyTest(unittest.TestCase):
    pass
"""

HEAD = """\
import jax
import jax.numpy as jnp
from jax._src import test_util as jtu
from jax.experimental import pallas as pl

{imports}


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def shaped(x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def block():
    return jnp.ones((8, 128), jnp.float32)

"""

TESTS = """
class OpsTest({base}):
    def test_copy(self):
        x = block()
        pl.pallas_call(kernel, out_shape=shaped(x))(x){mark}

    def test_copy_unless_interpreted(self):
        x = block()
        if jtu.test_device_matches(["cpu"]) and not self.INTERPRET:
            self.skipTest("compiled kernels need an accelerator")
        pl.pallas_call(kernel, out_shape=shaped(x))(x){mark_body}
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

    def test_loop(self):
        x = block()
        pl.pallas_call(kernel, out_shape=shaped(x))(x){mark}


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


SETUP_CASES = [
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
    # a base that skips nothing: the compiled kernel runs on cpu; the test's own skip,
    # read with the base's INTERPRET = False, keeps the other one off cpu
    ("from kernels import test_util as ptu", "ptu.PlainTest", "", ("call",)),
    # a base the project does not define: nothing read
    ("import unittest", "unittest.TestCase", "", ("call", "body")),
    # a base another module decorates to run on TPU only
    ("from kernels import test_util as ptu", "ptu.TPUOnlyTest", "", ()),
]


def _setup_case(imports: str, base: str, rest: str, found: tuple[str, ...]) -> str:
    mark = "  # found" if "call" in found else ""
    mark_body = "  # found" if "body" in found else ""
    return HEAD.format(imports=imports) + TESTS.format(base=base, mark=mark, mark_body=mark_body) + rest


def _flow_case(base: str, found: bool) -> str:
    return HEAD.format(imports="from kernels import test_util as ptu") + SKIPS_INTERPRETED.format(
        base=base, mark="  # found" if found else ""
    )


def _grandchild_case(interpret: bool) -> str:
    return HEAD.format(imports="from kernels import test_util as ptu") + GRANDCHILD.format(
        mark="  # found" if interpret else "", interpret=interpret
    )


@pytest.mark.parametrize(("imports", "base", "rest", "found"), SETUP_CASES)
def test_a_setup_skip_in_a_base_class_of_another_module(
    check: CheckFn, tmp_path: Path, imports: str, base: str, rest: str, found: tuple[str, ...]
) -> None:
    test = _project(tmp_path)
    text = _setup_case(imports, base, rest, found)
    test.write_text(text)
    lines = found_lines(check, text, "cpu", str(test))
    assert lines == marked_lines(text) and len(lines) == len(found)
    assert found_lines(check, text, "tpu", str(test)) == []


def test_a_base_class_is_read_from_a_module_in_newer_grammar(check: CheckFn, tmp_path: Path) -> None:
    """The harness module also defines a PEP 695 generic helper, which Python 3.11 does not
    parse: its base class's ``setUp`` skip is read all the same (on 3.12 and later, as always)."""
    test = _project(tmp_path)
    generic = "\n\ndef _first[T](items: list[T]) -> T:\n    return items[0]\n"
    (tmp_path / "kernels" / "test_util.py").write_text(HARNESS + generic)
    text = _setup_case("from kernels import test_util as ptu", "ptu.PallasTPUTest", "", ())
    test.write_text(text)
    assert found_lines(check, text, "cpu", str(test)) == []


@pytest.mark.parametrize(("base", "found"), [("ptu.PallasTest", False), ("ptu.PlainTest", True)])
def test_every_class_that_runs_a_test_is_read(check: CheckFn, tmp_path: Path, base: str, found: bool) -> None:
    """``ControlFlowTest`` skips on cpu through its base unless interpreted, and skips itself
    when interpreted; its interpret subclass runs the test again: neither reaches cpu. Over
    a base that skips nothing, the compiled class reaches cpu."""
    test = _project(tmp_path)
    text = _flow_case(base, found)
    test.write_text(text)
    lines = found_lines(check, text, "cpu", str(test))
    assert lines == marked_lines(text) and len(lines) == int(found)


GRANDCHILD = """

class OpsTest(ptu.PallasTPUTest):
    def test_copy(self):
        x = block()
        out = pl.pallas_call(kernel, out_shape=shaped(x))(x){mark}
        self.assertEqual(out.shape, x.shape)


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
    text = _grandchild_case(interpret)
    test.write_text(text)
    lines = found_lines(check, text, "cpu", str(test))
    assert lines == marked_lines(text) and len(lines) == int(interpret)


def _runnable() -> list[tuple[str, str]]:
    # (not the case over unittest.TestCase, whose tests read an INTERPRET it lacks)
    cases = [
        (f"setup-{n}", _setup_case(*case)) for n, case in enumerate(SETUP_CASES) if "unittest" not in case[1]
    ]
    cases += [
        (f"flow-{base}", _flow_case(base, found))
        for base, found in (("ptu.PallasTest", False), ("ptu.PlainTest", True))
    ]
    cases += [(f"grandchild-{flag}", _grandchild_case(flag)) for flag in (True, False)]
    return cases


def _test_method(lines: list[str], number: int) -> str:
    """The name of the test method line ``number`` (1-based) is in."""
    for line in reversed(lines[:number]):
        match = re.match(r"\s+def (test\w*)\(", line)
        if match:
            return match.group(1)
    raise AssertionError(f"line {number} is in no test method")


@pytest.mark.parametrize(("name", "text"), _runnable(), ids=[name for name, _ in _runnable()])
def test_the_readings_hold_when_the_tests_run_on_cpu(tmp_path: Path, name: str, text: str) -> None:
    """Each case's tests, run by pytest on CPU with the installed jax: a test method holding
    a cpu finding fails in some class with the Pallas error for CPU; every other one passes
    or is skipped, in every class that runs it."""
    test = _project(tmp_path)
    test.write_text(text)
    report = tmp_path / "outcomes.json"
    plugin = Path(__file__).parent / "idioms" / "outcomes.py"
    env = {
        **os.environ,
        "JAX_PLATFORMS": "cpu",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PYTHONPATH": os.pathsep.join([str(plugin.parent), str(tmp_path)]),
        "JAXTARGET_OUTCOMES": str(report),
        "COLUMNS": "500",
    }
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-rf",
            "--tb=no",
            "-p",
            "no:cacheprovider",
            "-p",
            "outcomes",
            str(test),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    output = proc.stdout[-3000:] + proc.stderr[-3000:]
    assert report.exists(), output
    by_method: dict[str, set[str]] = {}
    for nodeid, outcome in json.loads(report.read_text()).items():
        by_method.setdefault(nodeid.rsplit("::", 1)[1], set()).add(outcome)
    lines = text.splitlines()
    assert set(by_method) == set(re.findall(r"def (test\w*)\(", text)), output
    failing = {_test_method(lines, n) for n in marked_lines(text)}
    for method, outcomes in sorted(by_method.items()):
        if method in failing:
            assert "failed" in outcomes, (name, method, outcomes, output)
        else:
            assert outcomes <= {"passed", "skipped"}, (name, method, outcomes, output)
    # each failure is the compiled kernel's, not another error on the way to it
    failures = [line for line in proc.stdout.splitlines() if line.startswith("FAILED ")]
    assert failures or not failing, output
    for line in failures:
        assert "Only interpret mode is supported on CPU backend" in line, (name, line)


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
