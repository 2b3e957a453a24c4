"""Language-server latency and memory on generated modules (5,000 lines unless ``--lines``).

Measures didChange -> publishDiagnostics latency (median and p95 over 50 edits,
each a keystroke-sized change after a pause longer than the debounce), then the
server's resident memory after opening 20 such files.

Run: python bench/lsp_bench.py [--lines N] [--uses N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

sys.path.insert(0, str(Path(__file__).parent))
from generate import module


class Client(LanguageClient):
    def __init__(self) -> None:
        super().__init__("jaxtarget-bench", "1")
        self.waiters: dict[tuple[str, int], asyncio.Future[float]] = {}


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def main(size: int, uses: int) -> None:
    client = Client()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        fut = client.waiters.pop((params.uri, params.version or 0), None)
        if fut is not None and not fut.done():
            fut.set_result(time.perf_counter())

    @client.feature(types.WINDOW_LOG_MESSAGE)
    def on_log(params: types.LogMessageParams) -> None:
        pass

    await client.start_io(sys.executable, "-m", "jaxtarget", "lsp")
    assert client._server is not None
    pid = client._server.pid
    folder = Path(tempfile.mkdtemp(prefix="jaxtarget-bench-"))
    (folder / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["cpu", "tpu"]\n')
    await client.initialize_async(
        types.InitializeParams(
            capabilities=types.ClientCapabilities(),
            root_uri=folder.as_uri(),
            workspace_folders=[types.WorkspaceFolder(folder.as_uri(), "bench")],
        )
    )
    client.initialized(types.InitializedParams())
    loop = asyncio.get_running_loop()

    def expect(uri: str, version: int) -> asyncio.Future[float]:
        fut: asyncio.Future[float] = loop.create_future()
        client.waiters[(uri, version)] = fut
        return fut

    source = module(size, uses)
    print(f"module: {size} lines, {uses} uses of psend/precv")
    uri = (folder / "m0.py").as_uri()
    started = time.perf_counter()
    first = expect(uri, 1)
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, source))
    )
    opened = await asyncio.wait_for(first, 120)
    print(f"open -> first diagnostics (cold, jedi caches empty): {(opened - started) * 1000:8.1f} ms")

    lines = source.splitlines(keepends=True)
    latencies = []
    for i in range(50):
        await asyncio.sleep(0.3)  # a pause longer than the debounce
        row = 100 + i * (size - 200) // 50  # inside a different function each time
        text = lines[row]
        col = len(text.rstrip("\n"))
        version = i + 2
        fut = expect(uri, version)
        sent = time.perf_counter()
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(version=version, uri=uri),
                content_changes=[
                    types.TextDocumentContentChangePartial(
                        range=types.Range(types.Position(row, col), types.Position(row, col)), text=" "
                    )
                ],
            )
        )
        done = await asyncio.wait_for(fut, 60)
        latencies.append((done - sent) * 1000)
    latencies.sort()
    p95 = latencies[int(len(latencies) * 0.95) - 1]
    print(
        f"didChange -> publishDiagnostics over 50 edits: median {statistics.median(latencies):.1f} ms, "
        f"p95 {p95:.1f} ms, max {latencies[-1]:.1f} ms   (goal at 50,000 lines: median <= 20 ms)"
    )

    for n in range(1, 20):
        other = (folder / f"m{n}.py").as_uri()
        fut = expect(other, 1)
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(other, "python", 1, module(size, uses).replace("block_", f"b{n}_"))
            )
        )
        await asyncio.wait_for(fut, 120)
    print(f"server RSS after opening 20 files of {size} lines: {rss_mb(pid):.0f} MB")
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--lines", type=int, default=5000)
    parser.add_argument("--uses", type=int, default=40)
    opts = parser.parse_args()
    asyncio.run(main(opts.lines, opts.uses))
