"""What a user sees of the server through a real client: hover, quick fix titles, progress, configuration."""

from __future__ import annotations

import asyncio
import textwrap
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from .lsp_helpers import SERVER, capabilities, open_doc, start, wait_for_version

PAIR = textwrap.dedent(
    """\
    from functools import partial

    import jax
    from jax import lax


    @partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    def test_step(x):
        token = lax.psend(x, "i", [(0, 1)])
        y = lax.precv(token, x, "i", [(0, 1)])
        return y
    """
)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["cpu", "gpu"]\n')
    (tmp_path / "tests").mkdir()
    return tmp_path


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, workspace: Path):
    await start(lsp_client, workspace, "visual-studio-code")
    yield
    await lsp_client.shutdown_session()


async def _hover_text(client: LanguageClient, uri: str, position: types.Position) -> str:
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), position)
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    return hover.contents.value


async def test_hover_leads_with_the_verdict_and_shows_only_a_probe_the_user_ran(
    client: LanguageClient, workspace: Path
) -> None:
    uri = (workspace / "tests" / "test_step.py").as_uri()
    open_doc(client, uri, PAIR)
    await wait_for_version(client, uri, 1)
    at_psend = types.Position(8, 18)
    before = await _hover_text(client, uri, at_psend)
    first = before.split("\n\n")[0]
    assert first == "**✗ Fails on cpu** (targets cpu, cuda, rocm)", before
    assert before.count("✓") == 2 and "cpu ✗ ·" not in before, before  # the table only, once
    assert "probe" not in before.lower(), before  # the start-up environment probe is not the user's
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="jaxtarget.probeBackend", arguments=[{"uri": uri}])
    )
    assert isinstance(result, dict) and result["ok"], result
    after = await _hover_text(client, uri, at_psend)
    assert after.split("\n\n")[0] == first, after
    (line,) = [p for p in after.split("\n\n") if p.startswith("**Your last probe**")]
    assert "psend+precv" in line and "cpu ✗ · cuda ✓ · rocm ✓ · tpu ✗" in line, line
    assert "/" not in line, line  # no interpreter path


async def test_quick_fix_titles_of_one_diagnostic_say_what_they_do(
    client: LanguageClient, workspace: Path
) -> None:
    uri = (workspace / "tests" / "test_titles.py").as_uri()
    open_doc(client, uri, PAIR)
    diags = await wait_for_version(client, uri, 1)
    send = next(d for d in diags if d.code == "JT001" and d.range.start.line == 8)
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri),
            range=send.range,
            context=types.CodeActionContext(diagnostics=[send], only=[types.CodeActionKind.QuickFix]),
        )
    )
    titles = [a.title for a in result or [] if isinstance(a, types.CodeAction)]
    assert len(titles) == 4, titles
    assert len({t[:40] for t in titles}) == len(titles), titles
    assert titles == [
        "Fall back to lax.ppermute off GPU: run `lax.psend` and `lax.precv` only where has_gpu_backend()",
        "Guard `lax.psend` to run only on a GPU; raise NotImplementedError elsewhere",
        "Skip `test_step` unless on a GPU (pytest.mark.skipif)",
        "Suppress JT001 on this line (# jaxtarget: ignore)",
    ], titles


def _caps(progress: bool) -> types.ClientCapabilities:
    caps = capabilities("visual-studio-code")
    caps.window = types.WindowClientCapabilities(work_done_progress=progress)
    return caps


@pytest_lsp.fixture(config=SERVER)
async def bare(lsp_client: LanguageClient) -> AsyncIterator[None]:
    yield
    await lsp_client.shutdown_session()


@pytest.mark.parametrize("progress", [True, False], ids=["supported", "unsupported"])
async def test_first_analysis_reports_work_done_progress_once(
    bare: LanguageClient, workspace: Path, progress: bool
) -> None:
    client = bare
    created: list[str] = []
    handle = client.protocol._handle_request  # type: ignore[attr-defined]

    def recording(msg_id: object, method: str, params: object) -> object:
        if method == types.WINDOW_WORK_DONE_PROGRESS_CREATE:
            created.append(method)
        return handle(msg_id, method, params)

    client.protocol._handle_request = recording  # type: ignore[attr-defined]
    await client.initialize_session(
        types.InitializeParams(
            capabilities=_caps(progress),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="w")],
        )
    )
    first = (workspace / "first.py").as_uri()
    open_doc(client, first, PAIR)
    await wait_for_version(client, first, 1)
    second = (workspace / "second.py").as_uri()
    open_doc(client, second, PAIR)
    await wait_for_version(client, second, 1)
    if not progress:
        assert created == [] and client.progress_reports == {}, client.progress_reports
        return

    # the end follows the first analysis's diagnostics closely; wait for it, not for a time
    async def ended() -> None:
        while not any(isinstance(r[-1], types.WorkDoneProgressEnd) for r in client.progress_reports.values()):
            await client.wait_for_notification(types.PROGRESS)

    await asyncio.wait_for(ended(), 30)
    assert created == [types.WINDOW_WORK_DONE_PROGRESS_CREATE], created  # the cold analysis only
    ((token, reports),) = client.progress_reports.items()
    assert str(token).startswith("jaxtarget-first-analysis"), token
    kinds = [type(r) for r in reports]
    assert kinds == [types.WorkDoneProgressBegin, types.WorkDoneProgressEnd], reports
    begin = reports[0]
    assert isinstance(begin, types.WorkDoneProgressBegin) and begin.title == "JAX Target", begin
    assert begin.message and "first analysis" in begin.message, begin


