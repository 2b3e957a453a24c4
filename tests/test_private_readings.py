"""Private functions that nothing runs (semantics/tables.py ``_never_run``, semantics/project_names.py).

A private module-level function reaches an API where its callers in the module call it;
one that its module never uses may still be imported elsewhere. Read here, in a project
folder (a ``pyproject.toml``) on disk:

- a kernel in a private function that its module never names again, and that no other
  Python file of the project spells, never runs: not reported; nor through a chain of
  private callers whose last one is such a function;
- it is reported where another module uses it (on any line but a one-line ``from ...
  import`` of it without an alias: a module that only imports it runs nothing), names it in
  a string, or the module itself names it in a string; where a decorator may register it; where the project has
  no root marker (nothing can be known); for a public function; and for a dunder;
- a function defined in another function that never names it (no call, return or store)
  never runs either, unless decorated, declared `global`, recursive, a class's method, or in
  a function that reads its own scope (`eval`, `locals()`);
- a ``check`` whose result depended on the other files is not cached: importing the
  function in another module brings its finding back on the next run.

Modelled on dtunai/Ring-Attention-Jax ``ring_attention_jax/ring_attention_jax.py`` (a
clone of LWM's ring attention whose Pallas forward and backward passes are left defined
but unused, the module registering its pure-JAX blockwise passes instead). The code is
written for this suite. Real jedi, the real engine, a real ``jaxtarget check``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from jaxtarget.semantics import project_names

from .conftest import CheckFn, marked_lines, run_cli

RING = """\
from jax.experimental import pallas as pl


def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def _impl(x):
    return pl.pallas_call(_kernel, out_shape=x)(x)


def _wrap(x):
    return _impl(x)


def _flash_fwd(x):
    return _wrap(x), None


def _left_over(x):
    return pl.pallas_call(_kernel, out_shape=x)(x)
"""


def _project(root: Path, source: str, marker: bool = True) -> Path:
    (root / "pkg").mkdir(parents=True)
    if marker:
        (root / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (root / "pkg" / "__init__.py").write_text("")
    module = root / "pkg" / "ring.py"
    module.write_text(source)
    return module


def _lines(check: CheckFn, module: Path) -> list[int]:
    return [f.span.line for f in check(module.read_text(), ("cpu",), str(module)).findings]


def test_private_functions_nothing_runs_are_not_reported(check: CheckFn, tmp_path: Path) -> None:
    module = _project(tmp_path, RING)
    (tmp_path / "pkg" / "other.py").write_text("def _kernel_for_gpu():\n    return 'flash_fwd'\n")
    assert _lines(check, module) == []


@pytest.mark.parametrize(
    ("where", "text"),
    [
        ("import", "from pkg.ring import _flash_fwd, _left_over\n\nKERNELS = [_flash_fwd, _left_over]\n"),
        ("alias", "from pkg.ring import _flash_fwd as fwd\nfrom pkg.ring import _left_over as rest\n"),
        (
            "string",
            "import pkg.ring\n\nFWD = getattr(pkg.ring, '_flash_fwd'), getattr(pkg.ring, '_left_over')\n",
        ),
        ("script", "from pkg import ring\n\nring._flash_fwd(1)\nring._left_over(1)\n"),
    ],
)
def test_a_name_another_file_spells_may_run(check: CheckFn, tmp_path: Path, where: str, text: str) -> None:
    module = _project(tmp_path, RING)
    (tmp_path / ("scripts" if where == "script" else "pkg")).mkdir(exist_ok=True)
    (tmp_path / ("scripts" if where == "script" else "pkg") / "user.py").write_text(text)
    assert _lines(check, module) == [9, 21]


@pytest.mark.parametrize(
    "text",
    [
        "from pkg.ring import _flash_fwd, _left_over\n",
        "from pkg.ring import _flash_fwd  # kept for later\nfrom pkg.ring import _left_over\n\nx = 1\n",
        "from pkg import ring\nfrom pkg.ring import _left_over, _flash_fwd\n\nring.public = None\n",
    ],
)
def test_a_name_other_files_only_import_never_runs(check: CheckFn, tmp_path: Path, text: str) -> None:
    """Modelled on james-zhengql/flex_attention_tpu, whose reference kernel two modules import
    and neither calls."""
    module = _project(tmp_path, RING)
    (tmp_path / "pkg" / "user.py").write_text(text)
    assert _lines(check, module) == []


FOUND = """\
import functools

import jax
from jax.experimental import pallas as pl


def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def _named(x):
    return pl.pallas_call(_kernel, out_shape=x)(x)  # found


LOWERINGS = {"tpu": "_named"}


@functools.partial(jax.jit, static_argnums=1)
def _registered(x, n):
    return pl.pallas_call(_kernel, out_shape=x)(x)  # found


def public(x):
    return pl.pallas_call(_kernel, out_shape=x)(x)  # found


def __getattr__(name):
    return pl.pallas_call(_kernel, out_shape=name)(name)  # found
