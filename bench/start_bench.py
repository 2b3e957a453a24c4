"""Start-up and memory beside jedi-language-server, round by round in one run.

    .venv/bin/pip install -e ".[bench]"     # jedi-language-server, the peer
    .venv/bin/python bench/start_bench.py [--rounds 5]

What a user waits for after opening a file that calls ``lax.psend``:

- jaxtarget: process start -> the first ``publishDiagnostics`` of that file;
- jedi-language-server: process start -> the answer to a hover on ``psend`` (its
  signature and docstring, read from the installed jax).

Both run in this interpreter, on the same file, in a folder of their own. *Cold*: a
fresh cache folder (``XDG_CACHE_HOME``) for each start, so jedi and parso parse jax from
source and jaxtarget has no cache of resolved names; *warm*: the same folder again,
after a first start filled it. Each round starts both, in alternating order, and the
ratio is taken within the round. Then each server opens 100 files of the installed jax
package and its resident memory (VmRSS of the server process) is read once every file
has its diagnostics, on the first start that sees those files (jaxtarget resolves their
names through jedi) and on a later one (its names come from the store).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import math
import os
import select
import shutil
import signal
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

SOURCE = "from jax import lax\n\n\ndef send(x):\n    return lax.psend(x, 'i', [(0, 1)])\n"
HOVER_AT = types.Position(4, 16)  # on `psend`


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


class Session:
    """One server process driven by a pygls client, with a future per expected publish."""

    def __init__(self, command: list[str], cache: Path, folder: Path) -> None:
        self.command = command
        self.cache = cache
        self.folder = folder
        self.client = LanguageClient("jaxtarget-bench", "1")
        self.published: dict[str, asyncio.Future[float]] = {}
        self.findings: dict[str, int] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.findings[params.uri] = len(params.diagnostics)
            fut = self.published.get(params.uri)
            if fut is not None and not fut.done():
                fut.set_result(time.perf_counter())

        @self.client.feature(types.WINDOW_LOG_MESSAGE)
        def on_log(params: types.LogMessageParams) -> None:
            pass

        @self.client.feature(types.WINDOW_SHOW_MESSAGE)
        def on_show(params: types.ShowMessageParams) -> None:
            pass

        @self.client.feature("jaxtarget/status")
        def on_status(params: object) -> None:
            pass

    async def start(self) -> float:
        env = {**os.environ, "XDG_CACHE_HOME": str(self.cache)}
        started = time.perf_counter()
        await self.client.start_io(*self.command, env=env, start_new_session=True)
        await self.client.initialize_async(
            types.InitializeParams(
                capabilities=types.ClientCapabilities(
                    text_document=types.TextDocumentClientCapabilities(
                        hover=types.HoverClientCapabilities(content_format=[types.MarkupKind.Markdown])
                    )
                ),
                root_uri=self.folder.as_uri(),
                workspace_folders=[types.WorkspaceFolder(self.folder.as_uri(), "bench")],
            )
        )
        self.client.initialized(types.InitializedParams())
        return started

    @property
    def pid(self) -> int:
        server = self.client._server
        assert server is not None
        return server.pid

    def expect(self, uri: str) -> asyncio.Future[float]:
        fut: asyncio.Future[float] = asyncio.get_running_loop().create_future()
        self.published[uri] = fut
        return fut

    def open(self, path: Path, text: str) -> str:
        uri = path.as_uri()
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, text))
        )
        return uri

    async def stop(self) -> None:
        """Shut the server down; one that does not end on ``exit`` is killed with its children.

        (jedi-language-server 0.47 answers ``shutdown`` but does not end on ``exit``, and
        a child of it keeps the pipe open.) How long a server takes to go is not measured here.
        """
        server = self.client._server
        try:
            await asyncio.wait_for(self.client.shutdown_async(None), 5)
            self.client.exit(None)
            if server is not None:
                await asyncio.wait_for(server.wait(), 5)
        except TimeoutError:
            pass
        if server is not None and server.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(server.pid, signal.SIGKILL)
        try:
            await asyncio.wait_for(self.client.stop(), 5)
        except TimeoutError:
            for task in self.client._async_tasks:
                task.cancel()
        if server is not None:
            server._transport.close()  # type: ignore[attr-defined]  # now, while the loop runs


def jaxtarget_command() -> list[str]:
    return [sys.executable, "-m", "jaxtarget", "lsp"]


def jls_command() -> list[str]:
    exe = Path(sys.executable).with_name("jedi-language-server")
    if not exe.exists():
        sys.exit('jedi-language-server is not installed: .venv/bin/pip install -e ".[bench]"')
    return [str(exe)]


def workspace(root: Path, name: str) -> Path:
    folder = root / name
    folder.mkdir()
    (folder / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["cpu"]\n')
    (folder / "send.py").write_text(SOURCE)
    return folder


async def jaxtarget_first(cache: Path, folder: Path) -> float:
    """Seconds from process start to the first diagnostics of send.py."""
    session = Session(jaxtarget_command(), cache, folder)
    path = folder / "send.py"
    fut = session.expect(path.as_uri())
    started = await session.start()
    session.open(path, SOURCE)
    done = await asyncio.wait_for(fut, 300)
    assert session.findings[path.as_uri()] >= 1, session.findings  # the psend findings, not an empty publish
    await session.stop()
    return done - started


async def jls_hover(cache: Path, folder: Path) -> float:
    """Seconds from process start to jedi-language-server's hover answer on psend."""
    session = Session(jls_command(), cache, folder)
    path = folder / "send.py"
    started = await session.start()
    uri = session.open(path, SOURCE)
    hover = await asyncio.wait_for(
        session.client.text_document_hover_async(
            types.HoverParams(types.TextDocumentIdentifier(uri), HOVER_AT)
        ),
        300,
    )
    done = time.perf_counter()
    assert hover is not None and "psend" in str(hover.contents), hover
    await session.stop()
    return done - started


