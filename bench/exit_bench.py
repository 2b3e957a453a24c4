"""Language server: time from `exit` to the process having exited, after a document was analysed.

Starts the server over stdio, opens a module with findings, waits for its diagnostics and
a hover (so jedi has loaded jax), sends shutdown and exit, and measures how long the
process takes to end, by waiting on the process. Repeats a few times and prints each figure.

Run: python bench/exit_bench.py [ROUNDS]
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

SOURCE = 'from jax import lax\n\ny = lax.psend(x, "i", [(0, 1)])\n'


async def once(folder: Path) -> float:
    client = LanguageClient("jaxtarget-exit-bench", "1")
    published: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        if params.diagnostics and not published.done():
            published.set_result(None)

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        pass

    await client.start_io(sys.executable, "-m", "jaxtarget", "lsp")
    server = client._server
    assert server is not None
    await client.initialize_async(
        types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=folder.as_uri())
    )
    client.initialized(types.InitializedParams())
    uri = (folder / "m.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, SOURCE))
    )
    await asyncio.wait_for(published, 120)
    await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(2, 9))
    )
    await client.shutdown_async(None)
    client.exit(None)
    start = time.perf_counter()
    await asyncio.wait_for(server.wait(), 60)
    seconds = time.perf_counter() - start
    await client.stop()
    return seconds


async def main(rounds: int) -> None:
    folder = Path(tempfile.mkdtemp(prefix="jaxtarget-exit-"))
    (folder / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["cpu", "tpu"]\n')
    figures = [await once(folder) for _ in range(rounds)]
    shown = ", ".join(f"{s * 1000:.0f} ms" for s in figures)
    print(f"exit -> process ended, after analysis and hover: {shown}   (goal < 300 ms)")


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5))
