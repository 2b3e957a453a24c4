"""VS Code itself (code-server in headless Chromium) with the packaged .vsix installed."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from .code_server import MARKS, run_e2e
from .conftest import ROOT

pytestmark = MARKS


def test_vscode_diagnostic_hover_quickfix_and_probe(tmp_path: Path) -> None:
    artifacts = ROOT / "artifacts" / "vscode"
    shutil.rmtree(artifacts, ignore_errors=True)
    result = run_e2e("vscode-e2e.mjs", str(ROOT / "examples"), str(artifacts), sys.executable)
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
