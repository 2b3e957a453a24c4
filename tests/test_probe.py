"""The backend probe against real interpreters: real jax, a jax-free venv, broken ones."""

from __future__ import annotations

import asyncio
import json
import os
import select
import stat
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pygls.exceptions import JsonRpcException
from pytest_lsp import LanguageClient, client_capabilities

from jaxtarget.probe import ProbeError, run_probe

from .conftest import run_cli
from .lsp_helpers import SERVER

#: Only stops a broken test from hanging: far above how long a kill takes, and below the
#: 300 s the test children would run on their own, so "it ended" still means "it was killed".
HANG_GUARD = 120.0


def _script(tmp_path: Path, name: str, body: str) -> str:
    path = tmp_path / name
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def _pidfd(pid: int) -> int | None:
    """A pidfd for ``pid`` (readable once it has ended), or None if it is already gone."""
    try:
        return os.pidfd_open(pid)
    except ProcessLookupError:
        return None


def _wait_for_exit(pid: int) -> bool:
    """Wait for a process that is not our child to end (a zombie has ended too)."""
    fd = _pidfd(pid)
    if fd is None:
        return True
    try:
        ready, _, _ = select.select([fd], [], [], HANG_GUARD)
        return bool(ready)
    finally:
        os.close(fd)


async def _readable(fd: int) -> None:
    loop = asyncio.get_running_loop()
    ready = loop.create_future()
    loop.add_reader(fd, lambda: ready.done() or ready.set_result(None))
    try:
        await asyncio.wait_for(ready, HANG_GUARD)
    finally:
        loop.remove_reader(fd)


async def _exited(pid: int) -> bool:
    fd = _pidfd(pid)
    if fd is None:
        return True
    try:
        await _readable(fd)
    except asyncio.TimeoutError:
        return False
    finally:
        os.close(fd)
    return True


def test_real_jax_probe() -> None:
    result = run_probe(sys.executable, timeout=120)
    pair = result.data["cases"]["psend+precv"]
    for platform in ("cpu", "tpu"):
        assert pair[platform]["ok"] is False
        assert pair[platform]["error"] == {
            "type": "NotImplementedError",
            "message": "psend is currently only implemented on GPU",
        }
    assert pair["cuda"]["ok"] is True and pair["rocm"]["ok"] is True
    ppermute = result.data["cases"]["ppermute"]
    assert all(ppermute[p]["ok"] for p in ("cpu", "cuda", "rocm", "tpu"))
    run = ppermute["local_run"]
    assert run["ok"] and run["output"] == [0.0, 0.0, 0.0, 1.0]  # device 0's block moved to device 1
    assert result.data["jax"] and result.data["default_backend"] == "cpu"
    assert result.platforms == {"cpu": False, "cuda": True, "rocm": True, "tpu": False}


def test_cli_probe_json() -> None:
    out = run_cli("probe", "--python", sys.executable, "--format", "json")
    assert out.returncode == 0, out.stderr
    data = json.loads(out.stdout)
    assert data["cases"]["psend+precv"]["cuda"]["ok"] is True


def test_missing_and_non_executable_interpreters(tmp_path: Path) -> None:
    with pytest.raises(ProbeError) as missing:
        run_probe(str(tmp_path / "nope"))
    assert missing.value.kind == "interpreter-missing"
    plain = tmp_path / "python"
    plain.write_text("")
    with pytest.raises(ProbeError) as not_exec:
        run_probe(str(plain))
    assert not_exec.value.kind == "interpreter-not-executable"


def test_jax_not_installed(python_without_jax: str) -> None:
    with pytest.raises(ProbeError) as err:
        run_probe(python_without_jax, timeout=60)
    assert err.value.kind == "jax-missing"
    assert str(err.value) == f"jax is not installed in {python_without_jax}"


def test_hanging_interpreter_is_killed_with_its_group(tmp_path: Path) -> None:
    marker = tmp_path / "child.pid"
    finished = tmp_path / "grandchild.finished"
    # the grandchild keeps the probe's stdout open: run_probe only returns once it has ended,
    # and had it ended on its own (after 300 s) it would have left `finished` behind
    python = _script(tmp_path, "hang", f"(sleep 300; echo done > {finished}) &\necho $! > {marker}\nwait\n")
    with pytest.raises(ProbeError) as err:
        run_probe(python, timeout=1.5)
    assert err.value.kind == "timeout"
    pid = int(marker.read_text())
    # the grandchild died with the group (gone, or a zombie waiting for init to reap it)
    assert _wait_for_exit(pid), "the probe's grandchild outlived the timeout"
    assert not finished.exists()


