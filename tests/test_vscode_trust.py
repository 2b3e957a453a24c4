"""Workspace trust in VS Code itself (code-server in headless Chromium) with the packaged .vsix."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from .code_server import MARKS, run_e2e
from .conftest import ROOT

pytestmark = MARKS


def test_vscode_restricted_mode_then_trust(tmp_path: Path) -> None:
    artifacts = ROOT / "artifacts" / "vscode-trust"
    shutil.rmtree(artifacts, ignore_errors=True)
    marker = tmp_path / "interpreter-ran"  # outside the workspace the script makes
    result = run_e2e("vscode-trust-e2e.mjs", str(artifacts), sys.executable, str(marker))
    assert result["error"] is None, result
    steps = result["steps"]
    assert steps["install"]["ok"]
    restricted = steps["restricted"]
    # Restricted Mode: the server analyses, the workspace's interpreter does not run
    assert restricted["restrictedMode"], restricted
    assert any("JT001" in p for p in restricted["problems"]), restricted
    assert not restricted["markerExists"], restricted
    assert restricted["ok"], restricted
    # trusted: the server restarts once and runs the pyproject.toml interpreter
    trusted = steps["trusted"]
    assert trusted["ok"], trusted
    assert marker.exists()
    assert any("JT001" in p for p in trusted["problems"]), trusted
    assert len(trusted["starts"]) == 2, trusted
    for name in ("01-restricted.png", "02-trust-editor.png", "03-trusted.png"):
        assert (artifacts / name).stat().st_size > 10_000
