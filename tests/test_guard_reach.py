"""Which backends reach a call, read from the guards in and around its function.

Each case is a module analysed by the real engine (real jedi, the installed jax) for the
targets cpu, cuda and tpu. The call is ``lax.pbroadcast``, which lowers only on the GPU
platforms: a finding names the targets among cpu and tpu that still reach it, so the
expected (line, failing targets) pairs say which platforms each guard lets through.
"""

from __future__ import annotations

import textwrap

import pytest

from .conftest import CheckFn

TARGETS = ("cpu", "cuda", "tpu")
BOTH = ("cpu", "tpu")

HEAD = """\
import os
import unittest

import jax
import pytest
from jax import lax
from jax._src import test_util as jtu
"""

#: name -> (module after HEAD, [(line in that text, failing targets)])
CASES: dict[str, tuple[str, list[tuple[int, tuple[str, ...]]]]] = {
    # ------------------------------------------------------------ early exits in try statements
    # the body leaves off GPU, and so does the handler: only GPUs get past the try
    "try-body-and-handler-leave": (
        """
        def spread(x):
            try:
                if jax.default_backend() != "gpu":
                    return x
            except RuntimeError:
                return x
            return lax.pbroadcast(x, "i", 0)
        """,
        [],
    ),
    # a handler that falls through lets every platform past, whatever the body did
    "try-handler-falls-through": (
        """
        def spread(x):
            try:
                if jax.default_backend() != "gpu":
                    raise RuntimeError("no gpu")
            except RuntimeError:
                pass
            return lax.pbroadcast(x, "i", 0)
        """,
        [(8, BOTH)],
    ),
    # the else branch runs after the body: its exit on tpu holds past the try
    "try-else-leaves-on-tpu": (
        """
        def spread(x):
            try:
                y = x + 1
            except ValueError:
                return x
            else:
                if jax.default_backend() == "tpu":
                    return y
            return lax.pbroadcast(y, "i", 0)
        """,
        [(10, ("cpu",))],
    ),
    # ------------------------------------------------------------ exits and statements in order
    # the skip after an ordinary statement still guards what follows
    "skip-after-a-statement": (
        """
        def test_spread():
            x = jax.numpy.ones(4)
            if jax.default_backend() != "gpu":
                pytest.skip("gpu only")
            lax.pbroadcast(x, "i", 0)
        """,
        [],
    ),
    "assert-on-tpu": (
        """
        def spread(x):
            assert jax.default_backend() == "tpu", "written for TPU pods"
            return lax.pbroadcast(x, "i", 0)
        """,
        [(4, ("tpu",))],
    ),
    "fail-off-tpu": (
        """
        def test_spread(self):
            x = 1
            if jax.default_backend() == "tpu":
                self.fail("not on tpu")
            lax.pbroadcast(x, "i", 0)
        """,
        [(6, ("cpu",))],
    ),
    # a statement after the call does not guard it
    "exit-after-the-call": (
        """
        def spread(x):
            lax.pbroadcast(x, "i", 0)
            if jax.default_backend() != "gpu":
                return x
            return x
        """,
        [(3, BOTH)],
    ),
    # a module that skips itself off GPU: the functions defined below it
    "module-level-skip": (
        """
        if jax.default_backend() != "gpu":
            pytest.skip("gpu only", allow_module_level=True)


        def test_spread():
            lax.pbroadcast(1, "i", 0)
        """,
        [],
    ),
    "module-level-skip-after-the-def": (
        """
        def spread(x):
            return lax.pbroadcast(x, "i", 0)


        if jax.default_backend() != "gpu":
            raise unittest.SkipTest("gpu only")
        """,
        [(3, BOTH)],
    ),
    # a test module's helper runs where the module calls it: past the skip
    "module-level-skip-before-the-use": (
        """
        def spread(x):
            return lax.pbroadcast(x, "i", 0)


        if jax.default_backend() != "gpu":
            raise unittest.SkipTest("gpu only")

        ONES = spread(jax.numpy.ones(4))
        """,
        [],
    ),
    # ------------------------------------------------------------ helpers of the module
    # a helper without return that skips: it comes back only where it did not skip
    "helper-that-skips": (
        """
        def _require_gpu():
            if jax.default_backend() != "gpu":
                pytest.skip("gpu only")


        def test_spread():
            _require_gpu()
            lax.pbroadcast(1, "i", 0)
        """,
        [],
    ),
    # a helper with a return statement is not read as a skip
    "helper-with-return": (
        """
        def _require_gpu():
            if jax.default_backend() != "gpu":
                pytest.skip("gpu only")
            return True


        def test_spread():
            _require_gpu()
            lax.pbroadcast(1, "i", 0)
        """,
        [(10, BOTH)],
    ),
    # a helper that calls itself is read once
    "recursive-helper": (
        """
        def _visit(tree):
            if tree.children:
                _visit(tree.children[0])


        def test_spread(tree):
            _visit(tree)
            lax.pbroadcast(1, "i", 0)
        """,
        [(9, BOTH)],
    ),
    # cudnn's version check raises off cuda (jax._src.cudnn.fused_attention_stablehlo)
    "cudnn-version-check": (
        """
        from jax._src.cudnn.fused_attention_stablehlo import check_cudnn_version


        def attention(x):
            check_cudnn_version()
            return lax.pbroadcast(x, "i", 0)
        """,
        [],
    ),
    # ------------------------------------------------------------ decorators
    "skip-decorator": (
        """
        @unittest.skip("flaky")
        def test_spread():
            lax.pbroadcast(1, "i", 0)


        @pytest.mark.skip
        def test_bare():
            lax.pbroadcast(1, "i", 0)


        @pytest.mark.skip(reason="flaky")
        def test_reason():
            lax.pbroadcast(1, "i", 0)


        @jax.jit
        def spread(x):
            return lax.pbroadcast(x, "i", 0)
        """,
        [(19, BOTH)],
    ),
    "skip-unless-decorator": (
        """
        @unittest.skipUnless(jax.default_backend() == "tpu", "tpu only")
        def test_spread():
            lax.pbroadcast(1, "i", 0)


        @unittest.skipIf(jax.default_backend() == "tpu", "not on tpu")
        def test_not_tpu():
            lax.pbroadcast(1, "i", 0)
        """,
        [(4, ("tpu",)), (9, ("cpu",))],
    ),
    "run-on-and-skip-on-devices": (
        """
        @jtu.run_on_devices("tpu")
        def test_spread():
            lax.pbroadcast(1, "i", 0)


        @jtu.skip_on_devices("tpu")
        def test_not_tpu():
            lax.pbroadcast(1, "i", 0)
        """,
        [(4, ("tpu",)), (9, ("cpu",))],
    ),
    # ------------------------------------------------------------ test classes
    # the skip in setUp of a base class three levels up
    "setup-of-a-far-base": (
        """
        class GpuTest(unittest.TestCase):
            def setUp(self):
                super().setUp()
                if jax.default_backend() != "gpu":
                    self.skipTest("gpu only")


        class CollectiveTest(GpuTest):
            pass


        class BroadcastTest(CollectiveTest):
            pass


        class SpreadTest(BroadcastTest):
            shape = (4,)

            def test_spread(self):
                lax.pbroadcast(1, "i", 0)
        """,
        [],
    ),
    # classes that name each other as bases (an edit in progress) are read without looping
    "bases-in-a-loop": (
        """
        class SpreadTest(BroadcastTest):
            def test_spread(self):
                lax.pbroadcast(1, "i", 0)


        class BroadcastTest(SpreadTest):
            pass
        """,
        [(4, BOTH)],
    ),
    # setUpClass skips on tpu; a class attribute before it is no method
    "setup-class": (
        """
        class SpreadTest(unittest.TestCase):
            shape = (4,)

            @classmethod
            def setUpClass(cls):
                if jax.default_backend() == "tpu":
                    raise unittest.SkipTest("not on tpu")

            def test_spread(self):
                lax.pbroadcast(1, "i", 0)
        """,
        [(11, ("cpu",))],
    ),
    "setup-module": (
        """
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"


        def setUpModule():
            if jax.default_backend() == "tpu":
                raise unittest.SkipTest("not on tpu")


        def test_spread():
            lax.pbroadcast(1, "i", 0)


        def helper(x):
            if x:
                return x
            return x
        """,
        [(11, ("cpu",))],
    ),
    "pytestmark-list": (
        """
        os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
        pytestmark = [pytest.mark.skipif(jax.default_backend() == "tpu", reason="not on tpu")]


        def test_spread():
            lax.pbroadcast(1, "i", 0)
        """,
        [(7, ("cpu",))],
    ),
    # ------------------------------------------------------------ expressions
    "lambda-bound-to-a-name": (
        """
        spread = lambda x: lax.pbroadcast(x, "i", 0)
        both = (lambda x: lax.pbroadcast(x, "i", 0))(1)
        """,
        [(2, BOTH), (3, BOTH)],
    ),
    # a test after the call in an `and` chain does not guard it
    "and-chain-after-the-call": (
        """
        def spread(x):
            ok = jax.default_backend() != "tpu" and lax.pbroadcast(x, "i", 0) is not None and x
            late = lax.pbroadcast(x, "i", 0) is not None and jax.default_backend() == "gpu"
            either = jax.default_backend() == "tpu" or lax.pbroadcast(x, "i", 0)
            return ok, late, either
        """,
        [(3, ("cpu",)), (4, BOTH), (5, ("cpu",))],
    ),
    "conditional-expression": (
        """
        def spread(x):
            a = lax.pbroadcast(x, "i", 0) if jax.default_backend() == "tpu" else x
            b = x if jax.default_backend() == "tpu" else lax.pbroadcast(x, "i", 0)
            return a, b
        """,
        [(3, ("tpu",)), (4, ("cpu",))],
    ),
    "while-on-tpu": (
        """
        def spread(x, steps):
            while jax.default_backend() == "tpu" and steps:
                x = lax.pbroadcast(x, "i", 0)
                steps -= 1
            return x
        """,
        [(4, ("tpu",))],
    ),
    # ------------------------------------------------------------ what the path to the call assumes
    # inside `if collective:`, the earlier `collective and not gpu` exit holds
    "assumed-branch": (
        """
        def spread(x, collective):
            if collective and jax.default_backend() != "gpu":
                raise NotImplementedError("the collective path needs a GPU")
            if collective:
                return lax.pbroadcast(x, "i", 0)
            return x
        """,
        [],
    ),
    "assumed-else-branch": (
        """
        def spread(x, local):
            if not local and jax.default_backend() == "tpu":
                raise NotImplementedError("not on tpu")
            if local:
                return x
            else:
                return lax.pbroadcast(x, "i", 0)
        """,
        [(8, ("cpu",))],
    ),
    "assumed-both-parts": (
        """
        def spread(x, collective, sharded):
            if collective and jax.default_backend() == "tpu":
                raise NotImplementedError("not on tpu")
            if sharded and jax.default_backend() == "cpu":
                raise NotImplementedError("not on cpu")
            if collective and sharded:
                return lax.pbroadcast(x, "i", 0)
            return x
        """,
        [],
    ),
    "assumed-negation": (
        """
        def spread(x, local):
            if not local and jax.default_backend() == "tpu":
                raise NotImplementedError("not on tpu")
            if not local:
                return lax.pbroadcast(x, "i", 0)
            return x
        """,
        [(6, ("cpu",))],
    ),
    "assumed-conditional-expression": (
        """
        def spread(x, collective):
            if collective and jax.default_backend() == "tpu":
                raise NotImplementedError("not on tpu")
            return lax.pbroadcast(x, "i", 0) if collective else x
        """,
        [(5, ("cpu",))],
    ),
    "assumed-while": (
        """
        def spread(x, collective):
            if collective and jax.default_backend() == "tpu":
                raise NotImplementedError("not on tpu")
            while collective:
                x = lax.pbroadcast(x, "i", 0)
            return x
        """,
        [(6, ("cpu",))],
    ),
    # ------------------------------------------------------------ functions handed to a test runner
    # CompatTestBase.run_one_test runs its function only on the platform its data was
    # recorded on (jax-ml/jax tests/export_back_compat_test.py): a platform the code does
    # not spell, so no target reaches the function it is handed
    "run-one-test": (
        """
        from jax._src.internal_test_util import export_back_compat_test_util as bctu


        class CompatTest(bctu.CompatTestBase):
            def test_lambda(self):
                data = self.load_testdata(info)
                self.run_one_test(lambda x: lax.pbroadcast(x, "i", 0), data=data)

            def test_nested(self, dtype):
                def func(x):
                    return lax.pbroadcast(x, "i", 0)

                self.run_one_test(func, self.load_testdata(dtype), polymorphic_shapes=("b, ...",))

            def test_keywords(self):
                self.run_one_test(func=lambda x: lax.pbroadcast(x, "i", 0), data=self.load_testdata(info))

            def test_in_a_subtest(self):
                with self.subTest("recorded"):
                    self.run_one_test(lambda x: lax.pbroadcast(x, "i", 0), data)

            def test_argument_computed_first(self, func):
                # only the function runs under the runner: its other arguments run everywhere
                self.run_one_test(func, data=lax.pbroadcast(1, "i", 0))

            def test_another_objects_runner(self, other):
                other.run_one_test(lambda x: lax.pbroadcast(x, "i", 0), data)

            def test_function_run_directly(self):
                def func(x):
                    return lax.pbroadcast(x, "i", 0)

                return func(jax.jit(func)(1))


        class OwnRunnerTest(bctu.CompatTestBase):
            def run_one_test(self, func, data):
                return func(data)

            def test_own_runner(self):
                self.run_one_test(lambda x: lax.pbroadcast(x, "i", 0), data)


        def check_recorded(self, data):
            self.run_one_test(lambda x: lax.pbroadcast(x, "i", 0), data)
            return list(map(lambda x: lax.pbroadcast(x, "i", 0), data))
        """,
        [(25, BOTH), (28, BOTH), (32, BOTH), (42, BOTH), (46, BOTH), (47, BOTH)],
    ),
    # a backend test bound to a name first is read as the guard, not assumed true
    "backend-test-bound-to-a-name": (
        """
        def spread(x):
            on_tpu = jax.default_backend() == "tpu"
            if on_tpu:
                return lax.pbroadcast(x, "i", 0)
            if not on_tpu:
                return lax.pbroadcast(x, "i", 1)
            return x
        """,
        [(5, ("tpu",)), (7, ("cpu",))],
    ),
    # a nested function that its block never names again (registered by its decorator):
    # the skip after it is no guard; the one before it is
    "nested-def-never-named-again": (
        """
        def register(table):
            if jax.default_backend() == "tpu":
                return table

            @table.register("spread")
            def spread(x):
                return lax.pbroadcast(x, "i", 0)

            if jax.default_backend() != "gpu":
                raise NotImplementedError("gpu only")
            return table
        """,
        [(8, ("cpu",))],
    ),
    # ------------------------------------------------------------ meant to fail
    "inside-assert-raises": (
        """
        class SpreadTest(unittest.TestCase):
            def test_spread_raises(self):
                with self.assertRaises(NotImplementedError):
                    lax.pbroadcast(1, "i", 0)

            def test_spread_under_a_mesh(self):
                with mesh:
                    lax.pbroadcast(1, "i", 0)
        """,
        [(9, BOTH)],
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_the_targets_that_reach_the_call(check: CheckFn, name: str) -> None:
    body, expected = CASES[name]
    source = HEAD + textwrap.dedent(body)
    first = HEAD.count("\n")  # line numbers of the cases count from the line after HEAD
    found = check(source, TARGETS, "spread_test.py").findings
    got = [(f.span.line - first, f.failing) for f in found if f.code == "JT001"]
    assert got == expected, "\n".join(f"{i + 1:3} {t}" for i, t in enumerate(source.splitlines()[first:]))


def test_a_library_function_runs_wherever_importers_call_it(check: CheckFn) -> None:
    """The module's own call past its skip does not bound the function: importers call it too."""
    body, _ = CASES["module-level-skip-before-the-use"]
    source = HEAD + textwrap.dedent(body)
    found = check(source, TARGETS, "mylib/ops.py").findings
    assert [(f.code, f.span.line - HEAD.count("\n"), f.failing) for f in found] == [("JT001", 3, BOTH)]
