"""The server's commands (probe, effective configuration) and the start-up environment probe."""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from typing import Any

from lsprotocol import types

from ..effective import rows
from ..environment import InterpreterError, resolve_interpreter
from ..probe import Ask, ProbeError, format_summary, headline, run_probe_async, verdict_line
from ..project import interpreter_setting
from .state import COMMAND_CONFIG, COMMAND_PROBE, SERVER, JaxTargetServer

#: how long the environment probe waits for the first analysis before it runs anyway (seconds)
FIRST_ANALYSIS_WAIT = 10.0
#: how long the probe waits for the documents opened meanwhile to be analysed
BUSY_WAIT = 30.0


async def environment_probe(ls: JaxTargetServer) -> None:
    """Resolve `auto` from the interpreter's real default backend, once, in the background.

    The probe imports jax in a child process: it starts once the first analysis is done
    (or after ``FIRST_ANALYSIS_WAIT`` with nothing opened) and the documents opened with it
    are analysed too (or after ``BUSY_WAIT``), so that it never competes with their
    diagnostics for the cores, and its answer is not read in the middle of their analyses
    (memory the server takes then is not given back to the system). Until it answers,
    `auto` is read from the PJRT plugins installed.
    """
    if not ls.trusted:
        ls.log("the workspace is not trusted: the environment probe is not run", types.MessageType.Info)
        return
    with contextlib.suppress(asyncio.TimeoutError):  # nothing opened yet: probe now
        await asyncio.wait_for(ls.first_analysis.wait(), FIRST_ANALYSIS_WAIT)
    with contextlib.suppress(asyncio.TimeoutError):  # still busy: probe anyway
        await asyncio.wait_for(ls.analyses_settled(), BUSY_WAIT)
    ls.log("environment probe: started", types.MessageType.Log)
    settings = ls.settings_for("file:///")
    try:
        python = resolve_interpreter(interpreter_setting(settings))
        result = await run_probe_async(python, timeout=settings.probe_timeout_seconds, ask=Ask(env_only=True))
    except (InterpreterError, ProbeError, OSError) as exc:
        python = interpreter_setting(settings) or "the default interpreter"
        ls.log(f"environment probe of {python}: {exc}", types.MessageType.Info)
        return
    ls.log(
        f"environment probe of {python}: jax {result.jax_version}, default backend {result.default_backend}"
    )
    ls.remember_probe(python, result)


# ================================================================ commands


@SERVER.command(COMMAND_CONFIG)
def show_configuration(ls: JaxTargetServer, *args: Any) -> dict[str, Any]:
    """Per folder: the settings on the wire, the effective targets, and where each setting came from.

    ``sources`` lists every setting (the rows of `jaxtarget config`) with its layer:
    ``default``, ``pyproject.toml`` (the file in ``pyproject``) or ``editor settings``.
    """
    folders = list(ls.workspace.folders) or []
    out: dict[str, Any] = {}
    for folder in folders or ["file:///"]:
        uri = folder.rstrip("/") + "/__jaxtarget__.py"
        layers, _ = ls.layers_for(uri)
        settings = ls.settings_for(uri)
        engine = ls.engine_for(uri)
        wire = settings.to_wire()
        wire["effectiveTargets"] = sorted(engine.targets)
        wire["python"] = engine.environment.python
        wire["jaxVersion"] = engine.environment.jax_version
        wire["trusted"] = ls.trusted
        wire["sources"] = [
            {"key": r.key, "editor": r.editor, "value": r.value, "source": r.source}
            for r in rows(settings, layers)
        ]
        out[folder] = wire
    return out


@SERVER.command(COMMAND_PROBE)
async def probe_backend(ls: JaxTargetServer, *args: Any) -> dict[str, Any]:
    options = args[0] if args and isinstance(args[0], dict) else {}
    uri = options.get("uri") if isinstance(options.get("uri"), str) else None
    folders = list(ls.workspace.folders)
    settings = ls.settings_for(
        uri or (folders[0].rstrip("/") + "/__jaxtarget__.py" if folders else "file:///")
    )
    python = options.get("python")
    quiet = bool(options.get("quiet"))
    if not ls.trusted:
        error = ProbeError(
            "untrusted", "the probe runs an interpreter and is disabled in an untrusted workspace"
        )
        return _probe_failed(ls, python if isinstance(python, str) else "", error, quiet)
    if not isinstance(python, str) or not python:
        python = interpreter_setting(settings)
    try:
        python = resolve_interpreter(python)
    except InterpreterError as exc:
        return _probe_failed(ls, python or "", ProbeError(exc.kind, str(exc)), quiet)
    token = str(uuid.uuid4())
    capable = bool(ls.client_capabilities.window and ls.client_capabilities.window.work_done_progress)
    progress = capable and not quiet  # a quiet client shows its own
    if progress:
        await ls.work_done_progress.create_async(token)
        ls.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title="JAX Target: probing backends", message=python, cancellable=True
            ),
        )
    _cancel_with_request(ls)
    probe = asyncio.ensure_future(run_probe_async(python, timeout=settings.probe_timeout_seconds))
    stopped = _cancel_with_progress(ls, token, probe) if progress else None
    try:
        result = await probe
    except ProbeError as exc:
        return _probe_failed(ls, python, exc, quiet)
    except asyncio.CancelledError:
        if stopped is None or not stopped.is_set():
            raise  # the request itself was cancelled
        return _probe_failed(ls, python, ProbeError("cancelled", "cancelled by the user"), quiet=True)
    finally:
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    summary = verdict_line(result)
    named = headline(result)
    if not options.get("quiet"):  # a client that shows the result itself asks for quiet
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=named))
    ls.log(f"probe of {python}: {summary} ({result.seconds:.1f} s)")
    ls.remember_probe(python, result)
    return {
        "ok": True,
        "python": python,
        "summary": summary,
        "headline": named,
        "report": format_summary(result),
        "result": result.data,
    }


def _probe_failed(ls: JaxTargetServer, python: str, exc: ProbeError, quiet: bool = False) -> dict[str, Any]:
    message = f"jaxtarget probe failed: {exc}"
    if not quiet:
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))
    ls.log(message, types.MessageType.Error)
    return {"ok": False, "python": python, "error": {"kind": exc.kind, "message": str(exc)}}


def _cancel_with_progress(ls: JaxTargetServer, token: str, probe: asyncio.Future[Any]) -> asyncio.Event:
    """Stop the probe (and kill its child) when the user cancels its progress
    (``window/workDoneProgress/cancel``); the returned event says that it was so stopped."""
    stopped = asyncio.Event()
    future = ls.work_done_progress.tokens.get(token)
    loop = asyncio.get_running_loop()

    def stop() -> None:
        stopped.set()
        probe.cancel()

    if future is not None:
        future.add_done_callback(lambda f: loop.call_soon_threadsafe(stop) if f.cancelled() else None)
    return stopped


def _cancel_with_request(ls: JaxTargetServer) -> None:
    """Cancel the running command's task when the client cancels its request.

    pygls runs a command in a task of its own and cancels only the outer request
    future on `$/cancelRequest`; linking the two lets a cancel kill the probe child.
    """
    task = asyncio.current_task()
    outer = ls.protocol._request_futures.get(ls.protocol.msg_id) if ls.protocol.msg_id is not None else None
    if task is not None and outer is not None:
        outer.add_done_callback(lambda future: task.cancel() if future.cancelled() else None)
