"""`check` over many files: the process pool gives the sequential results, the cache serves and invalidates.

Whether a run used the cache is seen from outside: a cached finding's message is
rewritten in the cache file; a run served from the cache prints the rewritten message,
a run that recomputed the file prints the real one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from jaxtarget.probe import catalog_cases

from .conftest import ROOT, probe_program, run_cli

SITE_JAX = (
    Path(sys.prefix) / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages" / "jax"
)
OTHER_JAX = ROOT / ".jax-venvs" / "jax-0.12.0.1" / "bin" / "python"

USES = (
    "import jax\nfrom jax import lax\n"
    '@jax.shard_map(mesh=m, in_specs=P("i"), out_specs=P("i"))\n'
    'def f(x):\n    return lax.psend(x, "i", [(0, 1)])\n'
)
SCALED = "import jax\n\n\ndef project(a, b, sa, sb):\n    return jax.nn.scaled_matmul(a, b, sa, sb)\n"
MARK = "MESSAGE FROM THE CACHE"


def _entries(folder: Path) -> dict[str, list[object]]:
    data: dict[str, list[object]] = json.loads(
        (folder / ".jaxtarget_cache" / "v1" / "results.json").read_text()
    )
    return data


def _tamper(folder: Path) -> None:
    """Rewrite every cached finding's message: output that shows it came from the cache."""
    path = folder / ".jaxtarget_cache" / "v1" / "results.json"
    data = json.loads(path.read_text())
    for entry in data.values():
        for finding in entry[1]["findings"]:
            finding[1] = MARK
    path.write_text(json.dumps(data))


def _project(tmp_path: Path) -> Path:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "uses.py").write_text(USES)
    (tmp_path / "plain.py").write_text("import numpy as np\n\nx = np.zeros(3)\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    return tmp_path


@pytest.mark.parametrize("tree", ["jax", "idioms"])
def test_pool_results_equal_the_sequential_ones(tree: str, tmp_path: Path) -> None:
    """On a real tree, every output format: two workers print what one prints."""
    target = SITE_JAX if tree == "jax" else ROOT / "tests" / "idioms"
    formats = ("text",) if tree == "jax" else ("text", "json", "sarif")
    for fmt in formats:
        args = ("check", str(target), "--target", "cpu,tpu", "--no-cache", "--format", fmt)
        one = run_cli(*args, "--jobs", "1", cwd=tmp_path)
        two = run_cli(*args, "--jobs", "2", cwd=tmp_path)
        assert "Traceback" not in one.stderr + two.stderr
        assert (one.returncode, one.stdout, one.stderr) == (two.returncode, two.stdout, two.stderr)
        assert one.stdout.count("\n") > 3
    assert not (tmp_path / ".jaxtarget_cache").exists()


def test_workers_filling_a_cold_parse_cache_lose_nothing(tmp_path: Path) -> None:
    """Two workers parse jax's modules into jedi's empty on-disk cache at once: a pickle one
    of them half wrote made the other resolve nothing in that module, and a finding was lost
    (or a JT002 appeared) on most runs."""
    folder = tmp_path / "programs"
    folder.mkdir()
    for i, (_, api, value) in enumerate(catalog_cases()):
        if api.probe is not None and api.probe.verifiable and value is None:
            (folder / f"p{i}.py").write_text(probe_program(api.probe.code))
    args = ("check", ".", "--target", "cpu,cuda,rocm,tpu", "--no-cache")
    one = run_cli(*args, "--jobs", "1", cwd=folder)
    assert one.stdout.count("\n") > 40, one.stdout + one.stderr
    for n in range(3):
        cold = {"XDG_CACHE_HOME": str(tmp_path / f"cache{n}")}
        two = run_cli(*args, "--jobs", "2", cwd=folder, env=cold)
        assert two.stdout == one.stdout, (n, two.stdout, two.stderr)


def test_a_cached_result_serves_and_equals_the_computed_one(tmp_path: Path) -> None:
    project = _project(tmp_path)
    first = run_cli("check", ".", "--target", "cpu", cwd=project)
    assert first.returncode == 1 and "JT001" in first.stdout and "broken.py:1:7: SyntaxError" in first.stdout
    cache = project / ".jaxtarget_cache"
    assert (cache / ".gitignore").read_text().splitlines()[-1] == "*"
    assert set(_entries(project)) == {str(project / n) for n in ("uses.py", "plain.py", "broken.py")}
    again = run_cli("check", ".", "--target", "cpu", cwd=project)
    assert (again.returncode, again.stdout, again.stderr) == (first.returncode, first.stdout, first.stderr)
    _tamper(project)
    assert MARK in run_cli("check", ".", "--target", "cpu", cwd=project).stdout


def test_editing_a_file_recomputes_it(tmp_path: Path) -> None:
    project = _project(tmp_path)
    run_cli("check", ".", "--target", "cpu", cwd=project)
    _tamper(project)
    (project / "uses.py").write_text(USES + "# edited\n")
    out = run_cli("check", ".", "--target", "cpu", cwd=project)
    assert MARK not in out.stdout and "uses.py:5:16: JT001" in out.stdout


GUARDED = (
    "import jax.numpy as jnp\nfrom pkg.utils import on_accelerator\n\n\n"
    "def spectrum(x):\n    if on_accelerator():\n        return jnp.linalg.eig(x)\n    return x\n"
)
PREDICATE = 'import jax\n\n\ndef on_accelerator():\n    return jax.default_backend() == "{}"\n'


def _guarded_project(tmp_path: Path, predicate: str | None) -> Path:
    """A module whose eig runs under a guard another module of the project defines."""
    (tmp_path / "pkg").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "main.py").write_text(GUARDED)
    if predicate is not None:
        (tmp_path / "pkg" / "utils.py").write_text(PREDICATE.format(predicate))
    return tmp_path


