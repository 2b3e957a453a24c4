"""README claims about the command line, proven through real `python -m jaxtarget` subprocesses.

Nothing here imports the `jaxtarget` package: every check goes through `run_cli` and reads what
the command prints and its exit status, as a user or a CI job would.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
import re
import stat
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from jsonschema import validators

from .conftest import run_cli

DATA = Path(__file__).resolve().parent / "data"

# One JT001 under shard_map, a JT001 + JT002 outside it, and a JT003 that only tpu rejects.
SOURCE = (
    "import jax\n"
    "from jax import lax\n"
    '@jax.shard_map(mesh=m, in_specs=P("i"), out_specs=P("i"))\n'
    "def f(x):\n"
    '    return lax.psend(x, "i", [(0, 1)])\n'
    "def g(x):\n"
    '    return lax.precv(x, "i", [(0, 1)])\n'
    "y = jax.numpy.linalg.eig(x)\n"
)
# (line, column, code) of every finding SOURCE has for targets cpu and tpu together
ALL_FINDINGS = [(5, 16, "JT001"), (7, 16, "JT001"), (7, 16, "JT002"), (8, 22, "JT003")]
CPU_FINDINGS = [(5, 16, "JT001"), (7, 16, "JT001"), (7, 16, "JT002")]  # eig lowers on cpu

FINDING_LINE = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<code>JT\d{3}) (?P<message>.*)$")


def _findings(out: subprocess.CompletedProcess[str]) -> list[tuple[str, int, int, str, str]]:
    """Every finding line of `check`'s text output; any other line must be the closing count."""
    found = []
    lines = out.stdout.splitlines()
    for line in lines[:-1]:
        m = FINDING_LINE.match(line)
        assert m, f"not a finding line: {line!r}\n{out.stdout}"
        found.append((m["path"], int(m["line"]), int(m["col"]), m["code"], m["message"]))
    closing = f"Found {len(found)} finding{'s' if len(found) != 1 else ''}."
    assert lines and lines[-1] == (closing if found else "All checks passed!"), out.stdout
    return found


def _where(out: subprocess.CompletedProcess[str], path: str = "send.py") -> list[tuple[int, int, str]]:
    """(line, column, code) of the findings in one file."""
    return [(line, col, code) for p, line, col, code, _ in _findings(out) if p == path]


def _one_line_error(out: subprocess.CompletedProcess[str]) -> str:
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1, out.stderr
    assert lines[0].startswith("jaxtarget: error: "), out.stderr
    return lines[0]


def _executable(path: Path, body: str) -> str:
    path.write_text(body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _pyproject(folder: Path, body: str) -> None:
    (folder / "pyproject.toml").write_text("[tool.jaxtarget]\n" + body)


@pytest.fixture
def sendpy(tmp_path: Path) -> Path:
    (tmp_path / "send.py").write_text(SOURCE)
    return tmp_path


@pytest.fixture(scope="module")
def jax_free_python(tmp_path_factory: pytest.TempPathFactory) -> str:
    """A real virtual environment made with `python -m venv --without-pip`: no jax in it."""
    where = tmp_path_factory.mktemp("nojax") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(where)], check=True)
    exe = where / "bin" / "python"
    assert subprocess.run([str(exe), "-c", "import jax"], capture_output=True).returncode != 0
    return str(exe)


@pytest.fixture(scope="module")
def jax_version() -> str:
    return importlib.metadata.version("jax")


# ------------------------------------------------------------------ 1. --select / --ignore


def test_baseline_findings_for_cpu_and_tpu(sendpy: Path) -> None:
    out = run_cli("check", "send.py", "--target", "cpu,tpu", cwd=sendpy)
    assert out.returncode == 1, out.stderr
    assert _where(out) == ALL_FINDINGS


def test_ignore_removes_the_ignored_code_and_keeps_the_others(sendpy: Path) -> None:
    out = run_cli("check", "send.py", "--target", "cpu,tpu", "--ignore", "JT001", cwd=sendpy)
    assert out.returncode == 1, out.stderr
    assert _where(out) == [(7, 16, "JT002"), (8, 22, "JT003")]
    out = run_cli("check", "send.py", "--target", "cpu,tpu", "--ignore", "JT001,JT003", cwd=sendpy)
    assert _where(out) == [(7, 16, "JT002")]


