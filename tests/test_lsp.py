"""The language server end to end, through pytest-lsp's stdio client."""

from __future__ import annotations

import ast
import asyncio
import inspect
import textwrap
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient, client_capabilities

from .lsp_helpers import (
    SERVER,
    apply_workspace_edit,
    change_doc,
    open_doc,
    record_publications,
    wait_for_version,
)

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


async def _barrier(client: LanguageClient) -> None:
    """A request answered only after the server has read every earlier notification."""
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="jaxtarget.showConfiguration")
    )


async def test_rapid_edits_publish_only_current_versions(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "edit.py").as_uri()
    seen = record_publications(client)
    open_doc(client, uri, PAIR)
    await wait_for_version(client, uri, 1)
    texts = {1: PAIR}
    text = PAIR
    for v in range(2, 12):
        text = text + f"z{v} = {v}\n"
        texts[v] = text
        change_doc(client, uri, text, v)
    await _barrier(client)
    # the server had read version 11 before it answered: nothing older may be published after that
    after_barrier = len(seen)
    final = text.replace("lax.psend", "lax.ppermute")
    texts[12] = final
    change_doc(client, uri, final, 12)
    diags = await wait_for_version(client, uri, 12)
    assert [d.code for d in diags] == ["JT001"]  # only precv is left
    await _barrier(client)
    mine = [(i, p) for i, p in enumerate(seen) if p.uri == uri]
    versions = [p.version for _, p in mine]
    assert set(versions) <= set(texts), versions  # only versions the client sent
    assert versions == sorted(versions), versions  # never an older one after a newer one
    assert versions[-1] == 12, versions
    assert all(p.version >= 11 for i, p in mine if i >= after_barrier), versions
    for _, p in mine:  # each publication holds the findings of the text of its own version
        expected = ["JT001"] if p.version == 12 else ["JT001", "JT001"]
        assert [d.code for d in p.diagnostics] == expected, (p.version, p.diagnostics)


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
    import jax

    # the signature and the first line of psend's own docstring, from the installed jax
    params = ", ".join(inspect.signature(jax.lax.psend).parameters)
    # the verdict for the configured targets first, then the signature
    assert text.startswith("**✗ Fails on cpu, tpu** (targets cpu, cuda, rocm, tpu)\n\n```python\n"), text
    assert f"psend({params})" in text.split("```")[1], text
    assert jax.lax.psend.__doc__ is not None
    first_line = jax.lax.psend.__doc__.strip().splitlines()[0].strip()
    assert first_line  # jax documents psend
    assert first_line in text, text
    assert "| cpu | cuda | rocm | tpu |\n|---|---|---|---|\n| ✗ | ✓ | ✓ | ✗ |" in text, text
    # the table is not repeated as a one-liner, and no probe was run
    assert "cpu ✗ · cuda ✓" not in text and "probe" not in text.lower(), text
    assert "shard_map" in text
    nothing = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(2, 3))
    )
    assert nothing is None


async def test_hover_says_what_another_jax_version_changes(client: LanguageClient, workspace: Path) -> None:
    import jax

    from jaxtarget.platforms import parse_version

    uri = (workspace / "scaled.py").as_uri()
    open_doc(
        client, uri, "import jax\n\n\ndef f(a, b, sa, sb):\n    return jax.nn.scaled_matmul(a, b, sa, sb)\n"
    )
    await wait_for_version(client, uri, 1)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(4, 22))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    text = hover.contents.value
    assert (
        "**By jax version:** cpu, cuda, rocm, tpu (rocm from 0.8.2 before 0.9.1, from 0.10.0)"
        " (cpu from 0.11.0) (tpu from 0.11.0)"
    ) in text, text
    if parse_version(jax.__version__) < (0, 11, 0):
        assert f"Lowers on cpu, tpu from jax 0.11.0; you have {jax.__version__}." in text, text
        assert "| ✗ | ✓ | ✓ | ✗ |" in text, text
    else:
        assert "| ✓ | ✓ | ✓ | ✓ |" in text, text


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