"""


def test_what_the_module_names_or_registers_and_public_functions_are_reported(
    check: CheckFn, tmp_path: Path
) -> None:
    module = _project(tmp_path, FOUND)
    assert _lines(check, module) == marked_lines(FOUND)


def test_without_a_project_folder_nothing_is_known(check: CheckFn, tmp_path: Path) -> None:
    module = _project(tmp_path, RING, marker=False)
    assert _lines(check, module) == [9, 21]


def test_a_result_that_read_other_files_is_not_cached(tmp_path: Path) -> None:
    _project(tmp_path, RING)

    def found() -> list[str]:
        out = run_cli("check", "--target", "cpu", "pkg/ring.py", cwd=tmp_path)
        assert out.returncode in (0, 1), out.stdout + out.stderr
        return [line.split(" ", 2)[0] for line in out.stdout.splitlines() if line.startswith("pkg/")]

    assert found() == []
    (tmp_path / "pkg" / "user.py").write_text("from pkg.ring import _left_over\n\n_left_over(1)\n")
    assert found() == ["pkg/ring.py:21:15:"]
    (tmp_path / "pkg" / "user.py").unlink()
    assert found() == []


def test_a_project_too_large_or_a_file_too_big_is_not_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _project(tmp_path, RING)
    (tmp_path / "pkg" / "user.py").write_text("from pkg.ring import _left_over\n\n_left_over(1)\n")
    assert project_names.spelled_elsewhere(str(module), "_left_over") is True
    assert project_names.spelled_elsewhere(str(module), "_flash_fwd") is False
    assert project_names.spelled_elsewhere(None, "_flash_fwd") is None
    monkeypatch.setattr(project_names, "WALK_SECONDS", 0.0)
    big = tmp_path / "pkg" / "generated.py"
    big.write_text("from pkg.ring import _kernel\n_kernel()\n")
    assert project_names.spelled_elsewhere(str(module), "_kernel") is True
    big.write_text("from pkg.ring import _kernel\n_kernel()\n" + "# generated\n" * 20)
    monkeypatch.setattr(project_names, "MAX_BYTES", 100)
    assert project_names.spelled_elsewhere(str(module), "_kernel") is False  # generated.py is not read
    monkeypatch.setattr(project_names, "MAX_FILES", 3)  # __init__.py, ring.py, user.py, generated.py
    assert project_names.spelled_elsewhere(str(module), "_flash_fwd") is None


def test_the_walk_is_kept_for_a_while_and_an_answer_while_no_file_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = _project(tmp_path, RING)
    user = tmp_path / "pkg" / "user.py"
    user.write_text("import pkg.ring\n")
    monkeypatch.setattr(project_names, "WALK_SECONDS", 3600.0)
    assert project_names.spelled_elsewhere(str(module), "_flash_fwd") is False
    assert project_names.spelled_elsewhere(str(module), "_flash_fwd") is False  # the answer held
    (tmp_path / "pkg" / "late.py").write_text("from pkg.ring import _flash_fwd\n_flash_fwd(1)\n")
    assert project_names.spelled_elsewhere(str(module), "_flash_fwd") is False  # the walk is kept
    monkeypatch.setattr(project_names, "WALK_SECONDS", 0.0)
    assert project_names.spelled_elsewhere(str(module), "_flash_fwd") is True  # walked again
    (tmp_path / "pkg" / "late.py").unlink()
    assert project_names.spelled_elsewhere(str(module), "_flash_fwd") is False
    user.write_text("import pkg.ring as r\nr._flash_fwd\n")  # a file changed: searched again
    assert project_names.spelled_elsewhere(str(module), "_flash_fwd") is True


LOCAL = """\
import functools

import jax
import jax.numpy as jnp


class GLN:
    def __init__(self, n):
        def to_group(g):
            return jnp.linalg.eig(g)

        def stored(g):
            return jnp.linalg.eig(g)  # found

        def returned(g):
            return jnp.linalg.eig(g)  # found

        @functools.lru_cache
        def decorated(g):
            return jnp.linalg.eig(g)  # found

        def recursive(g):
            return recursive(jnp.linalg.eig(g))  # found

        class Inner:
            def method(self, g):
                return jnp.linalg.eig(g)  # found

        self.stored = stored
        self.inner = Inner
        self.returned = lambda: returned


def evaluated(g):
    def helper(g):
        return jnp.linalg.eig(g)  # found

    return eval("helper")(g)


def declared(g):
    global helper

    def helper(g):
        return jnp.linalg.eig(g)  # found
"""


def test_a_local_function_its_function_never_names_never_runs(check: CheckFn) -> None:
    """Modelled on ComputationalEvolutionaryMorphometry/jaxgeometry ``jaxgeometry/groups/GLN.py``
    (a ``to_group`` defined in ``__init__`` and never used)."""
    found = [f.span.line for f in check(LOCAL, ("tpu",)).findings]
    assert found == marked_lines(LOCAL)
