"""Resolution in a child process that stops when idle (semantics/resolve_worker.py).

The language server resolves through a ``WorkerResolver``: jedi runs in a child process,
so what jedi parses does not stay in the server's memory. Read here, with real jedi in a
real child process and the suite's jax:

- its answers are jedi's in this process: each spelling of an import, a name some jax
  release lacks, another library's homonym, a name bound two ways, the hover's signature
  and docstring;
- the child stops once idle and starts again when a name is new, and requests closer
  together than the idle time are served by one child; one killed meanwhile, or whose
  answer cannot be read, is replaced; what it resolved is in the resolved-name store, so
  a resolver started later answers from the store without a child; a description once
  given needs no child;
- where no child can answer (an interpreter jedi cannot use, none to start) nothing is
  resolved, nothing raises and nothing is kept;
- the engine reads the child's answers as jedi's (``resolved_by``), and the child of a
  language server ends with the server.

The child's output is buffered, as without ``PYTHONUNBUFFERED``.
"""

from __future__ import annotations

import asyncio
import os
import select
import signal
import sys
import time
from pathlib import Path

import pytest
from lsprotocol import types
from pygls.lsp.client import LanguageClient

from jaxtarget.config import Layer, resolve
from jaxtarget.engine import Engine
from jaxtarget.environment import load_environment
from jaxtarget.semantics.jedi_resolver import JediResolver
from jaxtarget.semantics.name_store import NameStore
from jaxtarget.semantics.resolve_worker import WorkerResolver
from jaxtarget.semantics.resolver import Binding, Query, Spot

WANTED = frozenset(
    {
        "jax.lax.psend",
        "jax.scipy.linalg.schur",
        "jax.numpy.linalg.eig",
        "jax.experimental.pallas.tpu.TPUCompilerParams",
    }
)
LACKING = frozenset({"jax.experimental.pallas.tpu.TPUCompilerParams"})
QUERIES = [
    Query(Binding("from", "jax", "lax", None), "lax.psend"),
    Query(Binding("import", "jax", None, None), "jax.lax.psend"),
    Query(Binding("import-as", "jax.scipy.linalg", None, "jsl"), "jsl.schur"),
    Query(Binding("from", "jax.numpy", "linalg", "la"), "la.eig"),
    Query(Binding("star", "jax.numpy.linalg", None, None), "eig"),
    Query(Binding("import", "numpy", None, None), "numpy.linalg.eig"),
    Query(Binding("from", "jax.experimental.pallas", "tpu", "pltpu"), "pltpu.TPUCompilerParams"),
    Query(Binding("from", "jax", "lax", None), "lax.ppermute"),
]
TWO_WAYS = """\
import os

if os.environ.get("SYMMETRIC"):
    from jax.numpy.linalg import eigh as eig
else:
    from jax.numpy.linalg import eig

eig(1)
"""
SPOTS = [Spot(8, 0, "jax.numpy.linalg.eig")]


@pytest.fixture(autouse=True)
def _buffered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The child's output buffered, as an interpreter started without PYTHONUNBUFFERED has it."""
    monkeypatch.delenv("PYTHONUNBUFFERED", raising=False)


def _store(folder: Path) -> NameStore:
    return NameStore(folder / "names.json", frozenset({"jax", "numpy"}))


def _exited(resolver: WorkerResolver) -> int | None:
    """Wait for the running child to exit (it is stopped by the idle timer); its exit status."""
    process = resolver._process
    return None if process is None else process.wait(timeout=60)


def test_answers_are_jedis_in_this_process() -> None:
    worker = WorkerResolver(None, None)
    try:
        here = JediResolver(None)
        expected = here.resolve(QUERIES, WANTED, LACKING)
        assert expected == [
            "jax.lax.psend",
            "jax.lax.psend",
            "jax.scipy.linalg.schur",
            "jax.numpy.linalg.eig",
            "jax.numpy.linalg.eig",
            None,
            "jax.experimental.pallas.tpu.TPUCompilerParams",
            None,
        ]
        assert worker.resolve(QUERIES, WANTED, LACKING) == expected
        assert worker.worker_pid is not None and worker.worker_pid != os.getpid()
        in_file = here.resolve_in_file(TWO_WAYS, None, SPOTS, WANTED, LACKING)
        assert (
            worker.resolve_in_file(TWO_WAYS, None, SPOTS, WANTED, LACKING)
            == in_file
            == ["jax.numpy.linalg.eig"]
        )
        described = here.describe("jax.scipy.linalg.schur")
        assert worker.describe("jax.scipy.linalg.schur") == described
        assert described[0].startswith("schur(") and described[1]
    finally:
        worker.close()


