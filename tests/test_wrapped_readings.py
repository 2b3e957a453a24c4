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

from jaxtarget.semantics.source import ChunkCache

from .conftest import CheckFn, make_engine

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


def _bodies(*names: str) -> str:
    """Module functions sending or receiving by turns, each to be handed to shard_map."""
    ops = ("psend", "precv")
    return "".join(
        f'def {name}(x):\n    return lax.{ops[i % 2]}(x, "i", [(0, 1)])\n\n\n' for i, name in enumerate(names)
    )


# names bound to shard_map or to a partial of it, modelled on
# google/scaling_transformer_inference_efficiency's tests (`shard_map = partial(shard_map,
# check_rep=False)` after importing it) and on benchmark scripts that keep
# `shmap = partial(shard_map, mesh=mesh, in_specs=..., out_specs=...)` and call `shmap(f)`
ALIASES = (
    """\
import functools

import jax
from jax import lax
from jax.experimental.shard_map import shard_map
from jax.sharding import PartitionSpec as P

shard_map = functools.partial(shard_map, check_rep=False)
smap = jax.shard_map
shmap = functools.partial(
    jax.shard_map,
    in_specs=P("i"),
    out_specs=P("i"),
)
again = smap


"""
    + _bodies("first", "second", "third", "fourth", "fifth")
    + """\
def run(mesh, x):
    local = jax.shard_map
    a = shard_map(first, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x)
    b = smap(second, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x)
    c = shmap(third, mesh=mesh)(x)
    d = again(fourth, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x)
    e = local(fifth, mesh=mesh, in_specs=P("i"), out_specs=P("i"))(x)
    return a, b, c, d, e
"""
)

# a name bound to shard_map here and to something else there is not read as shard_map;
# nor is a partial of another function
NOT_ALIASES = (
    """\
import functools

import jax
from jax import lax
from jax.sharding import PartitionSpec as P

smap = jax.shard_map
jitted = functools.partial(jax.jit, donate_argnums=0)


"""
    + _bodies("first", "second", "third")
    + """\
def run(x, smap2=jax.vmap):
    return smap2(first)(x), jitted(second)(x)


def later(x):
    smap = jax.vmap
    return smap(third)(x)
"""
)


def _sharding_findings(source: str) -> dict[str, list[int]]:
    engine = make_engine(("cuda",))
    out: dict[str, list[int]] = {}
    for mode in ("whole", "sparse"):
        analysis = engine.check(source, "mod.py", sparse=mode == "sparse", cache=ChunkCache())
        out[mode] = [f.span.line for f in analysis.findings if f.code == "JT002"]
    return out


def test_a_name_bound_to_shard_map_or_a_partial_of_it_is_shard_map() -> None:
    assert _sharding_findings(ALIASES) == {"whole": [], "sparse": []}


def test_a_name_bound_to_shard_map_and_to_something_else_is_not() -> None:
    assert _sharding_findings(NOT_ALIASES) == {"whole": [12, 16, 20], "sparse": [12, 16, 20]}


# the only name bound to the wrapper is bound over several lines
MULTILINE_PARTIAL = """\
import functools

import jax
from jax import lax
from jax.sharding import PartitionSpec as P

sharded = functools.partial(
    jax.shard_map,
    in_specs=P("i"),
    out_specs=P("i"),
)


def body(x):
    return lax.psend(x, "i", [(0, 1)])


def run(mesh, x):
    return sharded(body, mesh=mesh)(x)
"""


def test_a_name_bound_over_several_lines_to_a_partial_of_shard_map_is_shard_map() -> None:
    assert _sharding_findings(MULTILINE_PARTIAL) == {"whole": [], "sparse": []}
