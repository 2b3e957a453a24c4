"""The language server: thin pygls 2 handlers over the engine."""

from __future__ import annotations

import asyncio
import contextvars
import logging
import time
import uuid
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import to_fs_path
from pygls.workspace import PositionCodec, TextDocument

from .. import __version__
from ..analysis import Analysis, Engine, Finding
from ..config import Layer, Problem, Settings, parse_editor_settings, resolve
from ..config import load_project as _load_project
from ..fixes import fix_all, fixes_for
from ..parsing import ChunkCache
from ..probe import ProbeError, ProbeResult, run_probe_async, verdict_line
from ..project import Engines, interpreter_of
from ..resolution import InterpreterError
from . import convert
from .hover import hover_markdown

log = logging.getLogger("jaxtarget")

DEBOUNCE_SECONDS = 0.15
FIX_ALL_KIND = "source.fixAll.jaxtarget"
COMMAND_PROBE = "jaxtarget.probeBackend"
COMMAND_CONFIG = "jaxtarget.showConfiguration"


@dataclass
class _Checked:
    version: int | None
    analysis: Analysis
    engine: Engine
    path: str | None


#: The JSON-RPC id of the request being handled (commands run in tasks of their own).
_REQUEST_ID: contextvars.ContextVar[object] = contextvars.ContextVar("jaxtarget_request_id", default=None)


class _Protocol(LanguageServerProtocol):
    """Makes `$/cancelRequest` reach command handlers, which pygls runs as separate tasks."""

    def _handle_request(self, msg_id: Any, method_name: str, params: Any) -> None:
        token = _REQUEST_ID.set(msg_id)
        try:
            super()._handle_request(msg_id, method_name, params)
        finally:
            _REQUEST_ID.reset(token)

    def _handle_cancel_notification(self, msg_id: Any) -> None:
        server = self._server
        if isinstance(server, JaxTargetServer):
            task = server.cancellable.pop(msg_id, None)
            if task is not None:
                task.cancel()
        super()._handle_cancel_notification(msg_id)


class JaxTargetServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("jaxtarget", __version__, protocol_cls=_Protocol)
        self.cancellable: dict[object, asyncio.Task[Any]] = {}
        self.engines = Engines()
        self.init_layer = Layer()
        self.folder_layers: dict[str, Layer] = {}
        self.checked: dict[str, _Checked] = {}
        self.pending: dict[str, asyncio.Task[None]] = {}
        self.last_change: dict[str, float] = {}
        self.probes: dict[str, tuple[float, ProbeResult]] = {}
        self.chunk_caches: dict[str, ChunkCache] = {}
        self.log_threshold = types.MessageType.Info
        self.init_problems: list[Problem] = []
        self.warned: set[str] = set()
        # jedi is not thread-safe: one worker thread does all analysis
        self.analysis_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="jaxtarget-analysis")

    # ------------------------------------------------------------ logging and messages

    def log(self, message: str, level: types.MessageType = types.MessageType.Info) -> None:
        log.info(message)
        if level.value <= self.log_threshold.value:
            self.window_log_message(types.LogMessageParams(type=level, message=message))

    def report_server_error(self, error: Exception, source: Any) -> None:
        self.log(
            f"internal error ({source.__name__ if hasattr(source, '__name__') else source}): {error!r}",
            types.MessageType.Error,
        )

    def warn_problems(self, problems: list[Problem] | tuple[Problem, ...]) -> None:
        for problem in problems:
            text = str(problem)
            self.log(f"configuration: {text}; using the default", types.MessageType.Warning)
            if text not in self.warned:
                self.warned.add(text)
                self.window_show_message(
                    types.ShowMessageParams(
                        type=types.MessageType.Warning,
                        message=f"jaxtarget: {text}; using the default",
                    )
                )

    # ------------------------------------------------------------ settings

    def folder_of(self, uri: str) -> str | None:
        best: str | None = None
        for folder in self.workspace.folders:
            if uri.startswith(folder.rstrip("/") + "/") and (best is None or len(folder) > len(best)):
                best = folder
        return best

    def settings_for(self, uri: str) -> Settings:
        folder = self.folder_of(uri)
        path = to_fs_path(uri)
        stop = Path(to_fs_path(folder) or "") if folder else None
        project = _load_project(Path(path), stop) if path else None
        layers = [project.layer] if project else []
        if project and project.problems:
            self.warn_problems(project.problems)
        layers += [self.init_layer, self.folder_layers.get(folder or "", Layer())]
        return resolve(*layers, pyproject=str(project.path) if project and project.path else None)

    async def fetch_configuration(self) -> None:
        caps = self.client_capabilities.workspace
        if not (caps and caps.configuration):
            return
        folders = list(self.workspace.folders) or [None]
        items = [types.ConfigurationItem(scope_uri=f, section="jaxtarget") for f in folders]
        try:
            values = await self.workspace_configuration_async(types.ConfigurationParams(items=items))
        except Exception as exc:
            self.log(f"workspace/configuration failed: {exc!r}", types.MessageType.Warning)
            return
        for folder, value in zip(folders, values, strict=False):
            layer, problems = parse_editor_settings(value, f"settings ({folder or 'global'})")
            self.warn_problems(problems)
            self.folder_layers[folder or ""] = layer
        self.engines.forget()

    # ------------------------------------------------------------ diagnostics

    def engine_for(self, uri: str) -> Engine:
        return self.engines.engine(self.settings_for(uri))

    def analyse(self, doc: TextDocument) -> _Checked:
        engine = self.engine_for(doc.uri)
        path = to_fs_path(doc.uri)
        cache = self.chunk_caches.setdefault(doc.uri, {})
        analysis = engine.check(doc.source, path, sparse=True, cache=cache)
        return _Checked(doc.version, analysis, engine, path)

    async def analyse_async(self, doc: TextDocument) -> _Checked:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.analysis_pool, self.analyse, doc)

    def schedule(self, uri: str, immediate: bool = False) -> None:
        now = time.monotonic()
        previous = self.pending.pop(uri, None)
        busy = previous is not None and not previous.done()
        if previous is not None:
            previous.cancel()
        recent = now - self.last_change.get(uri, 0.0) < DEBOUNCE_SECONDS
        self.last_change[uri] = now
        delay = 0.0 if immediate or not (busy or recent) else DEBOUNCE_SECONDS
        self.pending[uri] = asyncio.get_running_loop().create_task(self._check_later(uri, delay))

    async def _check_later(self, uri: str, delay: float) -> None:
        if delay:
            await asyncio.sleep(delay)
        try:
            doc = self.workspace.get_text_document(uri)
        except Exception:
            return
        try:
            checked = await self.analyse_async(doc)
        except InterpreterError as exc:
            self.warn_problems([Problem("settings", "interpreter", str(exc))])
            return
        current = self.workspace.text_documents.get(uri)
        if current is None or current.version != checked.version:
            return  # stale: a newer version is on its way
        self.checked[uri] = checked
        self.publish(uri, doc, checked)
        self.log(
            f"checked {uri} v{checked.version}: {len(checked.analysis.findings)} findings",
            types.MessageType.Log,
        )

    def publish(self, uri: str, doc: TextDocument, checked: _Checked) -> None:
        diagnostics = self.diagnostics_of(doc, checked)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=checked.version)
        )

    def diagnostics_of(self, doc: TextDocument, checked: _Checked) -> list[types.Diagnostic]:
        codec, lines = doc.position_codec, doc.lines
        return [convert.diagnostic(codec, lines, doc.uri, f) for f in checked.analysis.findings]

    def refresh_all(self) -> None:
        self.engines.forget()
        for uri in list(self.workspace.text_documents):
            self.schedule(uri, immediate=True)
        caps = self.client_capabilities.workspace
        if caps and caps.diagnostics and caps.diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)

    async def current(self, uri: str) -> tuple[TextDocument, _Checked]:
        doc = self.workspace.get_text_document(uri)
        checked = self.checked.get(uri)
        if checked is None or checked.version != doc.version:
            checked = await self.analyse_async(doc)
        return doc, checked

    # ------------------------------------------------------------ probe

    def cached_probe(self, python: str) -> ProbeResult | None:
        hit = self.probes.get(python)
        if hit is None:
            return None
        try:
            mtime = Path(python).stat().st_mtime
        except OSError:
            return None
        return hit[1] if hit[0] == mtime else None

    def remember_probe(self, python: str, result: ProbeResult) -> None:
        try:
            mtime = Path(python).stat().st_mtime
        except OSError:
            return
        if not result.data.get("cases") and python in self.probes:
            old = self.probes[python][1]
            if old.data.get("cases"):
                return  # keep the full result; the environment check adds nothing
        self.probes[python] = (mtime, result)
        backend = result.default_backend
        if backend and self.engines.backends.get(python) != backend:
            self.engines.backends[python] = backend
            # only documents whose targets include `auto` can change
            if any("auto" in self.settings_for(uri).target_backends for uri in self.workspace.text_documents):
                self.refresh_all()


