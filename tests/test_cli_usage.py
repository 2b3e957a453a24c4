"""The command line with odd input: a clear one-line error and exit 2, never a traceback;
and `jaxtarget config`, the effective settings for a file and where each was set."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from jaxtarget.config import SETTINGS

from .conftest import run_cli

PSEND = 'from jax import lax\n\ny = lax.psend(x, "i", [(0, 1)])\n'


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(
        '[tool.jaxtarget]\ntargets = ["cpu", "tpu"]\nignore = ["JT002"]\n'
    )
    (tmp_path / "m.py").write_text(PSEND)
    (tmp_path / "notes.txt").write_text(PSEND)  # Python text in a file that is not Python
    return tmp_path


USAGE_ERRORS = {
    "no command": ((), "expected a command: check, rules, rule, probe, config, lsp"),
    "unknown option": (("--bogus",), "unknown option --bogus; expected a command"),
    "unknown command": (("chek",), "invalid choice: 'chek'"),
    "text file": (("check", "notes.txt"), "not a Python file: notes.txt"),
    "device": (("check", "/dev/null"), "not a file or folder: /dev/null"),
    "missing": (("check", "gone.py"), "no such file or folder: gone.py"),
    "bad format": (("check", "--format", "xml"), "invalid choice: 'xml'"),
    "bad target": (("check", "--target", "metal"), "unknown backend 'metal'"),
    "no rule": (("rule",), "required: code"),
    "unknown rule": (("rule", "JT999"), "unknown rule 'JT999'"),
    "probe flags": (("probe", "--all", "--scan"), "exclude each other"),
    "probe timeout": (("probe", "--timeout", "soon"), "--timeout: expected seconds"),
    "lsp option": (("lsp", "--tcp"), "unrecognized arguments: --tcp"),
    "config missing": (("config", "gone.py"), "no such file or folder: gone.py"),
    "config flag": (("config", "--select", "XX1"), "unknown rule code 'XX1'"),
}


@pytest.mark.parametrize("case", sorted(USAGE_ERRORS))
def test_usage_errors_are_one_clear_line_and_exit_2(project: Path, case: str) -> None:
    args, message = USAGE_ERRORS[case]
    out = run_cli(*args, cwd=project)
    assert out.returncode == 2, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    assert out.stderr.startswith("jaxtarget: error: ") and out.stderr.count("\n") == 1, out.stderr
    assert message in out.stderr, out.stderr


def test_check_without_a_path_checks_the_current_folder(project: Path) -> None:
    out = run_cli("check", cwd=project)
    assert out.returncode == 1, out.stderr
    assert "m.py:3:9: JT001" in out.stdout and "notes.txt" not in out.stdout


def test_a_python_script_without_suffix_is_checked(project: Path) -> None:
    script = project / "run-step"
    script.write_text("#!/usr/bin/env python3\n" + PSEND)
    out = run_cli("check", "run-step", cwd=project)
    assert out.returncode == 1 and "run-step:4:9: JT001" in out.stdout, out.stdout + out.stderr


def test_config_names_each_settings_source(project: Path) -> None:
    out = run_cli("config", "m.py", "--ignore", "JT003", "--format", "json", cwd=project)
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    pyproject = str((project / "pyproject.toml").resolve())
    assert data["pyproject"] == pyproject
    rows = data["settings"]
    assert list(rows) == [s.pyproject[0] for s in SETTINGS]  # every setting of the table, in order
    assert rows["targets"] == {"value": ["cpu", "tpu"], "source": pyproject, "flag": "--target"}
    assert rows["ignore"] == {"value": ["JT003"], "source": "command line", "flag": "--ignore"}
    assert rows["select"] == {"value": [], "source": "default", "flag": "--select"}
    assert rows["probe-timeout-seconds"]["value"] == 60.0
    assert rows["probe-timeout-seconds"]["source"] == "default"


def test_config_text_without_a_pyproject(tmp_path: Path) -> None:
    out = run_cli("config", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "pyproject.toml: none applies" in out.stdout
    targets = next(line for line in out.stdout.splitlines() if line.startswith("targets "))
    assert targets.split() == ["targets", '["auto"]', "default"]


def test_config_reports_a_bad_pyproject_value(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["metal"]\n')
    out = run_cli("config", "m.py", cwd=project)
    assert out.returncode == 2
    assert "unknown backend 'metal'" in out.stdout
    targets = next(line for line in out.stdout.splitlines() if line.startswith("targets "))
    assert targets.split() == ["targets", '["auto"]', "default"]
