"""`jaxtarget check` end to end as a subprocess: exit codes, formats, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from .conftest import ROOT, run_cli

SOURCE = (
    "import jax\nfrom jax import lax\n"
    '@jax.shard_map(mesh=m, in_specs=P("i"), out_specs=P("i"))\n'
    'def f(x):\n    return lax.psend(x, "i", [(0, 1)])\n'
)

# The parts of the SARIF 2.1.0 schema that consumers (code scanning) rely on.
SARIF_SHAPE = {
    "type": "object",
    "required": ["version", "runs", "$schema"],
    "properties": {
        "version": {"const": "2.1.0"},
        "runs": {
            "type": "array",
            "minItems": 1,
            "items": {
                "type": "object",
                "required": ["tool", "results"],
                "properties": {
                    "tool": {
                        "type": "object",
                        "required": ["driver"],
                        "properties": {
                            "driver": {
                                "type": "object",
                                "required": ["name", "rules"],
                                "properties": {
                                    "rules": {
                                        "type": "array",
                                        "items": {
                                            "type": "object",
                                            "required": ["id", "shortDescription"],
                                        },
                                    }
                                },
                            }
                        },
                    },
                    "results": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "required": ["ruleId", "message", "locations", "level"],
                            "properties": {
                                "level": {"enum": ["none", "note", "warning", "error"]},
                                "message": {"type": "object", "required": ["text"]},
                                "locations": {
                                    "type": "array",
                                    "items": {
                                        "type": "object",
                                        "required": ["physicalLocation"],
                                        "properties": {
                                            "physicalLocation": {
                                                "type": "object",
                                                "required": ["artifactLocation", "region"],
                                                "properties": {
                                                    "region": {
                                                        "type": "object",
                                                        "required": ["startLine", "startColumn"],
                                                        "properties": {
                                                            "startLine": {
                                                                "type": "integer",
                                                                "minimum": 1,
                                                            },
                                                            "startColumn": {
                                                                "type": "integer",
                                                                "minimum": 1,
                                                            },
                                                        },
                                                    }
                                                },
                                            }
                                        },
                                    },
                                },
                            },
                        },
                    },
                },
            },
        },
    },
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "send.py").write_text(SOURCE)
    (tmp_path / "pkg" / "clean.py").write_text("import jax\nprint(jax.numpy.ones(3))\n")
    (tmp_path / ".venv" / "lib").mkdir(parents=True)
    (tmp_path / ".venv" / "lib" / "hidden.py").write_text(SOURCE)
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "gen.py").write_text(SOURCE)
    return tmp_path


def test_exit_codes(project: Path) -> None:
    found = run_cli("check", ".", "--target", "cpu", cwd=project)
    assert found.returncode == 1, found.stderr
    assert found.stdout.splitlines()[0].startswith("pkg/send.py:5:16: JT001 `lax.psend` only lowers")
    assert ".venv" not in found.stdout and "build" not in found.stdout
    clean = run_cli("check", "pkg/clean.py", "--target", "cpu", cwd=project)
    assert clean.returncode == 0 and "All checks passed!" in clean.stdout
    assert run_cli("check", ".", "--target", "cuda", cwd=project).returncode == 0
    bad = run_cli("check", ".", "--target", "metal", cwd=project)
    assert bad.returncode == 2 and "unknown backend 'metal'" in bad.stderr
    assert "Traceback" not in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    assert run_cli("check", "missing/", cwd=project).returncode == 2
    assert run_cli("check", ".", "--select", "XX1", cwd=project).returncode == 2
    assert run_cli("check", ".", "--python", "/no/such/python", cwd=project).returncode == 2


def test_pyproject_targets_and_exclude(project: Path) -> None:
    (project / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["gpu"]\n')
    assert run_cli("check", ".", cwd=project).returncode == 0
    (project / "pyproject.toml").write_text(
        '[tool.jaxtarget]\ntargets = ["tpu"]\nexclude = ["pkg/send.py"]\n'
    )
    assert run_cli("check", ".", cwd=project).returncode == 0
    assert run_cli("check", "pkg/send.py", cwd=project).returncode == 1
    (project / "pyproject.toml").write_text(
        '[tool.jaxtarget]\ntargets = "tpu"\nseverity = {JT001 = "loud"}\n'
    )
    bad = run_cli("check", ".", cwd=project)
    assert bad.returncode == 2 and "severity.JT001" in bad.stderr


def test_json_is_ruff_shaped(project: Path) -> None:
    out = run_cli("check", "pkg", "--target", "cpu,tpu", "--format", "json", cwd=project)
    items = json.loads(out.stdout)
    codes = sorted(i["code"] for i in items)
    assert codes == ["JT001"]
    item = next(i for i in items if i["code"] == "JT001")
    assert set(item) >= {
        "code",
        "message",
        "filename",
        "location",
        "end_location",
        "fix",
        "url",
        "noqa_row",
    }
    assert item["location"] == {"row": 5, "column": 16}
    assert item["end_location"] == {"row": 5, "column": 21}
    assert item["filename"].endswith("send.py") and Path(item["filename"]).is_absolute()
    assert item["fix"]["edits"] and "has_gpu_backend" in item["fix"]["edits"][0]["content"]


def test_github_annotations(project: Path) -> None:
    out = run_cli("check", "pkg", "--target", "cpu", "--format", "github", cwd=project)
    line = out.stdout.splitlines()[0]
    assert line.startswith(
        "::error title=jaxtarget (JT001),file=pkg/send.py,line=5,col=16,endLine=5,endColumn=21::JT001 "
    )


def test_sarif_is_valid(project: Path) -> None:
    (project / "pkg" / "emoji.py").write_text('from jax import lax\ny = ("🚀", lax.psend(x, "i", p))\n')
    out = run_cli("check", "pkg", "--target", "cpu", "--format", "sarif", cwd=project)
    doc = json.loads(out.stdout)
    jsonschema.validate(doc, SARIF_SHAPE)
    results = doc["runs"][0]["results"]
    emoji = next(
        r
        for r in results
        if r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("emoji.py")
        and r["ruleId"] == "JT001"
    )
    # SARIF counts UTF-16 code units: the rocket is two (code-point column 15)
    assert emoji["locations"][0]["physicalLocation"]["region"]["startColumn"] == 16


def test_bad_files_are_reported_and_others_still_checked(tmp_path: Path) -> None:
    (tmp_path / "a_syntax.py").write_text("def f(:\n")
    (tmp_path / "b_latin1.py").write_bytes(b"x = '\xe9'\n")
    (tmp_path / "c_binary.py").write_bytes(b"\x00\x01\x02ELF")
    (tmp_path / "d_empty.py").write_text("")
    (tmp_path / "e_cookie.py").write_bytes(b"# -*- coding: latin-1 -*-\nx = '\xe9'\n")
    (tmp_path / "z_real.py").write_text(SOURCE)
    out = run_cli("check", ".", "--target", "cpu", cwd=tmp_path)
    assert out.returncode == 1
    assert "Traceback" not in out.stdout + out.stderr
    lines = out.stdout.splitlines()
    # the column is where Python puts the error: `def f(:` fails at the colon
    assert any(line.startswith("a_syntax.py:1:7: SyntaxError") for line in lines)
    assert any(line.startswith("b_latin1.py:1:1: file error: file is not valid UTF-8") for line in lines)
    assert any(line.startswith("c_binary.py:1:1: file error: binary file") for line in lines)
    assert not any(line.startswith(("d_empty.py", "e_cookie.py")) for line in lines)
    assert any(line.startswith("z_real.py:5:16: JT001") for line in lines)


def test_rules_and_rule_docs() -> None:
    listing = run_cli("rules")
    assert listing.returncode == 0
    assert [line.split()[0] for line in listing.stdout.splitlines()] == ["JT001", "JT002", "JT003"]
    doc = run_cli("rule", "JT001")
    assert doc.returncode == 0 and "gpu-only-collective" in doc.stdout and "jax.lax.psend" in doc.stdout
    assert json.loads(run_cli("rules", "--format", "json").stdout)[0]["code"] == "JT001"
    assert run_cli("rule", "JT999").returncode == 2


def test_examples_show_real_findings() -> None:
    out = run_cli("check", "examples", cwd=ROOT)
    assert out.returncode == 1
    assert "examples/pipeline.py" in out.stdout and "guarded.py" not in out.stdout
