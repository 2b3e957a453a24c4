"""Where devices and shardings put a computation (semantics/devices.py), read as pins.

A default device held in a module constant and read through a second name, a jit call
pinned by ``device=jax.devices("cpu")[0]``, ``in_shardings`` that mix a cpu and a tpu
device (no one platform), and ``out_shardings`` on a ``jax.local_devices(backend=...)``
device. Modelled on the example of ``jax.default_device``'s docstring
(``with jax.default_device(jax.devices("cpu")[0])``) and the ``device=`` / sharding
placements of ``jax.jit``'s documentation. Also kernels lowered for named platforms
(``jax.export.export(jax.jit(f), platforms=["tpu"])``, Pallas's ``lower_as_mlir``), and the
forms that name no platform visibly. The code
is written for this suite. Real jedi in the test interpreter, the real engine on the
tpu target: eig lowers on cpu only among these, so a call pinned to the cpu is no
finding.
"""

from __future__ import annotations

from .conftest import CheckFn, found_lines, marked_lines

PLACEMENTS = """\
import jax
import jax.numpy as jnp

cpu = jax.devices("cpu")[0]
host = cpu


def eig_on_host(a):
    with jax.default_device(host):
        return jnp.linalg.eig(a)


def eig_pinned(a):
    return jax.jit(jnp.linalg.eig, device=jax.devices("cpu")[0])(a)


def eig_mixed(a, mesh):
    on_cpu = jax.sharding.SingleDeviceSharding(cpu)
    on_tpu = jax.sharding.SingleDeviceSharding(jax.devices("tpu")[0])
    return jax.jit(jnp.linalg.eig, in_shardings=(on_cpu, on_tpu))(a)


def eig_out(a):
    here = jax.sharding.SingleDeviceSharding(jax.local_devices(backend="cpu")[0])
    return jax.jit(jnp.linalg.eig, out_shardings=here)(a)
"""


def test_only_the_call_with_no_one_platform_is_a_finding(check: CheckFn) -> None:
    assert [f.span.line for f in check(PLACEMENTS, ("tpu",)).findings] == [20]


CHAINS = """\
import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import topologies
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

d0 = jax.devices("cpu")
d1 = d0
d2 = d1
d3 = d2
m0 = Mesh(np.array(d3).reshape(-1), ("x",))
m1 = m0
far = (NamedSharding(m1, P()),)
m2 = m1
past = (NamedSharding(m2, P()),)

t0 = topologies.get_topology_desc("cpu:1x1", "cpu")
t1 = t0
t2 = t1
t3 = t2
t4 = t3
t5 = t4
t6 = t5
t7 = t6
t8 = t7
t9 = t8
on_t8 = t8.devices[0]
on_t9 = t9.devices[0]

c0 = jax.devices("cpu")[0]
c1 = c0
c2 = c1
c3 = c2
c4 = c3

looped = jax.devices("cpu")
for _ in range(2):
    looped = np.array(looped).reshape(-1)
spun = NamedSharding(Mesh(looped, ("x",)), P())


def eig_far(a):
    return jax.jit(jnp.linalg.eig, in_shardings=far)(a)


def eig_past(a):
    return jax.jit(jnp.linalg.eig, in_shardings=past)(a)


def eig_t8(a):
    with jax.default_device(on_t8):
        return jnp.linalg.eig(a)


def eig_t9(a):
    with jax.default_device(on_t9):
        return jnp.linalg.eig(a)


def eig_c3(a):
    with jax.default_device(c3):
        return jnp.linalg.eig(a)


def eig_c4(a):
    with jax.default_device(c4):
        return jnp.linalg.eig(a)


def eig_spun(a):
    return jax.jit(jnp.linalg.eig, in_shardings=spun)(a)
"""


def test_devices_are_followed_through_twelve_names_and_calls_and_no_further(check: CheckFn) -> None:
    """A device, mesh or sharding is followed through at most twelve names and calls
    (``_MAX_DEPTH``): ``far`` reaches ``jax.devices("cpu")`` in exactly twelve steps (a
    tuple, a sharding, two mesh names, a mesh, a reshape, an array, four device names),
    ``past``, one mesh name more, needs a thirteenth; a topology's devices nine names away are the cpu's, ten
    are too far; a device itself is followed through four names, not five. A device list rebuilt from itself in a loop is followed a bounded number
    of steps and left unknown (reported), not until the interpreter's stack runs out."""
    assert [f.span.line for f in check(CHAINS, ("tpu",)).findings] == [47, 57, 67, 71]


