"""The language server's state: settings per folder, engines, one record per open document."""

from __future__ import annotations

import asyncio
import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path
from pygls.workspace import TextDocument

from .. import __version__
from ..config import Layer, Problem, Settings, parse_editor_settings, resolve
from ..config import load_project as _load_project
from ..engine import Analysis, Engine
from ..environment import InterpreterError
from ..probe import ProbeResult
from ..project import Engines
from ..semantics.source import ChunkCache
from . import convert

log = logging.getLogger("jaxtarget")

DEBOUNCE_SECONDS = 0.15
FIX_ALL_KIND = "source.fixAll.jaxtarget"
COMMAND_PROBE = "jaxtarget.probeBackend"
COMMAND_CONFIG = "jaxtarget.showConfiguration"


@dataclass
class Checked:
    version: int | None
    analysis: Analysis
    engine: Engine
    path: str | None


@dataclass
class Document:
    """What the server holds for one open document."""

    checked: Checked | None = None
    pending: asyncio.Task[None] | None = None
    last_change: float = 0.0
    chunks: ChunkCache = field(default_factory=ChunkCache)


class JaxTargetServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("jaxtarget", __version__)
        self.engines = Engines()
        self.init_layer = Layer()
        self.folder_layers: dict[str, Layer] = {}
        self.documents: dict[str, Document] = {}
        self.probes: dict[str, tuple[float, ProbeResult]] = {}
        self.log_threshold = types.MessageType.Info
        self.init_problems: list[Problem] = []
        #: False in a workspace the client does not trust: nothing the workspace chose is run
        self.trusted = True
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

    def note_once(self, message: str) -> None:
        """Log ``message`` at warning level, once per session."""
        if message not in self.warned:
            self.warned.add(message)
            self.log(message, types.MessageType.Warning)

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
        if not self.trusted:
            # an untrusted workspace may not pick the interpreter (its pyproject.toml or its
            # settings); the client's own choice (initializationOptions) stands
            if project and project.layer.interpreter:
                self.note_once(
                    f"the workspace is not trusted: interpreter {list(project.layer.interpreter)} "
                    f"set in {project.path} is not run"
                )
            layers = [
                layer.without("interpreter") if layer is not self.init_layer else layer for layer in layers
            ]
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

    def analyse(self, doc: TextDocument) -> Checked:
        engine = self.engine_for(doc.uri)
        path = to_fs_path(doc.uri)
        cache = self.documents.setdefault(doc.uri, Document()).chunks
        analysis = engine.check(doc.source, path, sparse=True, cache=cache)
        return Checked(doc.version, analysis, engine, path)

    async def analyse_async(self, doc: TextDocument) -> Checked:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.analysis_pool, self.analyse, doc)

    def schedule(self, uri: str, immediate: bool = False) -> None:
        now = time.monotonic()
        state = self.documents.setdefault(uri, Document())
        previous, state.pending = state.pending, None
        busy = previous is not None and not previous.done()
        if previous is not None:
            previous.cancel()
        recent = now - state.last_change < DEBOUNCE_SECONDS
        state.last_change = now
        delay = 0.0 if immediate or not (busy or recent) else DEBOUNCE_SECONDS
        state.pending = asyncio.get_running_loop().create_task(self._check_later(uri, delay))

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
        state = self.documents.get(uri)
        if current is None or state is None or current.version != checked.version:
            return  # stale: a newer version is on its way, or the document was closed
        state.checked = checked
        self.publish(uri, doc, checked)
        self.log(
            f"checked {uri} v{checked.version}: {len(checked.analysis.findings)} findings",
            types.MessageType.Log,
        )

    def publish(self, uri: str, doc: TextDocument, checked: Checked) -> None:
        diagnostics = self.diagnostics_of(doc, checked)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics, version=checked.version)
        )

    def diagnostics_of(self, doc: TextDocument, checked: Checked) -> list[types.Diagnostic]:
        codec, lines = doc.position_codec, doc.lines
        return [
            convert.diagnostic(codec, lines, doc.uri, checked.version, f) for f in checked.analysis.findings
        ]

    def refresh_all(self) -> None:
        self.engines.forget()
        for uri in list(self.workspace.text_documents):
            self.schedule(uri, immediate=True)
        caps = self.client_capabilities.workspace
        if caps and caps.diagnostics and caps.diagnostics.refresh_support:
            self.workspace_diagnostic_refresh(None)

    async def current(self, uri: str) -> tuple[TextDocument, Checked]:
        doc = self.workspace.get_text_document(uri)
        state = self.documents.get(uri)
        checked = state.checked if state is not None else None
        if checked is None or checked.version != doc.version:
            checked = await self.analyse_async(doc)
            if state is not None:
                state.checked = checked
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
