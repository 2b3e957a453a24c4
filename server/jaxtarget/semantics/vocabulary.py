"""The words real JAX code tests the backend and leaves a test with, named once.

jax's backend queries (``jax.default_backend()``, device lists, the backend object),
jax's test-util predicates and decorators (``jtu.is_device_cuda()``,
``@jtu.run_on_devices``), test runners that run a function only on some platforms,
the calls that end a test (``pytest.skip``, ``self.skipTest``), and the exception
classes a handler must catch to see each kind of failure. Qualified names: the
semantic layer resolves a load to one of these through the resolver, never by its
terminal name. ``conditions.py`` reads what a test made of them says about the backend.
"""

from __future__ import annotations

import ast

#: JAX's backend queries and test vocabulary; the semantic layer resolves loads of these names.
DEFAULT_BACKEND = "jax.default_backend"
_JTU = "jax._src.test_util"
#: calls whose value is the name of the backend (torch_xla's PJRT device type, "TPU" or
#: "CUDA", is the device JAX runs on beside it: torch_xla's own Pallas tests skip on it)
BACKEND_CALLS = frozenset({DEFAULT_BACKEND, f"{_JTU}.device_under_test", "torch_xla.runtime.device_type"})
#: calls whose result's ``.platform`` is the backend's name
BACKEND_OBJECTS = frozenset(
    {"jax.extend.backend.get_backend", "jax.lib.xla_bridge.get_backend", "jax._src.xla_bridge.get_backend"}
)
#: calls returning a list of devices (their ``.platform`` is the backend's name)
DEVICE_LISTS = frozenset({"jax.devices", "jax.local_devices"})
#: predicate -> (platforms where it can be true, whether it is false everywhere else)
PREDICATES: dict[str, tuple[frozenset[str], bool]] = {
    f"{_JTU}.is_device_cuda": (frozenset({"cuda"}), True),
    f"{_JTU}.is_device_rocm": (frozenset({"rocm"}), True),
    f"{_JTU}.is_device_tpu": (frozenset({"tpu"}), True),
    f"{_JTU}.is_device_tpu_at_least": (frozenset({"tpu"}), False),
    f"{_JTU}.is_cuda_compute_capability_at_least": (frozenset({"cuda"}), False),
    f"{_JTU}.is_cuda_compute_capability_equal": (frozenset({"cuda"}), False),
    f"{_JTU}.is_cuda_version_at_least": (frozenset({"cuda"}), False),
    # capability probes that can only be true on a GPU
    "jaxlib.gpu_solver.has_magma": (frozenset({"cuda", "rocm"}), False),
    "jax._src.lib.gpu_solver.has_magma": (frozenset({"cuda", "rocm"}), False),
}
#: calls that raise unless JAX runs on one of these platforms (capability checks)
RAISERS: dict[str, frozenset[str]] = {
    "jax._src.cudnn.fused_attention_stablehlo.check_cudnn_version": frozenset({"cuda"}),
}
#: methods of test base classes that run a function argument only on some platforms (None: only
#: on the platform its test data names, which the calling code does not spell)
RUNNERS: dict[str, frozenset[str] | None] = {
    # skipTest unless the backend is the `platform` recorded in the serialized test data
    "jax._src.internal_test_util.export_back_compat_test_util.CompatTestBase.run_one_test": None,
}
#: the classes those methods belong to: a test class names one as its base
RUNNER_CLASSES = frozenset(q.rsplit(".", 1)[0] for q in RUNNERS)
DEVICE_MATCHES = f"{_JTU}.test_device_matches"
RUN_ON_DEVICES = f"{_JTU}.run_on_devices"
SKIP_ON_DEVICES = f"{_JTU}.skip_on_devices"
GUARD_NAMES: frozenset[str] = frozenset(
    {
        *BACKEND_CALLS,
        *BACKEND_OBJECTS,
        *DEVICE_LISTS,
        *PREDICATES,
        *RAISERS,
        *RUNNER_CLASSES,
        DEVICE_MATCHES,
        RUN_ON_DEVICES,
        SKIP_ON_DEVICES,
    }
)

EXIT_CALLS = frozenset({"skip", "exit", "fail", "skipTest"})
SKIP_IF = frozenset({"skipif", "skipIf"})
SKIP_ALWAYS = frozenset({"skip"})
SETUP_METHODS = ("setUp", "setUpClass")

#: Words whose lines must be parsed so that guards can be read.
SETUP_WORDS: tuple[str, ...] = (
    "import",
    "pytestmark",
    "setUpModule",
    # a small helper that skips the test calling it
    "skipTest",
    "SkipTest",
    *sorted({q.rsplit(".", 1)[-1] for q in (*GUARD_NAMES, *RUNNERS)} | {"platform"}),
)

#: what a handler must catch to see a failed lowering (``NotImplementedError``)
LOWERING_CATCHERS = frozenset({"NotImplementedError", "RuntimeError", "Exception", "BaseException"})
#: what a handler must catch to see a trace-time capability error (``RuntimeError``)
TRACE_CATCHERS = frozenset({"RuntimeError", "Exception", "BaseException"})
#: what a handler must catch to see the use of an API the installed jax lacks
ABSENCE_CATCHERS = frozenset({"TypeError", "AttributeError", "ImportError", "Exception", "BaseException"})


def terminal(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def catches(kind: ast.expr | None, names: frozenset[str]) -> bool:
    """Whether an ``except kind`` clause catches an exception of one of these classes (bare: yes)."""
    if kind is None:
        return True
    if isinstance(kind, ast.Tuple):
        return any(catches(e, names) for e in kind.elts)
    return terminal(kind) in names
