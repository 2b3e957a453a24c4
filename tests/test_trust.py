"""Workspace trust: in a folder the client does not trust, nothing the workspace chose is run.

A real server over stdio (pytest-lsp). The workspace's pyproject.toml names an
interpreter script that leaves a marker file each time it runs, then runs the real
interpreter: in a trusted workspace the marker appears (the test can fail), in an
untrusted one it never does, neither for analysis nor for either probe.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from .lsp_helpers import SERVER, open_doc, wait_for_version

SOURCE = "from jax import lax\n\ny = lax.psend(x, 'i', [(0, 1)])\n"
UNTRUSTED_PROBE = "the workspace is not trusted: the environment probe is not run"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    tools = tmp_path / "bin"
    tools.mkdir()
    script = tools / "tools-python.sh"
    script.write_text(f'#!/bin/sh\necho ran >> "{tmp_path / "ran.marker"}"\nexec "{sys.executable}" "$@"\n')
    script.chmod(0o755)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.jaxtarget]\ntargets = ["cpu"]\ninterpreter = ["bin/tools-python.sh"]\n'
    )
    return tmp_path


async def _start(client: LanguageClient, root: Path, options: dict[str, object] | None) -> None:
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("visual-studio-code"),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=root.as_uri(), name=root.name)],
            initialization_options=options,
        )
    )


async def _probe_outcome(client: LanguageClient) -> str:
    """The server's line about the start-up environment probe (run, failed or not run)."""
    while True:
        for m in client.log_messages:
            if "environment probe" in m.message:
                return m.message
        await client.wait_for_notification(types.WINDOW_LOG_MESSAGE)


@pytest_lsp.fixture(config=SERVER)
async def untrusted(lsp_client: LanguageClient, workspace: Path):
    await _start(lsp_client, workspace, {"workspaceTrusted": False})
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def trusted(lsp_client: LanguageClient, workspace: Path):
    await _start(lsp_client, workspace, None)  # a client without a trust model
    yield
    await lsp_client.shutdown_session()


@pytest_lsp.fixture(config=SERVER)
async def unreadable(lsp_client: LanguageClient, workspace: Path):
    await _start(lsp_client, workspace, {"workspaceTrusted": "no"})
    yield
    await lsp_client.shutdown_session()


async def test_trusted_workspace_runs_its_interpreter(trusted: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "m.py").as_uri()
    open_doc(trusted, uri, SOURCE)
    assert [d.code for d in await wait_for_version(trusted, uri, 1)] == ["JT001", "JT002"]
    assert (workspace / "ran.marker").exists()


async def test_untrusted_workspace_runs_nothing_it_chose(untrusted: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "m.py").as_uri()
    open_doc(untrusted, uri, SOURCE)
    # analysed all the same, with the server's own interpreter
    assert [d.code for d in await wait_for_version(untrusted, uri, 1)] == ["JT001", "JT002"]
    assert await _probe_outcome(untrusted) == UNTRUSTED_PROBE
    result = await untrusted.workspace_execute_command_async(
        types.ExecuteCommandParams(command="jaxtarget.probeBackend", arguments=[{"uri": uri}])
    )
    assert result["ok"] is False and result["error"]["kind"] == "untrusted"
    named = await untrusted.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="jaxtarget.probeBackend",
            arguments=[{"python": str(workspace / "bin" / "tools-python.sh")}],
        )
    )
    assert named["ok"] is False and named["error"]["kind"] == "untrusted"
    config = await untrusted.workspace_execute_command_async(
        types.ExecuteCommandParams(command="jaxtarget.showConfiguration")
    )
    assert all(wire["python"] == sys.executable for wire in config.values()), config
    notes = [
        m.message for m in untrusted.log_messages if "is not run" in m.message and "pyproject" in m.message
    ]
    assert len(notes) == 1, notes
    await asyncio.sleep(0.2)  # anything still running in the background would have started by now
    assert not (workspace / "ran.marker").exists()


async def test_an_unreadable_trust_value_is_named_and_read_as_untrusted(
    unreadable: LanguageClient, workspace: Path
) -> None:
    uri = (workspace / "m.py").as_uri()
    open_doc(unreadable, uri, SOURCE)
    await wait_for_version(unreadable, uri, 1)
    assert await _probe_outcome(unreadable) == UNTRUSTED_PROBE
    assert any("workspaceTrusted" in m.message for m in unreadable.messages)
    assert not (workspace / "ran.marker").exists()
