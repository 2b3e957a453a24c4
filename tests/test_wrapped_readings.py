"""Which functions run under ``shard_map`` (semantics/wrapped.py), read by JT002.

The experimental ``shard_map`` given its function by keyword (``f=body``), a stage whose
scan body is a module function passed by keyword (``lax.scan(f=hop, ...)``), and a
``functools.partial`` of a collective helper passed straight to ``jax.shard_map``, with
an argument bound positionally or by keyword (directly or through a name), and a module-level helper called from a
``@partial(shard_map, ...)``-decorated body and from a lambda passed to it. Modelled on jax-ml/jax
tests/shard_map_test.py (``shard_map(f, mesh, in_specs, out_specs)`` from
``jax.experimental.shard_map``, ``partial`` bodies) and the pipeline stages of
AI-Hypercomputer/maxtext (collectives inside ``lax.scan`` bodies). The code is written
for this suite. Real jedi in the test interpreter, the real engine on the cpu target:
psend is JT001 everywhere, and JT002 only where no shard_map is visible around it.
"""

from __future__ import annotations

from .conftest import CheckFn

# both bodies run under shard_map: no JT002, only the JT001 of each psend
BY_KEYWORD = """\
from jax import lax
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

RING = [(0, 1), (1, 0)]


def body(a):
    return lax.psend(a, "x", RING)


def hop(carry, _):
    lax.psend(carry, "x", RING)
    return carry, None


def stage(a):
    out, _ = lax.scan(f=hop, init=a, xs=None, length=2)
    return out


def run(mesh, x):
    step = shard_map(f=body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    staged = shard_map(stage, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    return step(x), staged(x)
"""


def test_functions_passed_by_keyword_run_under_shard_map(check: CheckFn) -> None:
    found = [(f.code, f.span.line) for f in check(BY_KEYWORD, ("cpu",)).findings]
    assert found == [("JT001", 9), ("JT001", 13)]


# the partial's function is the body; what it binds (positionally or by keyword) is not
PARTIAL_BODIES = """\
import functools

import jax
from jax import lax
from jax.sharding import PartitionSpec as P

RING = [(0, 1), (1, 0)]


def exchange(a, axis):
    return lax.psend(a, axis, RING)


def send_along(perm, a):
    return lax.psend(a, "x", perm)


def send_back(perm, a):
    return lax.psend(a, "x", perm[::-1])


def run(mesh, x):
    specs = {"mesh": mesh, "in_specs": P("x"), "out_specs": P("x")}
    step = jax.shard_map(functools.partial(exchange, axis="x"), **specs)
    ring = jax.shard_map(functools.partial(send_along, RING), **specs)
    entry = functools.partial(send_back, RING)
    back = jax.shard_map(entry, **specs)
    return jax.jit(step)(x), jax.jit(ring)(x), jax.jit(back)(x)
"""


def test_a_partial_passed_to_shard_map_runs_its_function_under_it(check: CheckFn) -> None:
    found = [(f.code, f.span.line) for f in check(PARTIAL_BODIES, ("cpu",)).findings]
    assert found == [("JT001", 11), ("JT001", 15), ("JT001", 19)]


# the decorated body calls a module-level helper: the helper runs under shard_map too
HELPER_OF_A_DECORATED_BODY = """\
import functools

import jax
from jax import lax
from jax.sharding import PartitionSpec as P

RING = [(0, 1), (1, 0)]


def exchange(a):
    return lax.psend(a, "x", RING)


def build(mesh):
    @jax.jit
    @functools.partial(jax.shard_map, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    def step(a):
        return exchange(a) + 1

    return step
"""


def test_a_helper_called_from_a_decorated_body_runs_under_shard_map(check: CheckFn) -> None:
    found = [(f.code, f.span.line) for f in check(HELPER_OF_A_DECORATED_BODY, ("cpu",)).findings]
    assert found == [("JT001", 11)]


# a lambda passed to shard_map calls a module-level helper: the helper runs under it
HELPER_OF_A_LAMBDA_BODY = """\
import jax
from jax import lax
from jax.sharding import PartitionSpec as P

RING = [(0, 1), (1, 0)]


def exchange(a):
    return lax.psend(a, "x", RING)


def build(mesh):
    return jax.jit(jax.shard_map(lambda a: exchange(a) * 2, mesh=mesh, in_specs=P("x"), out_specs=P("x")))
"""


def test_a_helper_called_from_a_lambda_body_runs_under_shard_map(check: CheckFn) -> None:
    found = [(f.code, f.span.line) for f in check(HELPER_OF_A_LAMBDA_BODY, ("cpu",)).findings]
    assert found == [("JT001", 9)]


# the body is handed to shard_map inside a long function far below it: the lines naming
# the wrapper are resolved on demand, wherever they are
FAR_AWAY = (
    "import jax\nfrom jax import lax\n\n\ndef inner(x):\n    return lax.psend(x, 'i', [(0, 1)])\n\n\n"
    + "".join(f"def filler{i}(x):\n    return x + {i}\n\n\n" for i in range(30))
    + "def build(mesh, spec):\n"
    + "    y = 1\n" * 15
    + "    return jax.shard_map(inner, mesh=mesh, in_specs=spec, out_specs=spec)\n"
)


def test_a_body_handed_to_shard_map_far_below_runs_under_it(check: CheckFn) -> None:
    found = [(f.code, f.span.line) for f in check(FAR_AWAY, ("cpu",)).findings]
    assert found == [("JT001", 6)]