#: kernels exported or lowered for named platforms, and forms that name none visibly (modelled
#: on jax-ml/jax tests/pallas/pallas_shape_poly_test.py); on the cpu target a compiled
#: pallas_call is found unless it is lowered for tpu only
EXPORTS = """\
import jax
from jax.experimental import pallas as pl


def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def _like(x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


def _copy(x):
    return pl.pallas_call(_kernel, out_shape=_like(x))(x)


def module_function_lowered(spec):
    return pl.lower_as_mlir(_copy, spec)


def inline(spec):
    return jax.export.export(jax.jit(lambda x: pl.pallas_call(_kernel, out_shape=_like(x))(x)), platforms=["tpu"])(spec)


def listed_in_a_tuple(spec):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)

    return jax.export.export(jax.jit(copy), platforms=("tpu",))(spec)


def default_platform_of_lower_as_mlir(spec):
    copy = pl.pallas_call(_kernel, out_shape=spec)
    return pl.lower_as_mlir(jax.jit(copy), spec)


def lowered_unjitted(spec):
    copy = pl.pallas_call(_kernel, out_shape=spec)
    return pl.lower_as_mlir(copy, spec)


def function_lowered_unjitted(spec):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)

    return pl.lower_as_mlir(copy, spec, platforms=["tpu"])


def variable_lowered(spec):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)

    copy_j = jax.jit(copy)
    return pl.lower_as_mlir(copy_j, spec)


def variable_exported_for_cpu(spec):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)  # found

    copy_j = jax.jit(copy)
    return jax.export.export(copy_j, platforms=["cpu"])(spec)


def variable_exported_for_platforms_not_visible(spec, platforms):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)  # found

    copy_j = jax.jit(copy)
    return jax.export.export(copy_j, platforms=platforms)(spec)


def wrapped_then_exported(spec, wrap):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)  # found

    return jax.export.export(wrap(jax.jit(copy)), platforms=["tpu"])(spec)


def kernel_handed_elsewhere(spec, run):
    copy = pl.pallas_call(_kernel, out_shape=spec)  # found
    pl.lower_as_mlir(jax.jit(copy), spec)
    return run(copy, spec)


def cpu_named_too(spec):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)  # found

    return jax.export.export(jax.jit(copy), platforms=["tpu", "cpu"])(spec)


def platforms_not_visible(spec, platforms):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)  # found

    return jax.export.export(jax.jit(copy), platforms=platforms)(spec)


def one_platform_not_visible(spec, other):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)  # found

    return jax.export.export(jax.jit(copy), platforms=["tpu", other])(spec)


def no_platform_named(spec):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)  # found

    return jax.export.export(jax.jit(copy), platforms=[])(spec)


def for_the_default_backend(spec):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)  # found

    return jax.export.export(jax.jit(copy))(spec)


def jitted_and_also_called(spec, x):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)  # found

    copy_j = jax.jit(copy)
    jax.export.export(copy_j, platforms=["tpu"])(spec)
    return copy_j(x)


def jitted_and_handed_elsewhere(spec, run):
    def copy(x):
        return pl.pallas_call(_kernel, out_shape=_like(x))(x)  # found

    return run(jax.jit(copy), spec)


def kernel_also_called(spec, x):
    copy = pl.pallas_call(_kernel, out_shape=spec)  # found
    pl.lower_as_mlir(jax.jit(copy), spec)
    return copy(x)


def kernel_exported_for_cpu(spec):
    copy = pl.pallas_call(_kernel, out_shape=spec)  # found
    return pl.lower_as_mlir(jax.jit(copy), spec, platforms=["cpu"])


def kernel_rebound_through_vmap(spec):
    copy = pl.pallas_call(_kernel, out_shape=spec)
    copy = jax.vmap(copy)
    return pl.lower_as_mlir(jax.jit(copy), spec)


def kernel_rebound_then_called(spec, x):
    copy = pl.pallas_call(_kernel, out_shape=spec)  # found
    copy = jax.vmap(copy)
    pl.lower_as_mlir(jax.jit(copy), spec)
    return copy(x)


def kernel_vmapped_under_another_name(spec):
    copy = pl.pallas_call(_kernel, out_shape=spec)  # found
    batched = jax.vmap(copy)
    return pl.lower_as_mlir(jax.jit(batched), spec)


def kernel_only_rebound(spec):
    copy = pl.pallas_call(_kernel, out_shape=spec)  # found
    copy = jax.vmap(copy)
"""


def test_exported_for_named_platforms_only_where_they_are_visible(check: CheckFn) -> None:
    assert found_lines(check, EXPORTS, "cpu") == marked_lines(EXPORTS)


#: modelled on ammar1510/train-gpt bench_fp8_norm.py: a Modal app whose benchmark function
#: runs in a container with an NVIDIA GPU (`@app.function(image=image, gpu="B200")`) and
#: calls the cuDNN attention there; Modal is not installed where the tests run, so its names
#: are read from the imports
MODAL = """\
import modal
from modal import App as ModalApp

import jax

app = modal.App("bench")
other = ModalApp("other")
tasks = make_tasks()


@app.function(gpu="B200", timeout=600)
def on_gpu(q, k, v):
    def attention(q, k, v):
        return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")

    return attention(q, k, v)


@other.cls(gpu="H100:8")
class Server:
    def attend(self, q, k, v):
        return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")


@app.function(timeout=600)
def on_cpu_container(q, k, v):
    return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # found


@app.function(gpu=None)
def no_gpu(q, k, v):
    return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # found


@tasks.function(gpu="A100")
def not_modal(q, k, v):
    return jax.nn.dot_product_attention(q, k, v, implementation="cudnn")  # found
"""


def test_a_modal_function_given_a_gpu_runs_on_cuda(check: CheckFn) -> None:
    """Only a function (or a class's methods) a Modal app runs with ``gpu=`` is pinned to
    cuda; without a GPU, or by another object's ``function``, nothing is known."""
    for target in ("cpu", "tpu"):
        assert found_lines(check, MODAL, target) == marked_lines(MODAL)
    assert found_lines(check, MODAL, "cuda") == []