def test_the_child_stops_when_idle_and_is_started_again(tmp_path: Path) -> None:
    worker = WorkerResolver(None, _store(tmp_path), idle_seconds=0.2)
    try:
        assert worker.resolve(QUERIES[:1], WANTED) == ["jax.lax.psend"]
        first = worker.worker_pid
        assert first is not None
        assert _exited(worker) == 0
        assert worker.worker_pid is None
        # held answers need no child
        assert worker.resolve(QUERIES[:1], WANTED) == ["jax.lax.psend"]
        assert worker.worker_pid is None
        assert worker.resolve(QUERIES[2:3], WANTED) == ["jax.scipy.linalg.schur"]
        second = worker.worker_pid
        assert second is not None and second != first
        assert _exited(worker) == 0  # the next child stops when idle too
        assert worker.worker_pid is None
    finally:
        worker.close()


def _fresh(i: int) -> Query:
    """A query no resolver has answered: the module imported under a new name."""
    return Query(Binding("from", "jax", "lax", f"lax_{i}"), f"lax_{i}.psend")


def test_a_child_in_use_keeps_running(tmp_path: Path) -> None:
    """Requests closer together than the idle time are served by one child, which stops
    once they end."""
    worker = WorkerResolver(None, None, idle_seconds=1.5)
    try:
        assert worker.resolve([_fresh(0)], WANTED) == ["jax.lax.psend"]
        child = worker.worker_pid
        assert child is not None
        end = time.monotonic() + 4.0  # more than twice the idle time
        i = 1
        while time.monotonic() < end:
            assert worker.resolve([_fresh(i)], WANTED) == ["jax.lax.psend"]
            assert worker.worker_pid == child, i
            time.sleep(0.1)
            i += 1
        assert _exited(worker) == 0
    finally:
        worker.close()


def test_held_descriptions_and_unstored_modules(tmp_path: Path) -> None:
    # only numpy's queries are kept in this store: a jax query is asked of the child
    worker = WorkerResolver(None, NameStore(tmp_path / "names.json", frozenset({"numpy"})))
    try:
        assert worker.resolve(QUERIES[:1], WANTED) == ["jax.lax.psend"]
        described = worker.describe("jax.scipy.linalg.schur")
        assert described[0].startswith("schur(")
        worker.close()
        assert worker.describe("jax.scipy.linalg.schur") == described  # held: no child started
        assert worker.worker_pid is None and worker._process is None
    finally:
        worker.close()


def test_a_broken_pipe_is_a_new_child(tmp_path: Path) -> None:
    worker = WorkerResolver(None, None)
    try:
        assert worker.resolve([_fresh(0)], WANTED) == ["jax.lax.psend"]
        first = worker._process
        assert first is not None and first.stdout is not None
        first.stdout.close()  # the answer cannot be read: the request goes to a new child
        assert worker.resolve([_fresh(1)], WANTED) == ["jax.lax.psend"]
        assert worker.worker_pid not in (None, first.pid)
        assert first.poll() is not None  # the first one was stopped, not left behind
    finally:
        worker.close()