SERVER = JaxTargetServer()

_LOG_LEVELS = {
    "error": types.MessageType.Error,
    "warning": types.MessageType.Warning,
    "info": types.MessageType.Info,
    "debug": types.MessageType.Log,
}


# ================================================================ lifecycle


@SERVER.feature(types.INITIALIZE)
def initialize(ls: JaxTargetServer, params: types.InitializeParams) -> None:
    options = params.initialization_options
    if isinstance(options, dict) and "jaxtarget" in options and isinstance(options["jaxtarget"], dict):
        options = options["jaxtarget"]
    layer, problems = parse_editor_settings(options, "initializationOptions")
    ls.init_layer = layer
    level = options.get("logLevel") if isinstance(options, dict) else None
    ls.log_threshold = _LOG_LEVELS.get(level if isinstance(level, str) else "info", types.MessageType.Info)
    ls.init_problems = problems


@SERVER.feature(types.INITIALIZED)
async def initialized(ls: JaxTargetServer, params: types.InitializedParams) -> None:
    ls.warn_problems(ls.init_problems)
    await ls.fetch_configuration()
    ls.refresh_all()
    asyncio.get_running_loop().create_task(_environment_probe(ls))


async def _environment_probe(ls: JaxTargetServer) -> None:
    """Resolve `auto` from the interpreter's real default backend, once, in the background."""
    settings = ls.settings_for("file:///")
    python = interpreter_of(settings)
    try:
        result = await run_probe_async(python, timeout=settings.probe.timeout_seconds, env_only=True)
    except (ProbeError, OSError) as exc:
        ls.log(f"environment probe of {python}: {exc}", types.MessageType.Info)
        return
    ls.log(
        f"environment probe of {python}: jax {result.jax_version}, default backend {result.default_backend}"
    )
    ls.remember_probe(python, result)


@SERVER.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
async def did_change_configuration(ls: JaxTargetServer, params: types.DidChangeConfigurationParams) -> None:
    settings = params.settings
    if isinstance(settings, dict) and isinstance(settings.get("jaxtarget"), dict):
        layer, problems = parse_editor_settings(settings["jaxtarget"], "settings")
        ls.warn_problems(problems)
        ls.init_layer = layer
    await ls.fetch_configuration()
    ls.refresh_all()


@SERVER.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
def did_change_watched_files(ls: JaxTargetServer, params: types.DidChangeWatchedFilesParams) -> None:
    if any(change.uri.endswith("pyproject.toml") for change in params.changes):
        ls.refresh_all()


# ================================================================ documents


@SERVER.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: JaxTargetServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri, immediate=True)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: JaxTargetServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.schedule(params.text_document.uri)


@SERVER.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: JaxTargetServer, params: types.DidSaveTextDocumentParams) -> None:
    if params.text_document.uri.endswith("pyproject.toml"):
        ls.refresh_all()
    elif params.text_document.uri in ls.workspace.text_documents:
        ls.schedule(params.text_document.uri, immediate=True)