def test_a_result_read_from_another_module_serves_while_that_module_is_unchanged(tmp_path: Path) -> None:
    project = _guarded_project(tmp_path, "gpu")
    first = run_cli("check", ".", "--target", "tpu", cwd=project)
    assert first.returncode == 0, first.stdout + first.stderr
    reads = _entries(project)[str(project / "pkg" / "main.py")][2]
    assert isinstance(reads, list)
    # the module read, with its stamp; the others are where a module was looked for, absent
    assert [r for r in reads if len(r) > 1] == [
        [str(project / "pkg" / "utils.py"), *_stamp(project / "pkg" / "utils.py")]
    ]
    assert all(not Path(r[0]).exists() for r in reads if len(r) == 1)
    _tamper(project)
    again = run_cli("check", ".", "--target", "tpu", cwd=project)
    assert (again.returncode, again.stdout) == (first.returncode, first.stdout)


def _stamp(path: Path) -> list[int]:
    st = path.stat()
    return [st.st_mtime_ns, st.st_size]


@pytest.mark.parametrize(("before", "after"), [("gpu", "tpu"), (None, "gpu")])
def test_editing_or_adding_the_module_a_guard_is_read_from_recomputes(
    before: str | None, after: str, tmp_path: Path
) -> None:
    """The guard's predicate is edited (from a GPU test to a TPU test, so eig now runs on a
    TPU), or its module appears after the first check (so the unknown guard becomes a GPU
    test): the cached result of the file that calls it no longer serves, though that file
    did not change."""
    project = _guarded_project(tmp_path, before)
    first = run_cli("check", ".", "--target", "tpu", cwd=project)
    assert ("pkg/main.py:7:27: JT003" in first.stdout) == (before != "gpu"), first.stdout
    (project / "pkg" / "utils.py").write_text(PREDICATE.format(after))
    out = run_cli("check", ".", "--target", "tpu", cwd=project)
    assert ("pkg/main.py:7:27: JT003" in out.stdout) == (after == "tpu"), out.stdout + out.stderr
    assert out.stdout == run_cli("check", ".", "--target", "tpu", "--no-cache", cwd=project).stdout


