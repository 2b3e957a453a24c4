"""The language server end to end, through pytest-lsp's stdio client."""

from __future__ import annotations

import ast
import asyncio
import textwrap
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient, client_capabilities

from .lsp_helpers import SERVER, apply_workspace_edit, change_doc, open_doc, wait_for_version

PAIR = textwrap.dedent(
    """\
    from functools import partial

    import jax
    from jax import lax

    @partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    def step(x):
        token = lax.psend(x, "i", [(0, 1)])
        y = lax.precv(token, x, "i", [(0, 1)])
        return y
    """
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["cpu", "tpu", "gpu"]\n')
    return tmp_path


async def _start(
    client: LanguageClient,
    root: Path,
    profile: str = "visual-studio-code",
    folders: list[Path] | None = None,
    options: dict[str, object] | None = None,
) -> None:
    folders = folders or [root]
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(profile),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in folders],
            initialization_options=options,
        )
    )


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, workspace: Path):
    await _start(lsp_client, workspace)
    yield
    await lsp_client.shutdown_session()


async def test_open_publishes_versioned_diagnostics(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "step.py").as_uri()
    open_doc(client, uri, PAIR)
    diags = await wait_for_version(client, uri, 1)
    assert [d.code for d in diags] == ["JT001", "JT001"]
    send, recv = diags
    assert send.source == "jaxtarget"
    assert send.range == types.Range(types.Position(7, 16), types.Position(7, 21))
    assert send.code_description is not None and "jt001" in send.code_description.href
    assert "targets 'cpu', 'tpu'" in send.message
    assert send.related_information and send.related_information[0].location.range == recv.range
    assert recv.related_information and recv.related_information[0].location.range == send.range


async def test_rapid_edits_publish_only_current_versions(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "edit.py").as_uri()
    open_doc(client, uri, PAIR)
    await wait_for_version(client, uri, 1)
    text = PAIR
    for v in range(2, 12):
        text = text + f"z{v} = {v}\n"
        change_doc(client, uri, text, v)
    final = text.replace("lax.psend", "lax.ppermute")
    change_doc(client, uri, final, 12)
    diags = await wait_for_version(client, uri, 12)
    assert [d.code for d in diags] == ["JT001"]  # only precv is left


async def test_close_clears(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "close.py").as_uri()
    open_doc(client, uri, PAIR)
    await wait_for_version(client, uri, 1)
    client.text_document_did_close(types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri)))
    while True:
        params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        if params.uri == uri:
            assert list(params.diagnostics) == []
            break


async def test_utf16_columns(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "emoji.py").as_uri()
    text = 'from jax import lax\ny = ("🚀🚀", lax.psend(x, "i", p))\n'
    open_doc(client, uri, text)
    diags = [d for d in await wait_for_version(client, uri, 1) if d.code == "JT001"]
    # 'y = ("' is 6 units, two rockets are 4, '", lax.' is 7
    assert diags[0].range.start == types.Position(1, 17)
    assert diags[0].range.end == types.Position(1, 22)


async def test_hover_shows_docs_and_backend_table(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "hover.py").as_uri()
    open_doc(client, uri, PAIR)
    await wait_for_version(client, uri, 1)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(7, 18))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert "psend(" in text  # signature from the installed jax
    assert "cpu ✗ · cuda ✓ · rocm ✓ · tpu ✗" in text
    assert "**Targets:** cpu, cuda, rocm, tpu" in text
    assert "shard_map" in text
    nothing = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(2, 3))
    )
    assert nothing is None


async def _actions(
    client: LanguageClient, uri: str, diags: list[types.Diagnostic], only: list[str] | None = None
) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=diags[0].range if diags else types.Range(types.Position(0, 0), types.Position(0, 0)),
            context=types.CodeActionContext(diagnostics=diags, only=only),
        )
    )
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


async def _apply(client: LanguageClient, action: types.CodeAction, text: str) -> str:
    if action.edit is None:
        action = await client.code_action_resolve_async(action)
    assert action.edit is not None, action.title
    return apply_workspace_edit(text, action.edit)


@pytest.mark.parametrize(
    ("title_word", "file_name"),
    [
        ("ppermute", "step.py"),
        ("raise", "step.py"),
        ("Skip", "tests/test_step.py"),
        ("Suppress", "step.py"),
    ],
)
async def test_each_code_action_fixes_its_diagnostic(
    client: LanguageClient, workspace: Path, title_word: str, file_name: str
) -> None:
    path = workspace / file_name
    path.parent.mkdir(exist_ok=True)
    uri = path.as_uri()
    text = PAIR
    if file_name.startswith("tests"):
        text = PAIR.replace("def step(x):", "def test_step(x):")
    open_doc(client, uri, text)
    diags = await wait_for_version(client, uri, 1)
    actions = await _actions(client, uri, [diags[0]])
    titles = [a.title for a in actions]
    matching = [
        a
        for a in actions
        if title_word in a.title
        or (title_word == "raise" and a.title.startswith("Guard") and "ppermute" not in a.title)
    ]
    assert matching, titles
    new = await _apply(client, matching[0], text)
    ast.parse(new)
    assert new.startswith(text[: text.index("def ")].rstrip().split("\n")[0])
    change_doc(client, uri, new, 2)
    after = await wait_for_version(client, uri, 2)
    remaining = [
        d
        for d in after
        if d.code == "JT001"
        and d.range.start.character == diags[0].range.start.character
        and "psend" in d.message
    ]
    assert remaining == [], (new, after)
    if title_word == "ppermute":
        assert 'lax.ppermute(x, "i", [(0, 1)])' in new and after == []
    # applying again offers nothing for the fixed diagnostic
    again = await _actions(client, uri, after[:1]) if after else []
    assert not any(
        title_word in a.title for a in again if a.kind == types.CodeActionKind.QuickFix and "psend" in a.title
    )


