"""Quick fix titles say what each fix does, and the test skip sorts and reuses like a careful author."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from jaxtarget.fixes.layout import apply_edits
from jaxtarget.rules.registry import RULES

from .conftest import ROOT, CheckFn

RUFF = Path(sys.executable).with_name("ruff")
CASES = [(rule, i, ex) for rule in RULES for i, ex in enumerate(rule.invalid)]


@pytest.mark.parametrize(("rule", "index", "ex"), CASES, ids=[f"{r.code}-{i}" for r, i, _ in CASES])
@pytest.mark.parametrize("test_file", [False, True], ids=["module", "test-file"])
def test_titles_of_one_diagnostic_differ_early_and_say_what_they_do(
    check: CheckFn, rule: object, index: int, ex: object, test_file: bool
) -> None:
    from jaxtarget.rules.base import Example

    assert isinstance(ex, Example)
    source = ex.source.replace("def ", "def test_", 1) if test_file else ex.source
    analysis = check(source, ex.targets, "tests/test_x.py" if test_file else ex.path)
    assert analysis.findings
    for finding in analysis.findings:
        fixes = analysis.fixes(finding)
        titles = [fix.title for fix in fixes]
        assert len({t[:40] for t in titles}) == len(titles), titles
        for fix in fixes:
            if fix.kind == "guard":  # it raises on the other backends: the title says so
                assert "raise NotImplementedError elsewhere" in fix.title, fix.title
            if fix.kind == "ppermute":
                assert fix.title.startswith("Fall back to lax.ppermute"), fix.title
            if fix.kind == "skip-test":
                assert fix.title.startswith("Skip `test_") and "pytest.mark.skipif" in fix.title, fix.title


HEADS = {
    "stdlib only": "import os\nimport sys\n",
    "third party, straight and from": "import os\n\nimport jax\nimport numpy as np\nfrom jax import lax\n",
    "after pytest's place": "import jax\nimport zarr\nfrom jax import lax\n",
    "first party after": "from jax import lax\n\nfrom mypkg import helpers\n",
    "stdlib and first party": "import os\n\nfrom mypkg import helpers\n",
    "docstring and future": '"""Tests."""\n\nfrom __future__ import annotations\n\nimport jax\nfrom jax import lax\n',
    "relative": "from jax import lax\n\nfrom . import helpers\n",
}


def _skip_fixed(check: CheckFn, project: Path, source: str) -> str:
    path = project / "tests" / "test_send.py"
    path.write_text(source)
    analysis = check(source, ("cpu",), str(path))
    finding = next(f for f in analysis.findings if f.code == "JT001")
    (fix,) = [f for f in analysis.fixes(finding) if f.kind == "skip-test"]
    return apply_edits(source, fix.edits)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'mypkg'\n")
    (tmp_path / "mypkg").mkdir()
    (tmp_path / "mypkg" / "__init__.py").write_text("")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "__init__.py").write_text("")
    (tmp_path / "tests" / "helpers.py").write_text("")
    return tmp_path


def _isort_clean(project: Path, source: str) -> subprocess.CompletedProcess[str]:
    path = project / "tests" / "test_send.py"
    path.write_text(source)
    return subprocess.run(
        [str(RUFF), "check", "--isolated", "--select", "I001", "--config", f"src = ['{project}']", str(path)],
        capture_output=True,
        text=True,
        cwd=project,
    )


@pytest.mark.parametrize("head", list(HEADS.values()), ids=list(HEADS))
def test_skip_puts_import_pytest_where_isort_would(check: CheckFn, project: Path, head: str) -> None:
    local = "" if "from jax import lax" in head else "    from jax import lax\n\n"
    source = head + f'\n\ndef test_send(x):\n{local}    lax.psend(x, "i", [(0, 1)])\n'
    before = _isort_clean(project, source)
    assert before.returncode == 0, (
        before.stdout + before.stderr
    )  # sorted before: only the fix could unsort it
    fixed = _skip_fixed(check, project, source)
    assert "import pytest\n" in fixed and "@pytest.mark.skipif" in fixed, fixed
    result = _isort_clean(project, fixed)
    assert result.returncode == 0, fixed + result.stdout + result.stderr


HELPER = 'def has_gpu_backend() -> bool:\n    return jax.default_backend() == "gpu"\n'
TEST = 'def test_send(x):\n    lax.psend(x, "i", [(0, 1)])\n'


def test_skip_reuses_the_files_helper(check: CheckFn, project: Path) -> None:
    source = f"import jax\nfrom jax import lax\n\n\n{HELPER}\n\n{TEST}"
    fixed = _skip_fixed(check, project, source)
    assert fixed.count("def has_gpu_backend") == 1, fixed
    assert "@pytest.mark.skipif(not has_gpu_backend()," in fixed, fixed
    assert _isort_clean(project, fixed).returncode == 0, fixed


def test_skip_adds_no_second_helper_when_the_files_comes_after_the_test(
    check: CheckFn, project: Path
) -> None:
    # a decorator runs at import, before a helper defined below it exists: the test is spelled out
    source = f"import jax\nfrom jax import lax\n\n\n{TEST}\n\n{HELPER}"
    fixed = _skip_fixed(check, project, source)
    assert fixed.count("def has_gpu_backend") == 1, fixed
    assert "has_gpu_backend()," not in fixed, fixed
    namespace: dict[str, object] = {}
    exec(compile(fixed, "test_send.py", "exec"), namespace)  # imports and decorates without a NameError
    assert callable(namespace["test_send"])


def test_skip_adds_the_helper_once_without_one(check: CheckFn, project: Path) -> None:
    source = textwrap.dedent(
        """\
        from jax import lax


        def test_send(x):
            lax.psend(x, "i", [(0, 1)])
        """
    )
    fixed = _skip_fixed(check, project, source)
    assert fixed.count("def has_gpu_backend") == 1, fixed
    assert "import jax\nimport pytest\nfrom jax import lax\n" in fixed, fixed
    assert _isort_clean(project, fixed).returncode == 0, fixed


def test_ruff_is_there() -> None:
    assert RUFF.exists() and ROOT.exists()


# ---------------------------------------------------------------- the project's own helper
# modelled on projects whose tests import their device checks from a shared module
# (google/maxtext MaxText/tests, keras-team/keras keras/src/testing)


def _fixed(check: CheckFn, path: Path, source: str, kind: str) -> str:
    path.write_text(source)
    analysis = check(source, ("cpu",), str(path))
    finding = next(f for f in analysis.findings if f.code == "JT001")
    (fix,) = [f for f in analysis.fixes(finding) if f.kind == kind]
    return apply_edits(source, fix.edits)


def _runs(project: Path, path: Path, fixed: str) -> None:
    """The fixed module imports where it lives (its helper found) and runs its skip decorator."""
    path.write_text(fixed)
    module = ".".join(path.relative_to(project).with_suffix("").parts)
    proc = subprocess.run(
        [sys.executable, "-c", f"import {module}"],
        cwd=project,
        env={"PYTHONPATH": str(project), "JAX_PLATFORMS": "cpu", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, fixed + proc.stderr


@pytest.mark.parametrize("kind", ["skip-test", "guard"])
def test_fixes_import_the_projects_helper(check: CheckFn, project: Path, kind: str) -> None:
    (project / "tests" / "gpu.py").write_text(f"import jax\n\n\n{HELPER}")
    source = f"from jax import lax\n\n\n{TEST}"
    path = project / "tests" / "test_send.py"
    fixed = _fixed(check, path, source, kind)
    assert "def has_gpu_backend" not in fixed, fixed
    assert "from tests.gpu import has_gpu_backend\n" in fixed, fixed
    assert "import jax\n" not in fixed, fixed  # only a helper of its own would have needed jax
    if kind == "skip-test":
        assert "@pytest.mark.skipif(not has_gpu_backend()," in fixed, fixed
        assert _isort_clean(project, fixed).returncode == 0, fixed
    # the imported helper is a guard the analysis reads: the finding is gone
    assert [f.code for f in check(fixed, ("cpu",), str(path)).findings if f.code == "JT001"] == []
    _runs(project, path, fixed)


def test_the_helper_of_a_test_folder_without_init_is_imported_by_its_module_name(
    check: CheckFn, tmp_path: Path
) -> None:
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'p'\n")
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "conftest_helpers.py").write_text(
        'import jax\n\n\ndef has_gpu_backend():\n    return any(d.platform == "gpu" for d in jax.devices())\n'
    )
    # a package elsewhere that no import root of the test reaches
    (tmp_path / "tools" / "inner").mkdir(parents=True)
    (tmp_path / "tools" / "inner" / "gpu.py").write_text(f"import jax\n\n\n{HELPER}")
    path = tmp_path / "tests" / "test_send.py"
    fixed = _fixed(check, path, f"from jax import lax\n\n\n{TEST}", "skip-test")
    assert "from conftest_helpers import has_gpu_backend\n" in fixed, fixed
    assert [f.code for f in check(fixed, ("cpu",), str(path)).findings if f.code == "JT001"] == []


@pytest.mark.parametrize(
    "helper",
    [
        'import jax\n\n\ndef has_gpu_backend():\n    return jax.default_backend() == "tpu"\n',
        'import os\n\n\ndef has_gpu_backend():\n    return os.environ.get("GPU") == "1"\n',
        'import jax\n\n\ndef has_gpu_backend(index):\n    return jax.devices()[index].platform == "gpu"\n',
    ],
    ids=["tests-for-tpu", "reads-the-environment", "needs-an-argument"],
)
def test_a_helper_that_is_no_gpu_test_is_not_imported(check: CheckFn, project: Path, helper: str) -> None:
    (project / "tests" / "gpu.py").write_text(helper)
    path = project / "tests" / "test_send.py"
    fixed = _fixed(check, path, f"from jax import lax\n\n\n{TEST}", "skip-test")
    assert "tests.gpu" not in fixed, fixed
    assert fixed.count("def has_gpu_backend") == 1, fixed
    _runs(project, path, fixed)


def test_a_packages_own_helper_is_imported_from_the_package(check: CheckFn, project: Path) -> None:
    (project / "mypkg" / "testing").mkdir()
    (project / "mypkg" / "testing" / "__init__.py").write_text(f"import jax\n\n\n{HELPER}")
    path = project / "tests" / "test_send.py"
    fixed = _fixed(check, path, f"from jax import lax\n\n\n{TEST}", "skip-test")
    assert "from mypkg.testing import has_gpu_backend\n" in fixed, fixed
    assert _isort_clean(project, fixed).returncode == 0, fixed
    _runs(project, path, fixed)


def test_of_several_helpers_the_shallowest_is_imported(check: CheckFn, project: Path) -> None:
    # the same GPU test two packages down, one down in the project's package, and in the
    # tests package itself, named to sort last: the shallowest is imported
    for folder in ("tests/support/devices", "mypkg/testing"):
        (project / folder).mkdir(parents=True)
        for at in range(len(Path(folder).parts)):
            init = project.joinpath(*Path(folder).parts[: at + 1], "__init__.py")
            if not init.exists():
                init.write_text("")
        (project / folder / "gpu.py").write_text(f"import jax\n\n\n{HELPER}")
    (project / "tests" / "zz_gpu.py").write_text(f"import jax\n\n\n{HELPER}")
    path = project / "tests" / "test_send.py"
    fixed = _fixed(check, path, f"from jax import lax\n\n\n{TEST}", "skip-test")
    assert "from tests.zz_gpu import has_gpu_backend\n" in fixed, fixed
    _runs(project, path, fixed)


def test_a_helper_no_import_reaches_is_not_imported(check: CheckFn, project: Path) -> None:
    # a folder without `__init__.py` under the tests package, a virtual environment's and
    # a build folder's packages: none is a module the test can import by that name
    for folder in ("tests/scripts", "build/lib/gpuutil", ".venv/gpuutil"):
        (project / folder).mkdir(parents=True)
        (project / folder / "gpu.py").write_text(f"import jax\n\n\n{HELPER}")
    for package in ("build", "build/lib", "build/lib/gpuutil"):
        (project / package / "__init__.py").write_text("")
    path = project / "tests" / "test_send.py"
    fixed = _fixed(check, path, f"from jax import lax\n\n\n{TEST}", "skip-test")
    assert "import has_gpu_backend" not in fixed, fixed
    assert fixed.count("def has_gpu_backend") == 1, fixed
    _runs(project, path, fixed)