def test_without_a_child_nothing_is_resolved_and_nothing_raises(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # an interpreter jedi cannot use: the child ends at once, twice per request
    broken = WorkerResolver("/nonexistent/python", None)
    assert broken.resolve(QUERIES[:2], WANTED) == [None, None]
    assert broken.resolve_in_file(TWO_WAYS, None, SPOTS, WANTED) == [None]
    assert broken.describe("jax.scipy.linalg.schur") == ("", "")
    assert broken.worker_pid is None
    # no answer was kept: a working child answers the same queries later
    broken.python = None
    try:
        assert broken.resolve(QUERIES[:2], WANTED) == ["jax.lax.psend", "jax.lax.psend"]
    finally:
        broken.close()
    # no interpreter to start at all: said once in the log
    monkeypatch.setattr(sys, "executable", "/nonexistent/python")
    unstartable = WorkerResolver(None, None)
    assert unstartable.resolve(QUERIES[:1], WANTED) == [None]
    assert unstartable.describe("jax.lax.psend") == ("", "")
    assert "cannot start the resolution process" in caplog.text


def test_the_engine_reads_the_childs_answers_as_jedis() -> None:
    engine = Engine(resolve(Layer(target_backends=("tpu",))), load_environment(None, isolated=True))
    findings = engine.check("import jax\n\njax.scipy.linalg.schur(jax.numpy.eye(2))\n", None).findings
    assert [(f.code, f.span.line, f.resolved_by) for f in findings] == [("JT003", 3, "jedi")]


def test_a_killed_child_is_replaced(tmp_path: Path) -> None:
    worker = WorkerResolver(None, None)
    try:
        assert worker.resolve(QUERIES[:1], WANTED) == ["jax.lax.psend"]
        killed = worker.worker_pid
        assert killed is not None
        os.kill(killed, signal.SIGKILL)
        assert _exited(worker) == -signal.SIGKILL
        assert worker.resolve(QUERIES[2:4], WANTED) == ["jax.scipy.linalg.schur", "jax.numpy.linalg.eig"]
        assert worker.worker_pid not in (None, killed)
    finally:
        worker.close()


def test_what_the_child_resolved_is_stored_for_a_later_start(tmp_path: Path) -> None:
    worker = WorkerResolver(None, _store(tmp_path))
    try:
        expected = worker.resolve(QUERIES, WANTED, LACKING)
    finally:
        worker.close()
    later = WorkerResolver(None, _store(tmp_path))
    try:
        assert later.resolve(QUERIES, WANTED, LACKING) == expected
        assert later.worker_pid is None  # every answer came from the store
        assert later._process is None
    finally:
        later.close()


def _children(pid: int) -> set[int]:
    found: set[int] = set()
    for task in Path(f"/proc/{pid}/task").iterdir():
        found |= {int(c) for c in (task / "children").read_text().split()}
    return found


async def test_the_child_of_a_language_server_ends_with_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("JAXTARGET_CACHE_HOME", str(tmp_path / "cache"))  # no stored names: the child is asked
    (tmp_path / "pyproject.toml").write_text('[tool.jaxtarget]\ntargets = ["cpu"]\n')
    client = LanguageClient("worker-test", "1")
    published: asyncio.Queue[types.PublishDiagnosticsParams] = asyncio.Queue()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published.put_nowait(params)

    await client.start_io(sys.executable, "-m", "jaxtarget", "lsp")
    server = client._server
    assert server is not None
    try:
        await client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=tmp_path.as_uri())
        )
        client.initialized(types.InitializedParams())
        uri = (tmp_path / "m.py").as_uri()
        source = "from jax import lax\n\n\ndef send(x):\n    return lax.psend(x, 'i', [(0, 1)])\n"
        client.text_document_did_open(
            types.DidOpenTextDocumentParams(types.TextDocumentItem(uri, "python", 1, source))
        )
        params = await asyncio.wait_for(published.get(), 120)
        assert [d.code for d in params.diagnostics] == ["JT001", "JT002"]
        children = _children(server.pid)
        workers = [c for c in children if b"resolve_worker" in Path(f"/proc/{c}/cmdline").read_bytes()]
        assert len(workers) == 1, children
        ended = os.pidfd_open(workers[0])  # readable once the child has ended
        try:
            await client.shutdown_async(None)
            client.exit(None)
            await asyncio.wait_for(server.wait(), 30)
            # the child reads its requests from the server: it ends once the server's pipe closes
            readable, _, _ = select.select([ended], [], [], 30)
            assert readable == [ended]
        finally:
            os.close(ended)
    finally:
        if server.returncode is None:
            server.kill()
        await client.stop()