def test_editing_the_module_an_api_is_imported_through_recomputes(tmp_path: Path) -> None:
    """``from pkg.compat import spectrum``, where compat.py imports eigvals under that name:
    once compat.py defines its own ``spectrum``, the file that calls it has no finding."""
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pyproject.toml").write_text("")
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "compat.py").write_text("from jax.numpy.linalg import eigvals as spectrum\n")
    (tmp_path / "pkg" / "main.py").write_text(
        "from pkg.compat import spectrum\n\n\ndef f(x):\n    return spectrum(x)\n"
    )
    first = run_cli("check", ".", "--target", "tpu", cwd=tmp_path)
    assert "pkg/main.py:5:12: JT003" in first.stdout, first.stdout + first.stderr
    (tmp_path / "pkg" / "compat.py").write_text("def spectrum(x):\n    return x\n")
    assert run_cli("check", ".", "--target", "tpu", cwd=tmp_path).stdout == "All checks passed!\n"


@pytest.mark.parametrize(
    "change",
    [
        ("--target", "cpu,tpu"),
        ("--select", "JT001"),
        ("--ignore", "JT003"),
    ],
)
def test_changing_a_setting_recomputes(change: tuple[str, str], tmp_path: Path) -> None:
    project = _project(tmp_path)
    run_cli("check", ".", "--target", "cpu", cwd=project)
    _tamper(project)
    out = run_cli("check", ".", "--target", "cpu", *change, cwd=project)
    assert MARK not in out.stdout and "JT001" in out.stdout


def test_a_setting_in_pyproject_recomputes(tmp_path: Path) -> None:
    project = _project(tmp_path)
    run_cli("check", ".", "--target", "cpu", cwd=project)
    _tamper(project)
    (project / "pyproject.toml").write_text('[tool.jaxtarget]\nseverity = { JT001 = "warning" }\n')
    out = run_cli("check", ".", "--target", "cpu", cwd=project)
    assert MARK not in out.stdout and "JT001" in out.stdout


@pytest.mark.skipif(not OTHER_JAX.exists(), reason="no jax 0.12 interpreter in .jax-venvs")
def test_another_jax_version_recomputes(tmp_path: Path) -> None:
    """scaled_matmul lowers on cpu from jax 0.11: found with this jax, not with 0.12, whatever the cache holds."""
    (tmp_path / "scaled.py").write_text(SCALED)
    here = run_cli("check", "scaled.py", "--target", "cpu", cwd=tmp_path)
    assert here.returncode == 1 and "JT003 `jax.nn.scaled_matmul`" in here.stdout
    _tamper(tmp_path)
    other = run_cli("check", "scaled.py", "--target", "cpu", "--python", str(OTHER_JAX), cwd=tmp_path)
    assert other.returncode == 0, other.stdout + other.stderr
    assert "JT003" not in other.stdout and MARK not in other.stdout
    back = run_cli("check", "scaled.py", "--target", "cpu", cwd=tmp_path)
    assert back.returncode == 1 and "JT003 `jax.nn.scaled_matmul`" in back.stdout and MARK not in back.stdout


def test_no_cache_neither_reads_nor_writes(tmp_path: Path) -> None:
    project = _project(tmp_path)
    assert run_cli("check", ".", "--target", "cpu", "--no-cache", cwd=project).returncode == 1
    assert not (project / ".jaxtarget_cache").exists()
    run_cli("check", ".", "--target", "cpu", cwd=project)
    _tamper(project)
    stored = (project / ".jaxtarget_cache" / "v1" / "results.json").read_bytes()
    (project / "new.py").write_text(USES)
    out = run_cli("check", ".", "--target", "cpu", "--no-cache", cwd=project)
    assert (
        MARK not in out.stdout and "uses.py:5:16: JT001" in out.stdout and "new.py:5:16: JT001" in out.stdout
    )
    assert (project / ".jaxtarget_cache" / "v1" / "results.json").read_bytes() == stored


def test_entries_of_files_that_are_gone_are_dropped(tmp_path: Path) -> None:
    project = _project(tmp_path)
    run_cli("check", ".", "--target", "cpu", cwd=project)
    (project / "plain.py").unlink()
    run_cli("check", "uses.py", "--target", "cpu", cwd=project)
    assert set(_entries(project)) == {str(project / "uses.py"), str(project / "broken.py")}