def test_ignoring_every_finding_exits_0(sendpy: Path) -> None:
    out = run_cli("check", "send.py", "--target", "cpu,tpu", "--ignore", "JT00", cwd=sendpy)
    assert out.returncode == 0, out.stdout + out.stderr
    assert _findings(out) == []


@pytest.mark.parametrize(
    ("select", "expected"),
    [
        ("JT00", ALL_FINDINGS),
        ("JT", ALL_FINDINGS),
        ("JT002", [(7, 16, "JT002")]),
        ("JT001,JT003", [(5, 16, "JT001"), (7, 16, "JT001"), (8, 22, "JT003")]),
    ],
)
def test_select_takes_codes_and_prefixes(
    sendpy: Path, select: str, expected: list[tuple[int, int, str]]
) -> None:
    out = run_cli("check", "send.py", "--target", "cpu,tpu", "--select", select, cwd=sendpy)
    assert out.returncode == 1, out.stderr
    assert _where(out) == expected


@pytest.mark.parametrize(
    ("flag", "value", "unknown"),
    [("--select", "JT9", "JT9"), ("--ignore", "JT0042", "JT0042"), ("--select", "JT001,XX1", "XX1")],
)
def test_unknown_rule_code_is_a_one_line_usage_error(
    sendpy: Path, flag: str, value: str, unknown: str
) -> None:
    out = run_cli("check", "send.py", "--target", "cpu", flag, value, cwd=sendpy)
    line = _one_line_error(out)
    assert flag in line and f"unknown rule code {unknown!r}" in line
    assert out.stdout == ""


# ------------------------------------------------------------------ 2. pyproject [tool.jaxtarget]


def test_pyproject_interpreter_is_used_by_check(sendpy: Path, jax_free_python: str) -> None:
    _pyproject(sendpy, 'targets = ["cpu"]\n')
    with_jax = run_cli("check", "send.py", cwd=sendpy)
    assert with_jax.returncode == 1 and "resolved from imports only" not in with_jax.stderr

    _pyproject(sendpy, f'targets = ["cpu"]\ninterpreter = ["{jax_free_python}"]\n')
    out = run_cli("check", "send.py", cwd=sendpy)
    assert out.returncode == 1, out.stderr
    note = f"jaxtarget: note: jax is not installed in {jax_free_python}; resolved from imports only"
    assert note in out.stderr.splitlines(), out.stderr
    # the calls are still found, from the imports alone
    assert _where(out) == CPU_FINDINGS


def test_pyproject_interpreter_that_does_not_exist_is_a_one_line_error(sendpy: Path) -> None:
    missing = sendpy / "no-such-venv" / "bin" / "python"
    _pyproject(sendpy, f'targets = ["cpu"]\ninterpreter = ["{missing}"]\n')
    line = _one_line_error(run_cli("check", "send.py", cwd=sendpy))
    assert str(missing) in line and "not found" in line


def test_cli_python_overrides_pyproject_interpreter(sendpy: Path) -> None:
    _pyproject(sendpy, f'targets = ["cpu"]\ninterpreter = ["{sendpy / "missing" / "python"}"]\n')
    out = run_cli("check", "send.py", "--python", sys.executable, cwd=sendpy)
    assert out.returncode == 1, out.stderr
    assert _where(out) == CPU_FINDINGS
    assert "note:" not in out.stderr


def test_relative_pyproject_interpreter_is_relative_to_the_pyproject(tmp_path: Path) -> None:
    (tmp_path / "tools").mkdir()
    _executable(tmp_path / "tools" / "python", f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    _pyproject(tmp_path, 'targets = ["cpu"]\ninterpreter = ["tools/python"]\n')
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "send.py").write_text(SOURCE)
    assert run_cli("check", "src/send.py", cwd=tmp_path).returncode == 1  # from the project root
    out = run_cli("check", "send.py", cwd=tmp_path / "src")
    assert out.returncode == 1, out.stderr
    assert _where(out) == CPU_FINDINGS