@SERVER.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def did_close(ls: JaxTargetServer, params: types.DidCloseTextDocumentParams) -> None:
    uri = params.text_document.uri
    task = ls.pending.pop(uri, None)
    if task is not None:
        task.cancel()
    ls.checked.pop(uri, None)
    ls.chunk_caches.pop(uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


@SERVER.feature(
    types.TEXT_DOCUMENT_DIAGNOSTIC,
    types.DiagnosticOptions(
        identifier="jaxtarget", inter_file_dependencies=False, workspace_diagnostics=False
    ),
)
async def pull_diagnostics(
    ls: JaxTargetServer, params: types.DocumentDiagnosticParams
) -> types.RelatedFullDocumentDiagnosticReport:
    doc, checked = await ls.current(params.text_document.uri)
    return types.RelatedFullDocumentDiagnosticReport(items=ls.diagnostics_of(doc, checked))


# ================================================================ hover


@SERVER.feature(types.TEXT_DOCUMENT_HOVER)
async def hover(ls: JaxTargetServer, params: types.HoverParams) -> types.Hover | None:
    doc, checked = await ls.current(params.text_document.uri)
    line, col = convert.from_position(doc.position_codec, doc.lines, params.position)
    ref = checked.analysis.reference_at(line, col)
    if ref is None or ref.api is None:
        return None
    python = checked.engine.environment.python
    loop = asyncio.get_running_loop()
    text = await loop.run_in_executor(
        ls.analysis_pool,
        hover_markdown,
        checked.engine,
        ref,
        checked.analysis,
        ls.cached_probe(python),
    )
    return types.Hover(
        contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=text),
        range=convert.to_range(doc.position_codec, doc.lines, ref.span),
    )


# ================================================================ code actions


def _finding_for(
    checked: _Checked, codec: PositionCodec, lines: Sequence[str], diag: types.Diagnostic
) -> Finding | None:
    for f in checked.analysis.findings:
        if f.code == diag.code and convert.to_range(codec, lines, f.span).start == diag.range.start:
            return f
    return None


def _resolve_supported(ls: JaxTargetServer) -> bool:
    td = ls.client_capabilities.text_document
    ca = td.code_action if td else None
    return bool(ca and ca.resolve_support and "edit" in ca.resolve_support.properties)


