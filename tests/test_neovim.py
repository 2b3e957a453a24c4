"""A second real client: headless Neovim's built-in LSP client drives the server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

NVIM = shutil.which("nvim")

pytestmark = [
    pytest.mark.editor,
    pytest.mark.skipif(NVIM is None and not os.environ.get("CI"), reason="neovim is not installed"),
]


def test_neovim_shows_diagnostics_hover_and_actions(tmp_path: Path) -> None:
    assert NVIM is not None, "CI installs neovim; it must be on PATH"
    example = tmp_path / "pipeline.py"
    shutil.copy(ROOT / "examples" / "pipeline.py", example)
    out = tmp_path / "result.json"
    env = {
        **os.environ,
        "JAXTARGET_CMD": json.dumps([sys.executable, "-m", "jaxtarget", "lsp", "--stdio"]),
        "JAXTARGET_FILE": str(example),
        "JAXTARGET_OUT": str(out),
    }
    proc = subprocess.run(
        [
            NVIM,
            "--headless",
            "--clean",
            "-u",
            "NONE",
            "-c",
            f"luafile {ROOT / 'tests' / 'editors' / 'nvim_e2e.lua'}",
            "-c",
            "qa!",
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=150,
        stdin=subprocess.DEVNULL,
    )
    assert out.exists(), proc.stderr
    result = json.loads(out.read_text())
    assert result.get("error") is None, result
    codes = sorted(d["code"] for d in result["diagnostics"])
    assert codes.count("JT001") == 3 and "JT002" in codes and "JT003" in codes
    psend = next(d for d in result["diagnostics"] if d["code"] == "JT001")
    line = example.read_text().splitlines()[psend["lnum"]]
    assert line[psend["col"] : psend["end_col"]] in ("psend", "precv")
    assert all(d["source"] == "jaxtarget" for d in result["diagnostics"])
    assert result["hover"].startswith("**✗ Fails on cpu, tpu**"), result["hover"]
    assert "| ✗ | ✓ | ✓ | ✗ |" in result["hover"], result["hover"]
    assert any(t.startswith("Guard `lax.") for t in result["actions"])
    assert any(t.startswith("Suppress JT001") for t in result["actions"])