def test_pyproject_probe_timeout_is_used_by_probe(tmp_path: Path) -> None:
    slow = _executable(tmp_path / "slow-python", "#!/bin/sh\nsleep 30\n")
    _pyproject(tmp_path, f'interpreter = ["{slow}"]\nprobe-timeout-seconds = 1\n')
    out = run_cli("probe", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    assert out.stderr.strip().splitlines() == [
        "jaxtarget: probe failed: the probe did not finish within 1 s and was killed"
    ]
    out = run_cli("probe", "--format", "json", cwd=tmp_path)
    assert out.returncode == 1
    assert json.loads(out.stdout) == {
        "ok": False,
        "error": {"kind": "timeout", "message": "the probe did not finish within 1 s and was killed"},
    }


def test_cli_timeout_overrides_pyproject_probe_timeout(tmp_path: Path) -> None:
    slow = _executable(tmp_path / "slow-python", "#!/bin/sh\nsleep 30\n")
    _pyproject(tmp_path, f'interpreter = ["{slow}"]\nprobe-timeout-seconds = 1\n')
    out = run_cli("probe", "--timeout", "2", cwd=tmp_path)
    assert out.returncode == 1
    assert "did not finish within 2 s and was killed" in out.stderr, out.stderr


def _nested(root: Path, inner_pyproject: str) -> None:
    _pyproject(root, 'targets = ["tpu"]\n')
    (root / "sub").mkdir()
    (root / "sub" / "pyproject.toml").write_text(inner_pyproject)
    (root / "top.py").write_text(SOURCE)
    (root / "sub" / "inner.py").write_text(SOURCE)


def test_nearest_pyproject_wins(tmp_path: Path) -> None:
    _nested(tmp_path, '[tool.jaxtarget]\ntargets = ["cpu"]\n')
    out = run_cli("check", ".", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    found = _findings(out)
    top = [f for f in found if f[0] == "top.py"]
    inner = [f for f in found if f[0] == "sub/inner.py"]
    assert len(top) + len(inner) == len(found)
    assert [(line, col, code) for _, line, col, code, _ in top] == ALL_FINDINGS
    assert [(line, col, code) for _, line, col, code, _ in inner] == CPU_FINDINGS
    assert all("target 'tpu' would" in msg for _, _, _, code, msg in top if code == "JT001")
    assert all("target 'cpu' would" in msg for _, _, _, code, msg in inner if code == "JT001")
    # the same when the file is named, and from inside the subfolder
    named = run_cli("check", "sub/inner.py", cwd=tmp_path)
    assert _where(named, "sub/inner.py") == CPU_FINDINGS
    inside = run_cli("check", ".", cwd=tmp_path / "sub")
    assert _where(inside, "inner.py") == CPU_FINDINGS


@pytest.mark.parametrize(
    "inner",
    [
        pytest.param('[project]\nname = "sub"\n', id="other-tables-only"),
        pytest.param('[project]\nname = "sub"\ndependencies = ["jaxtarget"]\n', id="mentions-jaxtarget"),
    ],
)
def test_nearest_pyproject_without_a_table_does_not_hide_the_outer_table(tmp_path: Path, inner: str) -> None:
    _nested(tmp_path, inner)
    out = run_cli("check", "sub/inner.py", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    # the outer targets = ["tpu"] apply: JT003 (eig does not lower on tpu) is reported
    assert _where(out, "sub/inner.py") == ALL_FINDINGS


def test_cli_target_overrides_pyproject_targets(sendpy: Path) -> None:
    _pyproject(sendpy, 'targets = ["gpu"]\n')
    gpu = run_cli("check", "send.py", cwd=sendpy)
    assert gpu.returncode == 1, gpu.stderr
    assert _where(gpu) == [(7, 16, "JT002")]  # psend/precv lower on gpu; only the shard_map need is left
    out = run_cli("check", "send.py", "--target", "tpu", cwd=sendpy)
    assert out.returncode == 1, out.stderr
    assert _where(out) == ALL_FINDINGS
    assert [msg for _, _, _, code, msg in _findings(out) if code == "JT001"] == [
        "`lax.psend` only lowers on GPU (cuda, rocm); target 'tpu' would raise NotImplementedError",
        "`lax.precv` only lowers on GPU (cuda, rocm); target 'tpu' would raise NotImplementedError",
    ]


# ------------------------------------------------------------------ 3. which files `check` reads

SKIPPED = {
    "dist": "dist/mod.py",
    "node_modules": "node_modules/pkg/mod.py",
    "site-packages": "lib/python3.11/site-packages/mod.py",
    "build": "build/lib/mod.py",
    "git": ".git/hooks/mod.py",
    "tool cache": ".mypy_cache/mod.py",
    "tox": ".tox/py311/mod.py",
    "virtual environment": "myenv/lib/mod.py",
}
#: dot-folders that hold real code (NVIDIA's JAX-Toolbox keeps JAX code under .github/container/)
CHECKED = {"github": ".github/container/mod.py", "dot-folder": ".hidden/mod.py"}


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "real.py").write_text(SOURCE)
    for rel in [*SKIPPED.values(), *CHECKED.values()]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SOURCE)
    (tmp_path / "myenv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    return tmp_path


def test_check_of_a_folder_skips_build_dist_vcs_cache_and_venv_folders(tree: Path) -> None:
    out = run_cli("check", ".", "--target", "cpu", cwd=tree)
    assert out.returncode == 1, out.stderr
    found = _findings(out)
    assert {f[0] for f in found} == {"pkg/real.py", *CHECKED.values()}, out.stdout
    assert _where(out, "pkg/real.py") == CPU_FINDINGS
    assert _where(out, CHECKED["github"]) == CPU_FINDINGS


def test_a_folder_is_skipped_for_its_pyvenv_cfg_not_its_name(tree: Path) -> None:
    (tree / "myenv" / "pyvenv.cfg").unlink()
    out = run_cli("check", ".", "--target", "cpu", cwd=tree)
    assert {f[0] for f in _findings(out)} == {
        "pkg/real.py",
        SKIPPED["virtual environment"],
        *CHECKED.values(),
    }


@pytest.mark.parametrize("kind", sorted(SKIPPED))
def test_a_file_named_on_the_command_line_is_checked_inside_a_skipped_folder(tree: Path, kind: str) -> None:
    rel = SKIPPED[kind]
    out = run_cli("check", rel, "--target", "cpu", cwd=tree)
    assert out.returncode == 1, out.stdout + out.stderr
    assert _where(out, rel) == CPU_FINDINGS
    assert {f[0] for f in _findings(out)} == {rel}


def test_named_files_and_folders_together(tree: Path) -> None:
    out = run_cli("check", "pkg", SKIPPED["dist"], SKIPPED["tox"], "--target", "cpu", cwd=tree)
    assert out.returncode == 1
    assert {f[0] for f in _findings(out)} == {"pkg/real.py", SKIPPED["dist"], SKIPPED["tox"]}


# ------------------------------------------------------------------ 4. the probe's output


def test_probe_text_shows_psend_precv_per_platform_and_a_summary(tmp_path: Path, jax_version: str) -> None:
    out = run_cli("probe", "--python", sys.executable, "--format", "text", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    start = lines.index("psend+precv:")
    rows = {}
    for line in lines[start + 1 : start + 5]:
        m = re.match(r"^  (cpu|cuda|rocm|tpu) +([✓✗]) (.*)$", line)
        assert m, line
        rows[m[1]] = (m[2], m[3])
    not_on_gpu = "NotImplementedError: psend is currently only implemented on GPU"
    assert rows == {
        "cpu": ("✗", not_on_gpu),
        "cuda": ("✓", "lowers"),
        "rocm": ("✓", "lowers"),
        "tpu": ("✗", not_on_gpu),
    }
    assert "ppermute:" in lines[start + 5 :]
    assert "  ran on cpu: [0.0, 1.0, 2.0, 3.0] -> [0.0, 0.0, 0.0, 1.0]" in lines
    assert lines[-1].startswith("summary")
    summary = rf"summary  cpu ✗ · cuda ✓ · rocm ✓ · tpu ✗ — jax {re.escape(jax_version)} +\(\d+(\.\d+)? s\)"
    assert re.fullmatch(summary, lines[-1]), lines[-1]


def test_probe_env_only_json_has_versions_and_backend_and_no_cases(tmp_path: Path, jax_version: str) -> None:
    out = run_cli("probe", "--python", sys.executable, "--env-only", "--format", "json", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads(out.stdout)
    assert data["jax"] == jax_version
    assert data["jaxlib"] == importlib.metadata.version("jaxlib")
    assert data["default_backend"] == "cpu"
    assert data["python"]["version"] == ".".join(map(str, sys.version_info[:3]))
    assert isinstance(data["plugins"], list)
    assert data["devices"] == ["cpu:0", "cpu:1"]  # the two host devices the probe asks XLA for
    assert "cases" not in data


@pytest.mark.parametrize("seconds", ["0", "-1"])
def test_probe_timeout_must_be_positive(tmp_path: Path, seconds: str) -> None:
    out = run_cli("probe", "--python", sys.executable, "--timeout", seconds, cwd=tmp_path)
    line = _one_line_error(out)
    assert "--timeout" in line
    assert out.stdout == ""


# ------------------------------------------------------------------ 5. the probe runs no workspace code


def test_probe_runs_no_workspace_code(tmp_path: Path, jax_version: str) -> None:
    work = tmp_path / "workspace"
    work.mkdir()
    jax_marker = tmp_path / "workspace-jax-ran"
    site_marker = tmp_path / "workspace-sitecustomize-ran"
    (work / "jax.py").write_text(
        f"open({str(jax_marker)!r}, 'w').write('imported')\n__version__ = '0.0.0-workspace'\n"
    )
    (work / "sitecustomize.py").write_text(f"open({str(site_marker)!r}, 'w').write('imported')\n")
    out = run_cli("probe", "--python", sys.executable, "--format", "json", cwd=work)
    assert out.returncode == 0, out.stdout + out.stderr
    data = json.loads(out.stdout)
    assert data["jax"] == jax_version  # the installed jax, not the workspace's jax.py
    assert data["cases"]["psend+precv"]["cuda"]["ok"] is True
    assert data["cases"]["psend+precv"]["cpu"]["ok"] is False
    assert not jax_marker.exists()
    assert not site_marker.exists()


# ------------------------------------------------------------------ 6. SARIF against the OASIS schema

SCHEMA = DATA / "sarif-schema-2.1.0.json"
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


@pytest.fixture(scope="module")
def sarif_validator() -> jsonschema.protocols.Validator:
    raw = SCHEMA.read_bytes()
    assert hashlib.sha256(raw).hexdigest() == SCHEMA_SHA256, "tests/data/sarif-schema-2.1.0.json was modified"
    schema = json.loads(raw)
    assert (
        schema["id"]
        == "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
    )
    cls = validators.validator_for(schema, default=None)
    assert cls is not None, schema["$schema"]
    assert schema["$schema"] == "http://json-schema.org/draft-04/schema#"
    assert cls is jsonschema.Draft4Validator
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def _sarif_errors(validator: jsonschema.protocols.Validator, doc: object) -> list[str]:
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)]


def test_sarif_with_findings_validates_against_the_oasis_schema(
    tmp_path: Path, sarif_validator: jsonschema.protocols.Validator
) -> None:
    (tmp_path / "send.py").write_text(SOURCE)
    (tmp_path / "emoji.py").write_text('from jax import lax\ny = ("🚀", lax.psend(x, "i", p))\n')
    out = run_cli("check", "send.py", "emoji.py", "--target", "cpu,tpu", "--format", "sarif", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    assert _sarif_errors(sarif_validator, doc) == []
    (run,) = doc["runs"]
    got = [
        (
            Path(r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]).name,
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
            r["locations"][0]["physicalLocation"]["region"]["startColumn"],
            r["ruleId"],
        )
        for r in run["results"]
    ]
    # SARIF columns are 1-based UTF-16 units: the rocket counts two
    assert got == [("send.py", *f) for f in ALL_FINDINGS] + [
        ("emoji.py", 2, 16, "JT001"),
        ("emoji.py", 2, 16, "JT002"),
    ]
    # the validator is not vacuous: the same log with a level SARIF does not define is rejected
    run["results"][0]["level"] = "fatal"
    assert _sarif_errors(sarif_validator, doc) != []


def test_sarif_for_a_syntax_error_validates_against_the_oasis_schema(
    tmp_path: Path, sarif_validator: jsonschema.protocols.Validator
) -> None:
    (tmp_path / "broken.py").write_text("def f(:\n")
    out = run_cli("check", "broken.py", "--target", "cpu", "--format", "sarif", cwd=tmp_path)
    assert out.returncode == 1, out.stderr
    doc = json.loads(out.stdout)
    assert _sarif_errors(sarif_validator, doc) == []
    (run,) = doc["runs"]
    assert run["results"] == []
    (note,) = [n for inv in run["invocations"] for n in inv.get("toolExecutionNotifications", [])]
    assert note["level"] == "error" and note["message"]["text"].startswith("SyntaxError")
    location = note["locations"][0]["physicalLocation"]
    assert location["artifactLocation"] == {"uri": "broken.py", "uriBaseId": "%SRCROOT%"}
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.resolve().as_uri() + "/"
    assert location["region"]["startLine"] == 1
