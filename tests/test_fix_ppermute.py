"""JT001's ppermute fallback: a psend/precv pair guarded, with `lax.ppermute` on the other backends.

The pair is modelled on jax-ml/jax tests/shard_map_test.py (`token = lax.psend(x, "i", perm)`
then `lax.precv(token, out_shape, "i", perm)` in a shard_map'd function). Real engine, real
jedi; the fix is applied and the function compared line by line.
"""

from __future__ import annotations

import textwrap

import pytest

from jaxtarget.fixes.layout import apply_edits

from .conftest import CheckFn

HEAD = """\
from functools import partial

import jax
import jax.numpy as jnp
from jax import lax
from jax.lax import precv, psend
from jax.sharding import PartitionSpec as P


@partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
def step(x, perm):
"""

#: the body of `step`, and the ppermute fallback its else branch holds (None: no fallback offered)
CASES: dict[str, tuple[str, str | None]] = {
    "returned": (
        'token = lax.psend(x, "i", perm)\nreturn lax.precv(token, x, "i", perm)',
        'return lax.ppermute(x, "i", perm)',
    ),
    "assigned": (
        'token = lax.psend(x, "i", perm)\ny = lax.precv(token, x, "i", perm)',
        'y = lax.ppermute(x, "i", perm)',
    ),
    "assigned-twice": (
        'token = lax.psend(x, "i", perm)\ny = z = lax.precv(token, x, "i", perm)',
        'y = z = lax.ppermute(x, "i", perm)',
    ),
    # the annotation stays on the guarded line; the fallback binds the same name
    "annotated": (
        'token = jax.lax.psend(x, "i", perm)\ny: jax.Array = jax.lax.precv(token, x, "i", perm)',
        'y = jax.lax.ppermute(x, "i", perm)',
    ),
    # the module the psend is spelled through: jax.lax, or jax.lax for a bare imported name
    "bare-names": (
        'token = psend(x, "i", perm)\nreturn precv(token, x, "i", perm)',
        'return jax.lax.ppermute(x, "i", perm)',
    ),
    "keywords": (
        'lax.psend(x=x, axis_name="i", perm=perm)\nreturn lax.precv(t, x, axis_name="i", perm=perm)',
        'return lax.ppermute(x, "i", perm)',
    ),
    "other-operand": (
        'token = lax.psend(x * 2, "i", [(0, 1), (1, 0)])\nreturn lax.precv(token, x, "i", [(0, 1), (1, 0)])',
        'return lax.ppermute(x * 2, "i", [(0, 1), (1, 0)])',
    ),
    # the received value is used inside a larger expression: no fallback rewrites just it
    "returned-inside-a-call": (
        'token = lax.psend(x, "i", perm)\nreturn jnp.sum(lax.precv(token, x, "i", perm))',
        None,
    ),
    "assigned-inside-a-call": (
        'token = lax.psend(x, "i", perm)\ny = jnp.sum(lax.precv(token, x, "i", perm))',
        None,
    ),
    "received-and-dropped": ('token = lax.psend(x, "i", perm)\nlax.precv(token, x, "i", perm)', None),
    # a psend whose axis and permutation come in a mapping: nothing to hand ppermute
    "send-arguments-unknown": (
        'token = lax.psend(x, **where)\nreturn lax.precv(token, x, "i", perm)',
        None,
    ),
}


@pytest.mark.parametrize("name", CASES)
def test_ppermute_fallback(check: CheckFn, name: str) -> None:
    body, fallback = CASES[name]
    source = HEAD + textwrap.indent(body, "    ") + "\n"
    analysis = check(source, ("cpu", "tpu"), "shard_step.py")
    found = [f for f in analysis.findings if f.code == "JT001"]
    assert [f.span.line for f in found] == [12, 13], found
    # each end of the pair offers the same fix, whichever of the two it was asked from
    texts = set()
    for finding in found:
        fixes = [fix for fix in analysis.fixes(finding) if fix.kind == "ppermute"]
        texts.add(tuple(apply_edits(source, fix.edits) for fix in fixes))
    (fixed,) = texts
    if fallback is None:
        assert fixed == ()
        return
    (text,) = fixed
    start = text.index("def step(x, perm):\n")
    guarded = textwrap.indent(body, "        ")
    assert text[start:].splitlines()[1:] == [
        "    if has_gpu_backend():",
        *guarded.splitlines(),
        "    else:",
        f"        {fallback}",
    ], text
    compile(text, "shard_step.py", "exec")