def test_fix_and_json_recompute_files_with_findings(tmp_path: Path) -> None:
    """A cached result carries no fix: --format json shows it and --fix applies it."""
    project = _project(tmp_path)
    run_cli("check", ".", "--target", "cpu", cwd=project)
    _tamper(project)
    items = json.loads(run_cli("check", ".", "--target", "cpu", "--format", "json", cwd=project).stdout)
    (psend,) = [i for i in items if i["code"] == "JT001"]
    assert psend["message"] != MARK and psend["fix"] is not None
    diff = run_cli("check", ".", "--target", "cpu", "--diff", cwd=project)
    assert diff.returncode == 1 and "+++ b/uses.py" in diff.stdout
    fixed = run_cli("check", ".", "--target", "cpu", "--fix", cwd=project)
    assert "1 fixed" in fixed.stdout, fixed.stdout
    assert (project / "uses.py").read_text() != USES
    after = run_cli("check", ".", "--target", "cpu", cwd=project)
    assert "JT001" not in after.stdout and MARK not in after.stdout


def test_two_runs_sharing_a_cache(tmp_path: Path) -> None:
    """Started together on the same folder: both right, the cache complete and valid afterwards."""
    project = _project(tmp_path)
    for i in range(30):
        (project / f"m{i:02}.py").write_text(USES if i % 3 == 0 else f"value = {i}\n")
    expected = run_cli("check", ".", "--target", "cpu", "--no-cache", cwd=project)
    command = [sys.executable, "-m", "jaxtarget", "check", ".", "--target", "cpu"]
    for _ in range(3):
        runs = [
            subprocess.Popen(command, cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        for run in runs:
            stdout, stderr = run.communicate(timeout=300)
            assert (run.returncode, stdout, stderr) == (expected.returncode, expected.stdout, expected.stderr)
        assert len(_entries(project)) == 33
        assert not [p for p in (project / ".jaxtarget_cache" / "v1").iterdir() if p.name != "results.json"]
    served = run_cli("check", ".", "--target", "cpu", cwd=project)
    assert served.stdout == expected.stdout


def _imported(run: subprocess.CompletedProcess[str]) -> set[str]:
    """The modules ``python -X importtime`` says the run imported."""
    return {
        line.rsplit("|", 1)[-1].strip() for line in run.stderr.splitlines() if line.startswith("import time:")
    }


def test_a_check_served_from_the_cache_does_not_load_jedi(tmp_path: Path) -> None:
    """A re-check of unchanged files reads its results from the cache: jedi and parso, a third
    of the start-up, are not even imported (the first run, with an empty resolved-name store,
    needed them)."""
    project = _project(tmp_path / "project")
    command = [sys.executable, "-X", "importtime", "-m", "jaxtarget", "check", ".", "--target", "cpu"]
    env = {**os.environ, "JAXTARGET_CACHE_HOME": str(tmp_path / "cold")}
    first = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=300, env=env)
    assert {"jedi", "parso"} <= _imported(first), first.stderr[-2000:]
    again = subprocess.run(command, cwd=project, capture_output=True, text=True, timeout=300, env=env)
    assert again.stdout == first.stdout and "uses.py:5:16: JT001" in again.stdout
    assert not {"jedi", "parso"} & _imported(again)


def test_names_are_shown_relative_to_the_working_folder_through_links(tmp_path: Path) -> None:
    """Run from a folder reached through a link, or given a file through a linked folder:
    names are relative to the working folder (links followed), as given outside it."""
    project = _project(tmp_path / "real")
    (tmp_path / "link").symlink_to(project)
    inside = run_cli(
        "check", str(tmp_path / "link" / "uses.py"), "--target", "cpu", "--no-cache", cwd=project
    )
    assert inside.stdout.startswith("uses.py:5:16: JT001"), inside.stdout
    linked = run_cli("check", "uses.py", "--target", "cpu", "--no-cache", cwd=tmp_path / "link")
    assert linked.stdout.startswith("uses.py:5:16: JT001"), linked.stdout
    (tmp_path / "elsewhere").mkdir()
    outside = run_cli(
        "check", str(project / "uses.py"), "--target", "cpu", "--no-cache", cwd=tmp_path / "elsewhere"
    )
    assert outside.stdout.startswith(f"{project.as_posix()}/uses.py:5:16: JT001"), outside.stdout
