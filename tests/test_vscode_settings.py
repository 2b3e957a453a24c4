"""Settings applied live and what the extension shows, in VS Code itself (code-server) with the packaged .vsix."""

from __future__ import annotations

import shutil
import sys

from .code_server import MARKS, run_e2e
from .conftest import ROOT

pytestmark = MARKS


def test_vscode_settings_apply_live_and_the_extension_shows_the_servers_view() -> None:
    artifacts = ROOT / "artifacts" / "vscode-settings"
    shutil.rmtree(artifacts, ignore_errors=True)
    result = run_e2e("vscode-settings-e2e.mjs", str(artifacts), sys.executable)
    assert result["error"] is None, result
    steps = result["steps"]
    assert steps["install"]["ok"]
    # no Python extension, no setting: the workspace's .venv is the interpreter
    assert steps["venv"]["ok"], steps["venv"]
    # the status follows the server's effective targets
    assert steps["cpu"]["ok"], steps["cpu"]
    # targetBackends changed in settings: the problems follow without a restart
    assert steps["cuda"]["ok"], steps["cuda"]
    assert not any("JT001" in p for p in steps["cuda"]["problems"]), steps["cuda"]
    assert steps["back"]["ok"], steps["back"]
    # Show effective configuration: a read-only document naming each value's layer
    assert steps["configuration"]["ok"], steps["configuration"]
    # a restart is no error: no "exited with code 0", no pop-up
    assert steps["restart"]["ok"], steps["restart"]
    for name in ("01-cpu.png", "02-cuda.png", "03-configuration.png", "04-restarted.png"):
        assert (artifacts / name).stat().st_size > 10_000


def test_vscode_without_any_interpreter_says_so_once_and_its_button_picks_one() -> None:
    artifacts = ROOT / "artifacts" / "vscode-interpreter"
    shutil.rmtree(artifacts, ignore_errors=True)
    result = run_e2e("vscode-interpreter-e2e.mjs", str(artifacts), sys.executable)
    assert result["error"] is None, result
    steps = result["steps"]
    assert steps["notice"]["ok"], steps["notice"]
    assert steps["once"]["ok"], steps["once"]
    assert steps["picked"]["ok"], steps["picked"]