def spread(values: list[float]) -> str:
    ms = sorted(v * 1000 for v in values)
    return f"min {ms[0]:7.0f}  median {statistics.median(ms):7.0f}  max {ms[-1]:7.0f} ms"


async def starts(root: Path, rounds: int) -> None:
    runners: dict[str, Callable[[Path, Path], object]] = {"jaxtarget": jaxtarget_first, "jls": jls_hover}
    folders = {name: workspace(root, name) for name in runners}
    for mode in ("cold", "warm"):
        times: dict[str, list[float]] = {name: [] for name in runners}
        warm_cache = {name: root / f"warm-{name}" for name in runners}
        if mode == "warm":
            for name, run in runners.items():
                await run(warm_cache[name], folders[name])  # type: ignore[operator]
        for i in range(rounds):
            order = list(runners) if i % 2 == 0 else list(reversed(runners))
            for name in order:
                fresh = Path(tempfile.mkdtemp(dir=root, prefix="cold-")) if mode == "cold" else None
                cache = fresh or warm_cache[name]
                times[name].append(await runners[name](cache, folders[name]))  # type: ignore[misc]
                if mode == "cold":
                    shutil.rmtree(cache)
        ratios = [a / b for a, b in zip(times["jaxtarget"], times["jls"], strict=True)]
        print(f"\n{mode}: start -> answer, {rounds} rounds")
        print(f"  jaxtarget first diagnostics   {spread(times['jaxtarget'])}")
        print(f"  jedi-language-server hover    {spread(times['jls'])}")
        print(
            f"  ratio by round                min {min(ratios):.2f}  median {statistics.median(ratios):.2f}"
            f"  max {max(ratios):.2f}   (goal <= {'1.5' if mode == 'cold' else '1.0'})"
        )


def jax_files(count: int) -> list[Path]:
    import jax

    root = Path(jax.__file__).parent
    return sorted(root.rglob("*.py"))[:count]


def descendants(pid: int) -> list[int]:
    """The process's children, their children, and so on."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        with contextlib.suppress(OSError):
            for child in (task / "children").read_text().split():
                found += [int(child), *descendants(int(child))]
    return found


def family_mb(pid: int) -> float:
    """Resident memory of a process and all its descendants (one that has ended counts nothing)."""
    total = rss_mb(pid)
    for child in descendants(pid):
        with contextlib.suppress(OSError):
            mb = rss_mb(child)
            total += 0.0 if math.isnan(mb) else mb
    return total


def wait_for_idle_children(pid: int, timeout: float = 120) -> None:
    """Wait until the server's children have ended: jaxtarget's start-up environment probe, and
    its resolution child, stopped once idle (jedi-language-server's child stays)."""
    for child in descendants(pid):
        try:
            if b"jaxtarget" not in Path(f"/proc/{child}/cmdline").read_bytes():
                continue
            ended = os.pidfd_open(child)
        except OSError:
            continue  # gone already
        try:
            select.select([ended], [], [], timeout)
        finally:
            os.close(ended)


async def open_all(session: Session, files: list[Path]) -> tuple[float, float, float]:
    """Open every file, wait for each one's diagnostics, and read the resident memory: the
    server's, the server's with its children's, and that again once its children are idle."""
    await session.start()
    waiting = []
    for path in files:
        waiting.append(session.expect(path.as_uri()))
        session.open(path, path.read_text(encoding="utf-8"))
    await asyncio.wait_for(asyncio.gather(*waiting), 600)
    alone, family = rss_mb(session.pid), family_mb(session.pid)
    await asyncio.to_thread(wait_for_idle_children, session.pid)
    idle = family_mb(session.pid)
    await session.stop()
    return alone, family, idle


async def memory(root: Path, count: int) -> None:
    """Twice per server, on the same cache folder: the first start that sees these files, then a later one."""
    files = jax_files(count)
    figures: dict[str, list[tuple[float, float, float]]] = {}
    for name, command in (("jaxtarget", jaxtarget_command()), ("jls", jls_command())):
        cache = root / f"memory-{name}"
        sessions = [Session(command, cache, workspace(root, f"mem-{name}-{i}")) for i in range(2)]
        figures[name] = [await open_all(session, files) for session in sessions]
    print(f"\nresident memory after opening {len(files)} files of the installed jax (MB)")
    print("  the server alone | with its child processes | with them once idle (a resolution child stopped)")
    for i, when in enumerate(("first start on these files", "a later start")):
        jt, jls = figures["jaxtarget"][i], figures["jls"][i]
        ours = " | ".join(f"{mb:4.0f}" for mb in jt)
        theirs = " | ".join(f"{mb:4.0f}" for mb in jls)
        ratios = " | ".join(f"{a / b:.2f}" for a, b in zip(jt, jls, strict=True))
        print(f"  {when:27} jaxtarget {ours}   jls {theirs}")
        print(f"  {'':27} ratio {ratios}   (goal <= 1.2)")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--files", type=int, default=100)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="jaxtarget-start-"))
    try:
        import jax
        import jedi_language_server

        print(f"Python {sys.version.split()[0]}, jax {jax.__version__}, {os.cpu_count()} cores")
        print(f"jedi-language-server {getattr(jedi_language_server, '__version__', '?')}")
        await starts(root, args.rounds)
        await memory(root, args.files)
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    asyncio.run(main())