@SERVER.feature(
    types.TEXT_DOCUMENT_CODE_ACTION,
    types.CodeActionOptions(
        code_action_kinds=[types.CodeActionKind.QuickFix, FIX_ALL_KIND], resolve_provider=True
    ),
)
async def code_action(ls: JaxTargetServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    uri = params.text_document.uri
    doc, checked = await ls.current(uri)
    codec, lines = doc.position_codec, doc.lines
    lazy = _resolve_supported(ls)
    only = params.context.only
    actions: list[types.CodeAction] = []
    version = checked.engine.version
    if not only or any(k.startswith(types.CodeActionKind.QuickFix) for k in only):
        for diag in params.context.diagnostics:
            if diag.source != convert.SOURCE:
                continue
            finding = _finding_for(checked, codec, lines, diag)
            if finding is None:
                continue
            for i, fix in enumerate(fixes_for(checked.analysis, finding, checked.path, version)):
                action = types.CodeAction(
                    title=fix.title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    is_preferred=fix.kind in ("guard", "ppermute") and i == 0,
                    data={
                        "uri": uri,
                        "version": doc.version,
                        "code": finding.code,
                        "line": finding.span.line,
                        "col": finding.span.col,
                        "index": i,
                    },
                )
                if not lazy:
                    action.edit = convert.workspace_edit(
                        uri, doc.version, convert.text_edits(codec, lines, fix.edits)
                    )
                actions.append(action)
    wants_fix_all = not only or any(FIX_ALL_KIND.startswith(k) for k in only)
    if wants_fix_all and any("guard" in f.rule.fixes for f in checked.analysis.findings):
        action = types.CodeAction(
            title="jaxtarget: guard every GPU-only call in this file",
            kind=FIX_ALL_KIND,
            data={"uri": uri, "version": doc.version, "fixAll": True},
        )
        if not lazy:
            action.edit = _fix_all_edit(ls, doc, checked)
        actions.append(action)
    return actions


def _fix_all_edit(ls: JaxTargetServer, doc: TextDocument, checked: _Checked) -> types.WorkspaceEdit:
    engine = checked.engine
    new = fix_all(
        doc.source, lambda text: engine.check(text, checked.path, sparse=True), checked.path, engine.version
    )
    return convert.workspace_edit(doc.uri, doc.version, convert.minimal_edit(doc.source, new))


@SERVER.feature(types.CODE_ACTION_RESOLVE)
async def code_action_resolve(ls: JaxTargetServer, action: types.CodeAction) -> types.CodeAction:
    data = action.data if isinstance(action.data, dict) else {}
    uri = data.get("uri")
    if not isinstance(uri, str):
        return action
    doc, checked = await ls.current(uri)
    if data.get("version") != doc.version:
        return action  # the document moved on: offer nothing rather than a wrong edit
    codec, lines = doc.position_codec, doc.lines
    if data.get("fixAll"):
        loop = asyncio.get_running_loop()
        action.edit = await loop.run_in_executor(ls.analysis_pool, _fix_all_edit, ls, doc, checked)
        return action
    for f in checked.analysis.findings:
        if f.code == data.get("code") and (f.span.line, f.span.col) == (
            data.get("line"),
            data.get("col"),
        ):
            fixes = fixes_for(checked.analysis, f, checked.path, checked.engine.version)
            index = data.get("index", 0)
            if isinstance(index, int) and index < len(fixes):
                edits = convert.text_edits(codec, lines, fixes[index].edits)
                action.edit = convert.workspace_edit(uri, doc.version, edits)
    return action


# ================================================================ commands


@SERVER.command(COMMAND_CONFIG)
def show_configuration(ls: JaxTargetServer, *args: Any) -> dict[str, Any]:
    folders = list(ls.workspace.folders) or []
    out: dict[str, Any] = {}
    for folder in folders or ["file:///"]:
        settings = ls.settings_for(folder.rstrip("/") + "/__jaxtarget__.py")
        engine = ls.engines.engine(settings)
        wire = settings.to_wire()
        wire["effectiveTargets"] = sorted(engine.targets)
        wire["python"] = engine.environment.python
        wire["jaxVersion"] = engine.environment.jax_version
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
    if not isinstance(python, str) or not python:
        python = interpreter_of(settings)
    token = str(uuid.uuid4())
    progress = bool(ls.client_capabilities.window and ls.client_capabilities.window.work_done_progress)
    if progress:
        await ls.work_done_progress.create_async(token)
        ls.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(
                title="JAX Target: probing backends", message=python, cancellable=False
            ),
        )
    request_id = _REQUEST_ID.get()
    task = asyncio.current_task()
    if request_id is not None and task is not None:
        ls.cancellable[request_id] = task
    try:
        result = await run_probe_async(python, timeout=settings.probe.timeout_seconds)
    except ProbeError as exc:
        message = f"jaxtarget probe failed: {exc}"
        ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Error, message=message))
        ls.log(message, types.MessageType.Error)
        return {"ok": False, "python": python, "error": {"kind": exc.kind, "message": str(exc)}}
    finally:
        ls.cancellable.pop(request_id, None)
        if progress:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
    summary = verdict_line(result)
    ls.window_show_message(types.ShowMessageParams(type=types.MessageType.Info, message=summary))
    ls.log(f"probe of {python}: {summary} ({result.seconds:.1f} s)")
    ls.remember_probe(python, result)
    return {"ok": True, "python": python, "summary": summary, "result": result.data}


def serve() -> None:
    logging.basicConfig(level=logging.WARNING)
    SERVER.start_io()


__all__ = ["SERVER", "JaxTargetServer", "serve"]
