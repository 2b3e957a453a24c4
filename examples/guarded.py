"""The same hand-off, guarded so that it also runs on CPU and TPU."""

from functools import partial

import jax
from jax import lax
from jax.sharding import PartitionSpec as P

mesh = jax.make_mesh((jax.device_count(),), ("stage",))
PERM = [(0, 1)]


def has_gpu_backend() -> bool:
    return jax.default_backend() in ("gpu", "cuda", "rocm")


@partial(jax.shard_map, mesh=mesh, in_specs=P("stage"), out_specs=P("stage"))
def hand_off(x):
    if has_gpu_backend():
        token = lax.psend(x, "stage", PERM)
        y = lax.precv(token, jax.ShapeDtypeStruct(x.shape, x.dtype), "stage", PERM)
    else:
        y = lax.ppermute(x, "stage", PERM)
    return y
