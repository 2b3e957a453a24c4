"""The server process ends promptly after shutdown and exit, whatever it is busy with.

Measured by waiting on the process itself (bench/exit_bench.py has the figure); the
bound is generous, so that only a server that stays alive for another reason fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

SOURCE = 'from jax import lax\n\ny = lax.psend(x, "i", [(0, 1)])\n'
EXIT_BOUND = 5.0


@contextlib.asynccontextmanager
async def _server(root: Path, options: dict[str, object] | None = None) -> AsyncIterator[LanguageClient]:
    client = LanguageClient("exit-test", "1")
    published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        pass

    @client.feature(types.WINDOW_SHOW_MESSAGE)
    def on_message(params: types.ShowMessageParams) -> None:
        pass

    await client.start_io(sys.executable, "-m", "jaxtarget", "lsp")
    client.published = published  # type: ignore[attr-defined]
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=root.as_uri(),
            initialization_options=options,
        )
    )
    client.initialized(types.InitializedParams())
    try:
        yield client
    finally:
        server = client._server
        if server is not None and server.returncode is None:
            server.kill()
        await client.stop()


async def _exit_and_wait(client: LanguageClient) -> int:
    server = client._server
    assert server is not None
    await client.shutdown_async(None)
    client.exit(None)
    try:
        return await asyncio.wait_for(server.wait(), EXIT_BOUND)
    except TimeoutError:
        pytest.fail(f"the server was still running {EXIT_BOUND:g} s after exit")


async def test_exits_after_analysing_and_hovering(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["cpu"]\n')
    async with _server(tmp_path) as client:
        uri = (tmp_path / "m.py").as_uri()
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, SOURCE))
        )
        params = await asyncio.wait_for(client.published.get(), 120)  # type: ignore[attr-defined]
        assert params.diagnostics
        hover = await client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(2, 9))
        )
        assert hover is not None
        assert await _exit_and_wait(client) == 0


async def test_exits_while_an_analysis_is_stuck(tmp_path: Path) -> None:
    # the interpreter jedi asks for its sys.path says it started, then hangs: the analysis
    # thread waits on it, and a server that joins its threads at exit would wait as long
    fifo = tmp_path / "started"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    python = tmp_path / "stuck-python"
    python.write_text(f'#!/bin/sh\necho "$$ $*" > "{fifo}"\nsleep 120\nexec "{sys.executable}" "$@"\n')
    python.chmod(0o755)
    options = {"targetBackends": ["cpu"], "interpreter": [str(python)]}
    lines: list[str] = []
    try:
        async with _server(tmp_path, options) as client:
            uri = (tmp_path / "m.py").as_uri()
            client.text_document_did_open(
                types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, SOURCE))
            )
            loop = asyncio.get_running_loop()
            jedi_started = loop.create_future()

            def readable() -> None:
                lines.extend(os.read(reader, 65536).decode().splitlines())
                if any("jedi" in line for line in lines) and not jedi_started.done():
                    jedi_started.set_result(None)

            loop.add_reader(reader, readable)
            try:
                await asyncio.wait_for(jedi_started, 120)  # the analysis thread is now stuck
            finally:
                loop.remove_reader(reader)
            assert await _exit_and_wait(client) == 0
    finally:
        with contextlib.suppress(BlockingIOError):
            lines.extend(os.read(reader, 65536).decode().splitlines())
        os.close(reader)
        for line in lines:  # the interpreter scripts this test started (analysis and probe)
            pid = line.split()[0] if line.split() else ""
            with contextlib.suppress(ProcessLookupError, ValueError):
                os.kill(int(pid), signal.SIGKILL)
