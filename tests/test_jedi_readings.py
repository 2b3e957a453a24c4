"""What jedi is asked and how its answers are read (semantics/jedi_resolver.py).

Read here, with real jedi on the suite's jax and on another installed release:

- names are resolved in the jax of the interpreter the resolver was made for, not in the
  running one: ``jax.scipy.linalg.solve_sylvester`` (public from jax 0.8.0) is nothing in
  jax 0.7.0's environment and itself in the suite's;
- a name bound two ways (an import under an ``if``, ``None`` in its ``else``) is resolved in
  the whole file; where jedi finds nothing there, a name some jax release lacks is read
  from the import statement (``pltpu.TPUCompilerParams``, removed in 0.7.2: reported as
  absent), and any other name is nothing;
- a use jedi finds bound to two definitions is the wanted API when the other one is also
  jax's (``eig`` or ``eigh`` of ``jax.numpy.linalg``), and not when the other is another
  library's (numpy's ``eig``);
- ``describe`` gives the signature and the docstring as written (the hover shows the
  signature apart);
- the answers of a run in which jedi raised are not kept in the name store: a later run
  asks jedi again (a parse-cache pickle that raises on load stands for a jedi failure).

Modelled on the version fallbacks of Pallas kernels written for older jax
(google/jetstream's ``paged_attention`` kernels) and on array-library switches
(``bk = numpy if ... else jax.numpy``, google/jax-md's ``space.py``). The code is written
for this suite.
"""

from __future__ import annotations

import pickle
import shutil
from pathlib import Path

from jaxtarget.semantics.jedi_resolver import JediResolver, create_environment
from jaxtarget.semantics.resolver import Binding, Query

from .conftest import CheckFn, jax_venv, marked_lines, run_cli

SYLVESTER = "jax.scipy.linalg.solve_sylvester"
LINALG = Binding("from", "jax.scipy", "linalg", None)


def test_names_are_resolved_in_the_jax_of_the_resolvers_interpreter() -> None:
    query = Query(LINALG, "linalg.solve_sylvester")
    wanted = frozenset({SYLVESTER})
    old = JediResolver(create_environment(jax_venv("0.7.0")))
    assert old.resolve([query], wanted) == [None]
    # read from the import where a release lacks it, so that the use can be reported as absent
    assert old.resolve([query], wanted, lacking=wanted) == [SYLVESTER]
    assert JediResolver(None).resolve([query], wanted) == [SYLVESTER]


TWO_WAYS = """\
import os

from jax.experimental import pallas as pl

if os.environ.get("ON_TPU"):
    from jax.experimental.pallas import tpu as pltpu
else:
    pltpu = None


def copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def old_params(x):
    return pl.pallas_call(copy, out_shape=x, compiler_params=pltpu.TPUCompilerParams())(x)  # found
"""


def test_a_name_bound_two_ways_that_jax_lacks_is_read_from_its_import(check: CheckFn) -> None:
    for target in ("cpu", "tpu"):
        findings = check(TWO_WAYS, (target,)).findings
        assert [f.span.line for f in findings] == marked_lines(TWO_WAYS)
        assert "is not in jax" in findings[0].message and "removed in 0.7.2" in findings[0].message


HOMONYMS = """\
import os

if os.environ.get("SYMMETRIC"):
    from jax.numpy.linalg import eigh as eig
else:
    from LIBRARY import eig


def spectrum(a):
    return eig(a)  # found
"""


def test_a_homonym_is_the_api_only_when_both_definitions_are_jax(check: CheckFn) -> None:
    both_jax = HOMONYMS.replace("LIBRARY", "jax.numpy.linalg")
    assert [f.span.line for f in check(both_jax, ("tpu",)).findings] == marked_lines(both_jax)
    with_numpy = HOMONYMS.replace("LIBRARY", "numpy.linalg")
    assert check(with_numpy, ("tpu",)).findings == []


def test_describe_gives_the_signature_and_the_docstring_as_written() -> None:
    import jax.scipy.linalg

    signature, doc = JediResolver(None).describe("jax.scipy.linalg.schur")
    assert signature.startswith("schur(") and "output" in signature, signature
    written = jax.scipy.linalg.schur.__doc__
    assert written and doc.split()[:6] == written.split()[:6], (doc[:200], written[:200])
    assert not doc.startswith("schur("), doc[:100]


# imported under another name, so that no wanted name is asked about beside the use itself
SCHUR = """\
from jax.scipy.linalg import schur as schur_decomposition


def decompose(a):
    return schur_decomposition(a)
"""


class _Raises:
    """A pickled object whose loading raises an error parso's loader does not expect."""

    def __reduce__(self) -> tuple[object, tuple[object, ...]]:
        return (dict.__getitem__, ({}, "jaxtarget: no such key"))


def _findings(folder: Path, cache: Path, store: Path) -> list[str]:
    out = run_cli(
        "check",
        "--no-cache",
        "--target",
        "tpu",
        "schur.py",
        cwd=folder,
        env={"XDG_CACHE_HOME": str(cache), "JAXTARGET_CACHE_HOME": str(store)},
    )
    assert out.returncode in (0, 1), out.stdout + out.stderr
    return [line for line in out.stdout.splitlines() if line.startswith("schur.py:")]


def test_answers_of_a_run_where_jedi_raised_are_not_stored(tmp_path: Path) -> None:
    folder, cache = tmp_path / "project", tmp_path / "cache"
    folder.mkdir()
    (folder / "schur.py").write_text(SCHUR)
    found = _findings(folder, cache, tmp_path / "warm-up")
    assert [line.split(" ", 2)[1] for line in found] == ["JT003"], found
    pickles = sorted((cache / "jedi").rglob("*.pkl"))
    assert pickles
    kept = tmp_path / "kept"
    shutil.copytree(cache / "jedi", kept)
    for path in pickles:
        path.write_bytes(pickle.dumps(_Raises()))
    store = tmp_path / "store"
    assert _findings(folder, cache, store) == []  # jedi raised on every jax module: nothing resolved
    shutil.rmtree(cache / "jedi")
    shutil.copytree(kept, cache / "jedi")
    assert _findings(folder, cache, store) == found  # asked again, not answered from the store