FIXED_ALL = textwrap.dedent(
    '''\
    from functools import partial

    import jax
    from jax import lax


    def has_gpu_backend() -> bool:
        """True when JAX runs on a GPU backend (cuda or rocm)."""
        return jax.default_backend() in ("gpu", "cuda", "rocm")


    @partial(jax.shard_map, mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    def step(x):
        if has_gpu_backend():
            token = lax.psend(x, "i", [(0, 1)])
            y = lax.precv(token, x, "i", [(0, 1)])
        else:
            raise NotImplementedError("lax.psend requires a GPU backend (cuda or rocm)")
        return y


    def other(x):
        if has_gpu_backend():
            return lax.pbroadcast(x, 'i', 0)
        else:
            raise NotImplementedError("lax.pbroadcast requires a GPU backend (cuda or rocm)")
    '''
)


def _guarded_calls(tree: ast.AST) -> set[str]:
    """The calls (as source) that run only inside ``if has_gpu_backend():``."""
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "has_gpu_backend()":
            for stmt in node.body:
                found |= {ast.unparse(c) for c in ast.walk(stmt) if isinstance(c, ast.Call)}
    return found


async def test_fix_all(client: LanguageClient, workspace: Path) -> None:
    uri = (workspace / "all.py").as_uri()
    text = PAIR + "\n\ndef other(x):\n    return lax.pbroadcast(x, 'i', 0)\n"
    open_doc(client, uri, text)
    diags = await wait_for_version(client, uri, 1)
    assert [d.code for d in diags] == ["JT001", "JT001", "JT001"]
    lines = text.splitlines()
    names = {lines[d.range.start.line][d.range.start.character : d.range.end.character] for d in diags}
    assert names == {"psend", "precv", "pbroadcast"}
    flagged = {
        ast.unparse(n)
        for n in ast.walk(ast.parse(text))
        if isinstance(n, ast.Call) and ast.unparse(n.func) in {f"lax.{name}" for name in names}
    }
    assert len(flagged) == 3
    actions = await _actions(client, uri, [], only=["source.fixAll"])
    assert [a.kind for a in actions] == ["source.fixAll.jaxtarget"]
    new = await _apply(client, actions[0], text)
    # every finding's call is still there, now behind the guard; nothing is silenced
    assert flagged <= _guarded_calls(ast.parse(new)), new
    assert "jaxtarget: ignore" not in new and "noqa" not in new, new
    assert new == FIXED_ALL
    change_doc(client, uri, new, 2)
    assert await wait_for_version(client, uri, 2) == []


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
    open_doc(client, uri, PAIR)
    await wait_for_version(client, uri, 1)
    # each round sends the same two bad values with a good one that shows in the diagnostics:
    # once a round's severity is published, that round's configuration (and its warnings) is in
    rounds = {
        "warning": types.DiagnosticSeverity.Warning,
        "information": types.DiagnosticSeverity.Information,
        "hint": types.DiagnosticSeverity.Hint,
    }
    text = PAIR
    for n, (name, severity) in enumerate(rounds.items(), start=2):
        client.set_configuration(
            {"targetBackends": ["metal"], "bogus": 1, "severity": {"JT001": name}}, section="jaxtarget"
        )
        client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
        text += f"z{n} = {n}\n"
        change_doc(client, uri, text, n)  # an analysis of a new version in each round too
        diags = await wait_for_version(client, uri, n)
        while [d.severity for d in diags] != [severity] * 2:
            diags = await wait_for_version(client, uri, n)
        assert [d.code for d in diags] == ["JT001", "JT001"]  # pyproject targets still apply

    def logged(word: str) -> int:
        return sum(
            1 for m in client.log_messages if m.type == types.MessageType.Warning and word in m.message
        )

    assert logged("metal") >= len(rounds) and logged("bogus") >= len(rounds)  # each reading logs them
    shown = [m.message for m in client.messages if m.type == types.MessageType.Warning]
    assert len([t for t in shown if "targetBackends" in t and "metal" in t]) == 1, shown
    assert len([t for t in shown if "bogus" in t]) == 1, shown
    assert len(shown) == 2, shown


