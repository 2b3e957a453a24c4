"""Property: through a real stdio client, random edits and requests (valid, past the end,
malformed) each get an answer, and the diagnostics last published are those of the final
text, for the final version.

Hypothesis runs in a worker thread and hands each example to the event loop that owns the
pytest-lsp client, so one server serves every example (each on a document of its own).
"""

from __future__ import annotations

import asyncio
import itertools
from pathlib import Path

import pytest
import pytest_lsp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient

from .conftest import make_engine
from .lsp_helpers import SERVER, apply_text_edits, open_doc, send_raw, start

LINES = [
    "from jax import lax\n",
    "import jax.lax as L\n",
    'y = lax.psend(x, "i", [(0, 1)])\n',
    'z = L.precv(t, x, "i", [(0, 1)])\n',
    "def f(x):\n",
    '    return lax.pbroadcast(x, "i", 0)\n',
    "if jax.default_backend() == 'gpu':\n",
    "    w = lax.psend(x, 'i', p)\n",
    's = "🚀é"; lax.psend(s, "i", p)\n',
    "def broken(:\n",
    "\n",
    "# lax.psend in a comment\n",
    # a PEP 695 type parameter list over lines (newer grammar than Python 3.11)
    "def g[\n",
    "    T: int,\n",
    "](x: T) -> T:\n",
]
TEXT = st.lists(st.sampled_from(LINES), max_size=8).map("".join)
POSITION = st.builds(types.Position, st.integers(0, 12), st.integers(0, 40))
REQUEST = st.one_of(
    st.tuples(st.just("hover"), POSITION),
    st.tuples(st.just("pull"), st.none()),
    st.tuples(st.just("actions"), POSITION),
    st.tuples(st.just("malformed"), st.integers(-(2**31), -1)),
)
EDIT = st.one_of(
    st.tuples(st.just("replace"), TEXT),
    st.tuples(st.just("insert"), st.tuples(POSITION, st.sampled_from([*LINES, "x", "lax.", "é", "🚀"]))),
)
STEPS = st.lists(st.one_of(EDIT, REQUEST), min_size=1, max_size=12)
ANSWER_TIMEOUT = 60


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["cpu", "tpu"]\n')
    return tmp_path


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, workspace: Path):  # type: ignore[no-untyped-def]
    await start(lsp_client, workspace, "neovim@v0.7.0")  # pushes: final diagnostics are published
    yield
    await lsp_client.shutdown_session()


def _clamp(text: str, pos: types.Position) -> types.Position:
    """The nearest position inside ``text`` (in UTF-16 units, as the client counts)."""
    lines = text.split("\n")
    line = min(pos.line, len(lines) - 1)
    units = sum(2 if ord(c) > 0xFFFF else 1 for c in lines[line])
    return types.Position(line, min(pos.character, units))


async def _request(client: LanguageClient, uri: str, kind: str, arg: object) -> None:
    ident = types.TextDocumentIdentifier(uri)
    if kind == "hover":
        assert isinstance(arg, types.Position)
        await client.text_document_hover_async(types.HoverParams(ident, arg))
    elif kind == "pull":
        report = await client.text_document_diagnostic_async(types.DocumentDiagnosticParams(ident))
        assert isinstance(report, types.RelatedFullDocumentDiagnosticReport)
    elif kind == "actions":
        assert isinstance(arg, types.Position)
        context = types.CodeActionContext(diagnostics=list(client.diagnostics.get(uri, [])))
        actions = await client.text_document_code_action_async(
            types.CodeActionParams(ident, types.Range(arg, arg), context)
        )
        for action in actions or []:
            if isinstance(action, types.CodeAction) and action.edit is None:
                await client.code_action_resolve_async(action)
    else:
        params = {"textDocument": {"uri": uri}, "position": {"line": arg, "character": 0}}
        with pytest.raises(JsonRpcException) as error:
            await send_raw(client, types.TEXT_DOCUMENT_HOVER, params, ANSWER_TIMEOUT)
        assert error.value.code == -32602, error.value


class Published:
    """The last diagnostics published for each document, and a way to wait for a version."""

    def __init__(self, client: LanguageClient) -> None:
        self.latest: dict[str, types.PublishDiagnosticsParams] = {}
        self.changed = asyncio.Condition()
        handle = client.protocol._handle_notification

        def recording(method: str, params: object) -> None:
            handle(method, params)
            if method == types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS:
                assert isinstance(params, types.PublishDiagnosticsParams)
                self.latest[params.uri] = params
                asyncio.get_running_loop().create_task(self._notify())

        client.protocol._handle_notification = recording  # type: ignore[method-assign]

    async def _notify(self) -> None:
        async with self.changed:
            self.changed.notify_all()

    async def version(self, uri: str, version: int) -> list[types.Diagnostic]:
        async with self.changed:
            await self.changed.wait_for(lambda: uri in self.latest and self.latest[uri].version == version)
        return list(self.latest[uri].diagnostics)


async def _scenario(
    client: LanguageClient, published: Published, uri: str, first: str, steps: list[tuple[str, object]]
) -> str:
    text, version = first, 1
    open_doc(client, uri, text)
    for kind, arg in steps:
        if kind == "replace":
            assert isinstance(arg, str)
            text, version = arg, version + 1
            change = types.TextDocumentContentChangeWholeDocument(text=text)
        elif kind == "insert":
            pos, new = arg  # type: ignore[misc]
            at = _clamp(text, pos)
            edit = types.TextEdit(types.Range(at, at), new)
            text, version = apply_text_edits(text, [edit]), version + 1
            change = types.TextDocumentContentChangePartial(range=edit.range, text=new)  # type: ignore[assignment]
        else:
            await asyncio.wait_for(_request(client, uri, kind, arg), ANSWER_TIMEOUT)
            continue
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri, version=version), content_changes=[change]
            )
        )
    final = await asyncio.wait_for(published.version(uri, version), ANSWER_TIMEOUT)
    # nothing older arrives after it: a request answered after the server read everything
    await asyncio.wait_for(_request(client, uri, "pull", None), ANSWER_TIMEOUT)
    assert published.latest[uri].version == version and list(published.latest[uri].diagnostics) == final
    return text


async def test_every_request_is_answered_and_final_diagnostics_match(
    client: LanguageClient, workspace: Path
) -> None:
    loop = asyncio.get_running_loop()
    engine = make_engine(("cpu", "tpu"))
    counter = itertools.count()
    published = Published(client)

    @settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(first=TEXT, steps=STEPS)
    def run(first: str, steps: list[tuple[str, object]]) -> None:
        path = workspace / f"doc{next(counter)}.py"
        uri = path.as_uri()
        future = asyncio.run_coroutine_threadsafe(_scenario(client, published, uri, first, steps), loop)
        text = future.result(timeout=ANSWER_TIMEOUT * (len(steps) + 2))
        expected = engine.check(text, str(path), sparse=True).findings
        assert [(d.code, d.range.start.line) for d in published.latest[uri].diagnostics] == [
            (f.code, f.span.line - 1) for f in expected
        ], text

    await asyncio.to_thread(run)