@pytest.mark.parametrize(
    ("body", "kind"),
    [
        ("echo boom >&2\nexit 1\n", "crashed"),
        ("echo 'this is not json'\n", "bad-output"),
        ("head -c 6000000 /dev/zero | tr '\\0' x\n", "output-too-large"),
    ],
)
def test_broken_children(tmp_path: Path, body: str, kind: str) -> None:
    with pytest.raises(ProbeError) as err:
        run_probe(_script(tmp_path, "py", body), timeout=30)
    assert err.value.kind == kind


async def _initialize(
    client: LanguageClient, root: Path, profile: str, options: dict[str, object] | None = None
) -> None:
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(profile),
            root_uri=root.as_uri(),
            workspace_folders=[types.WorkspaceFolder(root.as_uri(), "w")],
            initialization_options=options,
        )
    )


@pytest_lsp.fixture(config=SERVER)
async def client(lsp_client: LanguageClient, tmp_path: Path):
    await _initialize(lsp_client, tmp_path, "visual-studio-code")
    yield
    await lsp_client.shutdown_session()


async def test_probe_command_over_lsp(client: LanguageClient) -> None:
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="jaxtarget.probeBackend", arguments=[{"python": sys.executable}])
    )
    assert result["ok"] is True
    assert result["summary"].startswith("cpu ✗ · cuda ✓ · rocm ✓ · tpu ✗ — jax ")
    assert result["result"]["cases"]["psend+precv"]["cpu"]["error"]["type"] == "NotImplementedError"
    kinds = [[type(v).__name__ for v in reports] for reports in client.progress_reports.values()]
    assert ["WorkDoneProgressBegin", "WorkDoneProgressEnd"] in kinds
    version = result["result"]["jax"]
    # the result names itself, with the portable fallback's
    assert result["headline"] == (
        f"JAX Target: psend+precv lower on cuda, rocm; not on cpu, tpu (jax {version}); ppermute lowers on all"
    )
    assert [m.message for m in client.messages if m.message.startswith("JAX Target:")] == [result["headline"]]
    # the full report, as `jaxtarget probe` prints it
    assert result["report"].startswith("python   ") and "\nppermute:\n  cpu   ✓ lowers" in result["report"]


async def test_a_quiet_probe_leaves_the_showing_to_the_client(client: LanguageClient) -> None:
    before = (len(client.messages), len(client.progress_reports))
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="jaxtarget.probeBackend", arguments=[{"python": sys.executable, "quiet": True}]
        )
    )
    assert result["ok"] is True and result["headline"].startswith("JAX Target: psend+precv")
    assert (len(client.messages), len(client.progress_reports)) == before


async def test_probe_command_failure_is_reported(client: LanguageClient, tmp_path: Path) -> None:
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(
            command="jaxtarget.probeBackend", arguments=[{"python": str(tmp_path / "none")}]
        )
    )
    assert result["ok"] is False and result["error"]["kind"] == "interpreter-missing"
    assert any(m.type == types.MessageType.Error for m in client.messages)


async def test_cancelling_the_probe_kills_the_child(client: LanguageClient, tmp_path: Path) -> None:
    # the child announces its pid through a FIFO: reading it is the event "the probe has started"
    fifo = tmp_path / "child.pid"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)  # on Linux this never blocks, nor the writer
    finished = tmp_path / "child.finished"
    python = _script(tmp_path, "slow", f"echo $$ > {fifo}\nsleep 300\necho done > {finished}\n")
    try:
        request = asyncio.ensure_future(
            client.protocol.send_request_async(
                types.WORKSPACE_EXECUTE_COMMAND,
                types.ExecuteCommandParams(command="jaxtarget.probeBackend", arguments=[{"python": python}]),
                msg_id="probe-to-cancel",
            )
        )
        await _readable(reader)
        pid = int(os.read(reader, 64).decode())
    finally:
        os.close(reader)
    client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id="probe-to-cancel"))
    with pytest.raises(JsonRpcException):
        await request  # answered "request cancelled"
    if not await _exited(pid):
        pytest.fail("the probe child outlived the cancelled request")
    assert not finished.exists()