DEGENERATE_DOCS = {
    "empty": ("", []),
    "nul": (PAIR + "\0\n", []),  # not Python source: nothing to report, nothing raised
    "binary": (bytes(range(256)).decode("latin-1"), []),
    "lone-surrogate": (PAIR + b"s = '\xff'\n".decode("utf-8", "surrogateescape"), None),
    "huge-line": (PAIR + "x = " + "+".join(["1"] * 100_000) + "\n", None),
}


@pytest.mark.parametrize("name", sorted(DEGENERATE_DOCS))
async def test_degenerate_documents_publish_and_the_server_keeps_answering(
    client: LanguageClient, workspace: Path, name: str
) -> None:
    text, expected = DEGENERATE_DOCS[name]
    uri = (workspace / f"{name}.py").as_uri()
    open_doc(client, uri, text)
    # a request, so that a server that fails on the text answers with an error instead of silence
    report = await client.text_document_diagnostic_async(
        types.DocumentDiagnosticParams(types.TextDocumentIdentifier(uri))
    )
    assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    codes = [d.code for d in report.items]
    if expected is not None:
        assert codes == expected
    else:  # the pair's findings, or none at all
        assert codes in (["JT001", "JT001"], []), codes
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(0, 0))
    )
    assert hover is None
    # the same document, made good, is checked as usual
    change_doc(client, uri, PAIR, 2)
    assert [d.code for d in await wait_for_version(client, uri, 2)] == ["JT001", "JT001"]
    other = (workspace / f"{name}-other.py").as_uri()
    open_doc(client, other, PAIR)
    assert [d.code for d in await wait_for_version(client, other, 1)] == ["JT001", "JT001"]


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
    await _start(lsp_client, tmp_path, profile="neovim@v0.9.1", folders=[a, b])
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


async def test_no_fix_all_where_no_finding_has_an_autofix(client: LanguageClient, workspace: Path) -> None:
    # JT001 silenced on the line: what is left is JT002, which has no fix fix-all applies
    uri = (workspace / "only_sharding.py").as_uri()
    text = "from jax import lax\n\n\ndef send(x):\n    return lax.psend(x, 'i', [(0, 1)])  # jaxtarget: ignore[JT001]\n"
    open_doc(client, uri, text)
    diags = await wait_for_version(client, uri, 1)
    assert [d.code for d in diags] == ["JT002"]
    assert await _actions(client, uri, [], only=["source.fixAll"]) == []
    quick = await _actions(client, uri, diags)
    assert quick and all(a.kind != "source.fixAll.jaxtarget" for a in quick), quick


async def test_a_document_analysed_long_ago_still_answers_hover_and_code_actions(
    client: LanguageClient, workspace: Path
) -> None:
    """Beyond the documents analysed most recently, the server drops an analysis once its
    diagnostics are out (HOT_DOCUMENTS); a request on such a document computes it again,
    with the same findings, so the published diagnostics still get their quick fixes."""
    from jaxtarget.lsp.state import HOT_DOCUMENTS

    first = (workspace / "first.py").as_uri()
    open_doc(client, first, PAIR)
    published = await wait_for_version(client, first, 1)
    for i in range(HOT_DOCUMENTS + 2):
        uri = (workspace / f"other_{i}.py").as_uri()
        open_doc(client, uri, PAIR)
        await wait_for_version(client, uri, 1)
    actions = await _actions(client, first, [published[0]])
    fixes = [a for a in actions if "ppermute" in a.title]
    assert fixes, [a.title for a in actions]
    assert 'lax.ppermute(x, "i", [(0, 1)])' in await _apply(client, fixes[0], PAIR)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(first), published[0].range.start)
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    assert "psend" in hover.contents.value and "cuda" in hover.contents.value