async def test_status_notification_carries_the_effective_targets_and_follows_settings(
    bare: LanguageClient, workspace: Path
) -> None:
    client = bare
    statuses: asyncio.Queue[dict[str, object]] = asyncio.Queue()

    @client.feature("jaxtarget/status")
    def on_status(ls: object, params: object) -> None:
        statuses.put_nowait(_plain(params))

    await start(client, workspace, "visual-studio-code")
    status = await asyncio.wait_for(statuses.get(), 60)
    (entry,) = status["folders"]  # type: ignore[misc]
    assert entry["uri"].rstrip("/") == workspace.as_uri(), entry
    # the pyproject.toml's targets, not the editor's default ("auto")
    assert entry["targets"] == ["cpu", "gpu"] and entry["effectiveTargets"] == ["cpu", "cuda", "rocm"], entry
    client.set_configuration({"targetBackends": ["tpu"]}, section="jaxtarget")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    status = await asyncio.wait_for(statuses.get(), 60)
    (entry,) = status["folders"]  # type: ignore[misc]
    assert entry["targets"] == ["tpu"] and entry["effectiveTargets"] == ["tpu"], entry


def _plain(value: object) -> object:
    """A notification's params (pygls gives unknown methods' params as named tuples) as plain data."""
    if hasattr(value, "_asdict"):
        return {k: _plain(v) for k, v in value._asdict().items()}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


async def test_show_configuration_says_where_each_setting_came_from(
    client: LanguageClient, workspace: Path
) -> None:
    client.set_configuration({"select": ["JT001"]}, section="jaxtarget")
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    uri = (workspace / "w.py").as_uri()
    open_doc(client, uri, PAIR.replace("def test_step", "def step"))
    diags = await wait_for_version(client, uri, 1)  # after the settings were read again
    assert {d.code for d in diags} == {"JT001"}, diags
    config = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="jaxtarget.showConfiguration")
    )
    (folder,) = config.values()
    sources = {row["key"]: row for row in folder["sources"]}
    assert sources["targets"]["source"] == "pyproject.toml" and sources["targets"]["value"] == ["cpu", "gpu"]
    assert sources["targets"]["editor"] == "targetBackends"
    assert sources["select"]["source"] == "editor settings" and sources["select"]["value"] == ["JT001"]
    assert sources["ignore"]["source"] == "default"
    assert folder["pyproject"] == str(workspace / "pyproject.toml")


async def test_the_environment_probe_waits_for_the_first_diagnostics(
    bare: LanguageClient, workspace: Path
) -> None:
    """The probe imports jax in a child: it starts after the analyses of the documents opened
    at start-up, not beside them (an editor restoring a session opens several at once).

    The server writes its notifications in the order it sends them, so the order the client
    reads them in is the server's: every document's diagnostics, then the probe's start.
    """
    client = bare
    order: list[str] = []
    uris = [(workspace / f"restored_{i}.py").as_uri() for i in range(8)]
    published: set[str] = set()
    all_published = asyncio.Event()
    handle = client.protocol._handle_notification

    def recording(method: str, params: object) -> None:
        if isinstance(params, types.PublishDiagnosticsParams):
            order.append("diagnostics")
            published.add(params.uri)
            if published >= set(uris):
                all_published.set()
        elif isinstance(params, types.LogMessageParams) and params.message.startswith("environment probe"):
            order.append(params.message)
        handle(method, params)

    client.protocol._handle_notification = recording  # type: ignore[method-assign]
    await client.initialize_session(
        types.InitializeParams(
            capabilities=capabilities("visual-studio-code"),
            root_uri=workspace.as_uri(),
            workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="w")],
            initialization_options={"logLevel": "debug"},
        )
    )
    for uri in uris:
        open_doc(client, uri, PAIR)
    await asyncio.wait_for(all_published.wait(), 120)

    async def probed() -> None:
        while not any(m.startswith("environment probe of") for m in order):
            await client.wait_for_notification(types.WINDOW_LOG_MESSAGE)

    await asyncio.wait_for(probed(), 120)
    started = order.index("environment probe: started")
    assert order[:started] == ["diagnostics"] * len(uris), order
    assert "default backend cpu" in order[-1], order
