"""Protocol behaviour through a real stdio client (pytest-lsp), per client profile.

- A client that pulls diagnostics, and can be asked to pull again, gets them only by pull;
  any other client (one that does not pull, or pulls without refresh: Neovim 0.11) gets pushes.
- Every request gets an answer: malformed params -32602, unknown documents and positions
  past the end an empty result.
- An interpreter that cannot be found: analysis from imports only, said once, with the path.
- Settings apply live: pushed again, or `workspace/diagnostic/refresh` for pull clients.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from .lsp_helpers import (
    SERVER,
    open_doc,
    pull,
    record_publications,
    send_raw,
    server_capabilities,
    start,
    wait_for_version,
)

SOURCE = (
    "from functools import partial\n\nimport jax\nfrom jax import lax\n\n\n"
    '@partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))\n'
    "def step(x):\n"
    '    token = lax.psend(x, "i", [(0, 1)])\n'
    '    return lax.precv(token, x, "i", [(0, 1)])\n'
)
PSEND = types.Position(8, 18)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["cpu", "tpu"]\n')
    return tmp_path


def _session(profile: str, options: dict[str, object] | None = None):  # type: ignore[no-untyped-def]
    @pytest_lsp.fixture(config=SERVER)
    async def fixture(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
        await start(lsp_client, workspace, profile, options)
        yield
        await lsp_client.shutdown_session()

    return fixture


vscode_pull = _session("vscode-pull")


neovim_07 = _session("neovim@v0.7.0")
neovim_011 = _session("neovim@v0.11.0")
missing_python = _session("neovim@v0.7.0", {"interpreter": ["/nonexistent/venv/bin/python"]})
missing_python_pull = _session("vscode-pull", {"interpreter": ["/nonexistent/venv/bin/python"]})


async def _ready(client: LanguageClient) -> None:
    """Wait until the server has read its settings after `initialized`."""
    while not any(m.message.startswith("ready:") for m in client.log_messages):
        await client.wait_for_notification(types.WINDOW_LOG_MESSAGE)


async def _barrier(client: LanguageClient) -> None:
    """A request answered only after the server has handled everything sent before it."""
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="jaxtarget.showConfiguration")
    )


# ================================================================ pull or push, never both


async def test_a_pull_client_gets_diagnostics_by_pull_only(
    vscode_pull: LanguageClient, workspace: Path
) -> None:
    client = vscode_pull
    assert server_capabilities(client).diagnostic_provider is not None
    seen = record_publications(client)
    uri = (workspace / "m.py").as_uri()
    open_doc(client, uri, SOURCE)
    assert [d.code for d in await pull(client, uri)] == ["JT001", "JT001"]
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), PSEND)
    )
    assert hover is not None
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    await _barrier(client)
    # a push for version 1 would have been sent when its analysis finished, before the pull's answer
    assert seen == []


async def test_a_push_client_gets_pushed_diagnostics(neovim_07: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "m.py").as_uri()
    open_doc(neovim_07, uri, SOURCE)
    assert [d.code for d in await wait_for_version(neovim_07, uri, 1)] == ["JT001", "JT001"]


# ================================================================ every request is answered


async def test_malformed_params_get_invalid_params(neovim_07: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "m.py").as_uri()
    open_doc(neovim_07, uri, SOURCE)
    await wait_for_version(neovim_07, uri, 1)
    malformed = [
        ("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": -1, "character": 0}}),
        ("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": -5}}),
        ("textDocument/hover", {"textDocument": {"uri": uri}}),
        ("textDocument/diagnostic", {"textDocument": {}}),
        ("textDocument/codeAction", {"textDocument": {"uri": uri}, "range": "everything"}),
    ]
    for method, params in malformed:
        with pytest.raises(JsonRpcException) as error:
            await send_raw(neovim_07, method, params)
        assert error.value.code == -32602, (method, params, error.value)
    assert "position" in str(error.value) or "range" in str(error.value), error.value
    # and the server goes on answering
    hover = await neovim_07.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), PSEND)
    )
    assert hover is not None


async def test_unknown_documents_and_far_positions_get_empty_answers(
    neovim_07: LanguageClient, workspace: Path
) -> None:
    unknown = (workspace / "never-opened.py").as_uri()
    ident = types.TextDocumentIdentifier(unknown)
    assert await neovim_07.text_document_hover_async(types.HoverParams(ident, types.Position(0, 0))) is None
    assert await pull(neovim_07, unknown) == []
    nowhere = types.Range(types.Position(0, 0), types.Position(0, 0))
    actions = await neovim_07.text_document_code_action_async(
        types.CodeActionParams(ident, nowhere, types.CodeActionContext(diagnostics=[]))
    )
    assert not actions
    uri = (workspace / "m.py").as_uri()
    open_doc(neovim_07, uri, SOURCE)
    diags = await wait_for_version(neovim_07, uri, 1)
    here = types.TextDocumentIdentifier(uri)
    for position in (
        types.Position(10_000, 0),
        types.Position(8, 10_000),
        types.Position(2**31 - 1, 2**31 - 1),
    ):
        assert await neovim_07.text_document_hover_async(types.HoverParams(here, position)) is None
    far = types.Range(types.Position(10_000, 0), types.Position(10_001, 5))
    actions = await neovim_07.text_document_code_action_async(
        types.CodeActionParams(here, far, types.CodeActionContext(diagnostics=diags))
    )
    assert actions, "the diagnostics' own actions, wherever the range"


# ================================================================ an interpreter that cannot be found


def _fallback_messages(client: LanguageClient) -> tuple[list[str], list[str]]:
    shown = [m.message for m in client.messages if "/nonexistent/venv/bin/python" in m.message]
    logged = [m.message for m in client.log_messages if "/nonexistent/venv/bin/python" in m.message]
    return shown, logged


async def test_a_missing_interpreter_falls_back_to_imports_and_says_so_once(
    missing_python: LanguageClient, workspace: Path
) -> None:
    client = missing_python
    first, second = (workspace / "a.py").as_uri(), (workspace / "b.py").as_uri()
    open_doc(client, first, SOURCE)
    diags = await wait_for_version(client, first, 1)
    assert [d.code for d in diags] == ["JT001", "JT001"]
    assert "imports only" in diags[0].message
    open_doc(client, second, SOURCE)
    assert len(await wait_for_version(client, second, 1)) == 2
    assert len(await pull(client, second)) == 2
    await _barrier(client)
    shown, logged = _fallback_messages(client)
    assert len(shown) == 1, shown
    assert "interpreter not found" in shown[0] and "imports only" in shown[0], shown
    assert [m.type for m in client.messages if m.message == shown[0]] == [types.MessageType.Warning]
    assert logged, "the warning is in the log too"


async def test_a_missing_interpreter_still_answers_pulls(
    missing_python_pull: LanguageClient, workspace: Path
) -> None:
    uri = (workspace / "a.py").as_uri()
    open_doc(missing_python_pull, uri, SOURCE)
    assert [d.code for d in await pull(missing_python_pull, uri)] == ["JT001", "JT001"]
    shown, _ = _fallback_messages(missing_python_pull)
    assert len(shown) == 1, shown


async def test_a_client_that_pulls_without_refresh_gets_pushes_only(
    neovim_011: LanguageClient, workspace: Path
) -> None:
    # Neovim 0.11 pulls but takes no workspace/diagnostic/refresh: offered no pull, it is
    # pushed to, so that a settings change reaches it without waiting for its next edit
    client = neovim_011
    assert server_capabilities(client).diagnostic_provider is None
    uri = (workspace / "m.py").as_uri()
    open_doc(client, uri, SOURCE)
    assert [d.code for d in await wait_for_version(client, uri, 1)] == ["JT001", "JT001"]
    client.set_configuration({"targetBackends": ["cuda"]}, section="jaxtarget")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert await wait_for_version(client, uri, 1) == []


# ================================================================ settings apply live


async def test_settings_change_asks_a_pull_client_to_refresh(
    vscode_pull: LanguageClient, workspace: Path
) -> None:
    client = vscode_pull
    refreshed = asyncio.Event()
    count = client.protocol.fm.features[types.WORKSPACE_DIAGNOSTIC_REFRESH]

    def on_refresh(params: None) -> None:
        count(params)
        refreshed.set()

    client.protocol.fm.features[types.WORKSPACE_DIAGNOSTIC_REFRESH] = on_refresh
    await _ready(client)
    uri = (workspace / "m.py").as_uri()
    open_doc(client, uri, SOURCE)
    assert len(await pull(client, uri)) == 2
    assert client.diagnostic_refresh_count == 0
    client.set_configuration({"targetBackends": ["cuda"]}, section="jaxtarget")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await asyncio.wait_for(refreshed.wait(), 30)
    assert await pull(client, uri) == []  # same document version, new settings
    client.set_configuration({"targetBackends": ["tpu"], "severity": {"JT001": "hint"}}, section="jaxtarget")
    refreshed.clear()
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    await asyncio.wait_for(refreshed.wait(), 30)
    assert [d.severity for d in await pull(client, uri)] == [types.DiagnosticSeverity.Hint] * 2
    assert client.diagnostic_refresh_count == 2


async def test_settings_sent_with_the_notification_apply_for_a_push_client(
    neovim_07: LanguageClient, workspace: Path
) -> None:
    # Neovim 0.7 answers no workspace/configuration: the settings come with the notification
    uri = (workspace / "m.py").as_uri()
    open_doc(neovim_07, uri, SOURCE)
    assert len(await wait_for_version(neovim_07, uri, 1)) == 2
    neovim_07.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"jaxtarget": {"targetBackends": ["cuda"]}})
    )
    assert await wait_for_version(neovim_07, uri, 1) == []
    neovim_07.workspace_did_change_configuration(
        types.DidChangeConfigurationParams(settings={"jaxtarget": {"targetBackends": ["cpu"]}})
    )
    assert len(await wait_for_version(neovim_07, uri, 1)) == 2