async def test_cancelling_the_probes_progress_kills_the_child(client: LanguageClient, tmp_path: Path) -> None:
    """The progress is cancellable (Neovim's, VS Code's): cancelling it ends the probe and its child."""
    fifo = tmp_path / "child.pid"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    finished = tmp_path / "child.finished"
    python = _script(tmp_path, "slow", f"echo $$ > {fifo}\nsleep 300\necho done > {finished}\n")
    known = set(client.progress_reports)
    try:
        request = asyncio.ensure_future(
            client.workspace_execute_command_async(
                types.ExecuteCommandParams(command="jaxtarget.probeBackend", arguments=[{"python": python}])
            )
        )
        await _readable(reader)
        pid = int(os.read(reader, 64).decode())
    finally:
        os.close(reader)
    (token,) = set(client.progress_reports) - known
    (begin,) = client.progress_reports[token]
    assert isinstance(begin, types.WorkDoneProgressBegin) and begin.cancellable is True
    client.protocol.notify(types.WINDOW_WORK_DONE_PROGRESS_CANCEL, types.WorkDoneProgressCancelParams(token))
    result = await asyncio.wait_for(request, 60)
    assert result["ok"] is False and result["error"] == {
        "kind": "cancelled",
        "message": "cancelled by the user",
    }
    if not await _exited(pid):
        pytest.fail("the probe child outlived the cancelled progress")
    assert not finished.exists()


async def test_hover_shows_the_last_probe(client: LanguageClient, tmp_path: Path) -> None:
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="jaxtarget.probeBackend", arguments=[{"python": sys.executable}])
    )
    uri = (tmp_path / "h.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri, "python", 1, "from jax import lax\ny = lax.psend(x, 'i', p)\n")
        )
    )

    async def checked() -> None:  # the server has analysed the document once it publishes for it
        while uri not in client.diagnostics:
            await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)

    await asyncio.wait_for(checked(), HANG_GUARD)
    hover = await client.text_document_hover_async(
        types.HoverParams(types.TextDocumentIdentifier(uri), types.Position(1, 9))
    )
    assert hover is not None and isinstance(hover.contents, types.MarkupContent)
    (line,) = [p for p in hover.contents.value.split("\n\n") if p.startswith("**Your last probe**")]
    # the probe's verdict, without the interpreter's path
    assert line.endswith(result["summary"].split(" — ")[0]) and sys.executable not in line, line


def _gpu_looking_python(tmp_path: Path) -> str:
    """A real interpreter for jedi, whose probe answers as a CUDA machine would."""
    fake = json.dumps(
        {
            "schema": 1,
            "python": {"executable": "x", "version": "3"},
            "jax": "0.10.2",
            "default_backend": "gpu",
            "platform": "cuda",
            "devices": ["cuda:0"],
            "plugins": [],
        }
    )
    return _script(
        tmp_path,
        "gpu-python",
        f'if [ "$1" = "-E" ]; then cat >/dev/null; echo \'{fake}\'; exit 0; fi\nexec {sys.executable} "$@"\n',
    )


@pytest_lsp.fixture(config=SERVER)
async def auto_client(lsp_client: LanguageClient, tmp_path: Path):
    options = {"targetBackends": ["auto"], "interpreter": [_gpu_looking_python(tmp_path)]}
    await _initialize(lsp_client, tmp_path, "neovim@v0.9.1", options)
    yield
    await lsp_client.shutdown_session()


async def test_auto_targets_follow_the_probed_backend(auto_client: LanguageClient, tmp_path: Path) -> None:
    client = auto_client
    uri = (tmp_path / "auto.py").as_uri()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri, "python", 1, "from jax import lax\ny = lax.psend(x, 'i', p)\n")
        )
    )

    # before the environment probe answers, auto means cpu; afterwards it is the probed cuda
    async def cleared() -> None:
        while True:
            params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == uri and not [d for d in params.diagnostics if d.code == "JT001"]:
                return

    await asyncio.wait_for(cleared(), 60)
    config = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="jaxtarget.showConfiguration")
    )
    (folder,) = config.values()
    assert folder["effectiveTargets"] == ["cuda"]