async def test_fix_all(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "all.py").as_uri()
    text = PAIR + "\n\ndef other(x):\n    return lax.pbroadcast(x, 'i', 0)\n"
    open_doc(client, uri, text)
    diags = await wait_for_version(client, uri, 1)
    assert len(diags) >= 3
    actions = await _actions(client, uri, [], only=["source.fixAll"])
    assert [a.kind for a in actions] == ["source.fixAll.jaxtarget"]
    new = await _apply(client, actions[0], text)
    ast.parse(new)
    change_doc(client, uri, new, 2)
    assert [d.code for d in await wait_for_version(client, uri, 2) if d.code == "JT001"] == []


async def test_pull_diagnostics(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "pull.py").as_uri()
    open_doc(client, uri, PAIR)
    await wait_for_version(client, uri, 1)
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    assert [d.code for d in report.items] == ["JT001", "JT001"]


async def test_settings_change_refreshes(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "cfg.py").as_uri()
    open_doc(client, uri, PAIR)
    assert len(await wait_for_version(client, uri, 1)) == 2
    client.set_configuration({"targetBackends": ["cuda"]}, section="jaxtarget")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    assert await wait_for_version(client, uri, 1) == []
    config = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="jaxtarget.showConfiguration")
    )
    (folder,) = config.values()
    assert folder["targetBackends"] == ["cuda"] and folder["effectiveTargets"] == ["cuda"]


async def test_bad_setting_warns_once_and_defaults_apply(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "bad.py").as_uri()
    client.set_configuration({"targetBackends": ["metal"], "bogus": 1}, section="jaxtarget")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    open_doc(client, uri, PAIR)
    diags = await wait_for_version(client, uri, 1)
    assert len(diags) == 2  # pyproject targets still apply
    texts = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert any("targetBackends" in t and "metal" in t for t in texts)
    assert any("bogus" in t for t in texts)


async def test_handler_errors_become_jsonrpc_errors(client: LanguageClient, workspace: Path) -> None:
    missing = (workspace / "never-written.py").as_uri()
    with pytest.raises(JsonRpcException):
        await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(missing), types.Position(0, 0))
        )
    uri = (workspace / "alive.py").as_uri()
    open_doc(client, uri, PAIR)
    assert len(await wait_for_version(client, uri, 1)) == 2


async def test_syntax_errors_keep_other_findings(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "half.py").as_uri()
    open_doc(client, uri, PAIR + "def broken(:\n")
    assert [d.code for d in await wait_for_version(client, uri, 1)] == ["JT001", "JT001"]


@pytest_lsp.fixture(config=SERVER)
async def multi(lsp_client: LanguageClient, tmp_path: Path):
    a, b = tmp_path / "a", tmp_path / "b"
    for folder, targets in ((a, '["cpu"]'), (b, '["cuda"]')):
        folder.mkdir()
        (folder / "pyproject.toml").write_text(f"[tool.jaxtarget]\ntargets = {targets}\n")
    lsp_client.set_configuration({"jaxtarget": {"severity": {"JT001": "warning"}}}, scope_uri=a.as_uri())
    await _start(lsp_client, tmp_path, profile="neovim", folders=[a, b])
    yield tmp_path
    await lsp_client.shutdown_session()


async def test_multi_root_folders_have_their_own_config(multi: LanguageClient, tmp_path: Path) -> None:
    client = multi
    ua, ub = (tmp_path / "a" / "m.py").as_uri(), (tmp_path / "b" / "m.py").as_uri()
    open_doc(client, ua, PAIR)
    open_doc(client, ub, PAIR)
    da = await wait_for_version(client, ua, 1)
    await asyncio.sleep(0)
    db = client.diagnostics.get(ub)
    if db is None:
        db = await wait_for_version(client, ub, 1)
    assert [d.severity for d in da] == [types.DiagnosticSeverity.Warning] * 2
    assert list(db) == []


async def test_pyproject_change_refreshes(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "proj.py").as_uri()
    open_doc(client, uri, PAIR)
    assert len(await wait_for_version(client, uri, 1)) == 2
    pyproject = workspace / "pyproject.toml"
    pyproject.write_text('[tool.jaxtarget]\ntargets = ["rocm"]\n')
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=pyproject.as_uri(), type=types.FileChangeType.Changed)]
        )
    )
    assert await wait_for_version(client, uri, 1) == []
